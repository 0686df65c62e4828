// `npx gatehouse …` from a checkout, as the README says to run it. The first npx in a checkout
// installs the checkout into npx's cache and runs its prepare script (the build) again: that
// must not rebuild or remove dist/ under a server that runs from it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, root } from '../helpers/cli.js';

const info = join(root, 'dist', 'build-info.json');

describe('npx gatehouse in a checkout', () => {
  let cache: string;
  before(() => {
    ensureBuilt();
    cache = mkdtempSync(join(tmpdir(), 'gatehouse-npx-cache-'));
  });
  after(() => rmSync(cache, { recursive: true, force: true }));

  it('the build does nothing when dist/ is current', () => {
    const built = statSync(info).mtimeMs;
    const run = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(statSync(info).mtimeMs, built);
  });

  it('a first npx (a cache that has never seen the checkout) runs the command and leaves dist/ as it was', () => {
    const built = statSync(info).mtimeMs;
    const run = spawnSync('npx', ['--yes', 'gatehouse', '--version'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
      timeout: 60_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /^gatehouse \d+\.\d+\.\d+ \(revision /);
    assert.equal(statSync(info).mtimeMs, built, 'dist/ was not rebuilt');
  });
});
