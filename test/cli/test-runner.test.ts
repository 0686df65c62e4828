// `npm test` (scripts/test.mjs): `npm test -- FILE` runs that file only, a folder its test files,
// `--help` answers at once, a path that names no test is an error (never an empty pass), and
// the reporters stay the suite's: spec on standard error, TAP on standard output.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, ensureBuilt, root } from '../helpers/cli.js';

function runner(args: string[]) {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'test.mjs'), ...args], {
    cwd: root,
    env: cleanEnv({}),
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const passing = (name: string) => `import { test } from 'node:test';\ntest('${name}', () => {});\n`;

describe('npm test (scripts/test.mjs)', () => {
  let tmp: string;
  before(() => {
    ensureBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-runner-'));
    mkdirSync(join(tmp, 'suite', 'deeper'), { recursive: true });
    mkdirSync(join(tmp, 'empty'));
    writeFileSync(join(tmp, 'suite', 'one.test.ts'), passing('one'));
    writeFileSync(join(tmp, 'suite', 'deeper', 'two.test.ts'), passing('two'));
    writeFileSync(join(tmp, 'suite', 'helper.ts'), 'export const notATest = 1;\n');
    writeFileSync(join(tmp, 'failing.test.ts'), `import { test } from 'node:test';\ntest('fails', () => { throw new Error('no'); });\n`);
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('--help says how to run one file, at once', () => {
    const r = runner(['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /npm test -- test\/config\.test\.ts +build, run that file only/);
    assert.match(r.stdout, /TEST_DATABASE_URL/);
  });

  it('a file runs that file only: TAP on standard output, spec on standard error', () => {
    const r = runner([join(tmp, 'suite', 'one.test.ts')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# tests 1$/m);
    assert.match(r.stdout, /^ok 1 - one$/m);
    assert.match(r.stderr, /✔ one/);
    assert.doesNotMatch(r.stdout, /two/);
  });

  it('a folder runs every *.test.ts under it, and only those; a failure fails the run', () => {
    const r = runner([join(tmp, 'suite'), '--test-name-pattern=one|two']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# tests 2$/m);
    const failing = runner([join(tmp, 'failing.test.ts')]);
    assert.equal(failing.code, 1);
    assert.match(failing.stdout, /^# fail 1$/m);
  });

  it('a path with no test file, or an unknown option, is an error that says so: never an empty pass', () => {
    for (const [args, message] of [
      [['test/no-such.test.ts'], /no such file or folder: test\/no-such\.test\.ts/],
      [[join(tmp, 'empty')], /no \*\.test\.ts file under /],
      [['--only'], /unknown option --only \(options of node's test runner start with --test-\)/],
    ] as const) {
      const r = runner([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /see npm test -- --help/);
      assert.doesNotMatch(r.stdout, /# tests/);
    }
  });
});
