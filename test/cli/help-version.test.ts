// The executable explains itself: --help, per-command --help (also `gatehouse help <command>`),
// --version; an unknown command or argument is a usage error that points to the help.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KNOWN_VARIABLES } from '../../src/config.js';
import { PATIENCE_MS, ensureBuilt, exitOf, gatehouse, killAll, root } from '../helpers/cli.js';

async function run(args: string[], vars: Record<string, string> = {}) {
  const p = gatehouse(args, vars);
  const r = await exitOf(p, PATIENCE_MS);
  return { code: r.code, stdout: p.stdout(), stderr: p.stderr() };
}

describe('gatehouse help and version', () => {
  before(ensureBuilt);
  after(killAll);

  it('--help lists the commands, per-command help, --version and every configuration variable', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await run(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.equal(r.stderr, '');
      assert.match(r.stdout, /^Usage:$/m);
      assert.match(r.stdout, /gatehouse serve/);
      assert.match(r.stdout, /gatehouse migrate/);
      assert.match(r.stdout, /gatehouse <command> --help/);
      assert.match(r.stdout, /gatehouse --version/);
      assert.match(r.stdout, /npx gatehouse/);
      for (const name of KNOWN_VARIABLES) {
        // the bootstrap secret and password share a line with their id and e-mail ("…_CLIENT_ID / _CLIENT_SECRET")
        const shown = name.replace(/^GATEHOUSE_BOOTSTRAP(_CLIENT_SECRET|_ADMIN_PASSWORD)$/, '/ $1');
        assert.ok(r.stdout.includes(shown), `${name} is listed`);
      }
    }
  });

  for (const args of [
    ['serve', '--help'],
    ['serve', '-h'],
    ['help', 'serve'],
    ['--help', 'serve'],
  ]) {
    it(`${args.join(' ')} explains serve and its configuration, and starts nothing`, async () => {
      // an invalid configuration does not stand in the way of help
      const r = await run(args, { PORT: 'not-a-port' });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, /^Usage: gatehouse serve/);
      assert.match(r.stdout, /GATEHOUSE_METRICS_PORT/);
      assert.match(r.stdout, /GATEHOUSE_ENCRYPTION_KEY/);
      assert.match(r.stdout, /DATABASE_URL/);
      assert.doesNotMatch(r.stdout, /client_secret|gatehouse serving/);
    });
  }

  for (const args of [
    ['migrate', '--help'],
    ['help', 'migrate'],
  ]) {
    it(`${args.join(' ')} explains migrate`, async () => {
      const r = await run(args);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, /^Usage: gatehouse migrate/);
      assert.match(r.stdout, /DATABASE_URL/);
      assert.match(r.stdout, /GATEHOUSE_DATA_DIR/);
      assert.match(r.stdout, /no GATEHOUSE_ENCRYPTION_KEY/);
      assert.doesNotMatch(r.stdout, /applied|up to date/, 'nothing was migrated');
    });
  }

  it('--version prints the package version and the build', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    for (const args of [['--version'], ['-v']]) {
      const r = await run(args);
      assert.equal(r.code, 0);
      assert.equal(r.stderr, '');
      assert.match(r.stdout, new RegExp(`^gatehouse ${pkg.version.replace(/\./g, '\\.')} \\(revision ([0-9a-f]{7,12}|unknown), built \\d{4}-`));
      assert.equal(r.stdout.trim().split('\n').length, 1);
    }
  });

  it('an unknown command or argument is a usage error that points to the help', async () => {
    const unknown = await run(['serv']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command serv; see gatehouse --help/);
    const extra = await run(['migrate', 'now']);
    assert.equal(extra.code, 2);
    assert.match(extra.stderr, /unexpected argument now; see gatehouse migrate --help/);
  });
});
