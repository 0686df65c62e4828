// The executable explains itself: --help, per-command --help (also `gatehouse help <command>`),
// --version; an unknown command or argument is a usage error that points to the help.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { configurationHelp, HELP_WIDTH, plain } from '../../src/cli/config-help.js';
import { main } from '../../src/cli/main.js';
import { KNOWN_VARIABLES, SETTING_ROWS } from '../../src/config.js';
import { PATIENCE_MS, ensureBuilt, exitOf, gatehouse, killAll, root } from '../helpers/cli.js';

/** The variables a help text lists (each entry starts "  NAME [default]"), in order. */
const listed = (help: string) => [...help.matchAll(/^ {2}([A-Z_]+) \[/gm)].map((m) => m[1]);

/** Every line fits an 80-column terminal. */
function assertFits(help: string): void {
  for (const line of help.split('\n')) assert.ok(line.length <= HELP_WIDTH, `longer than ${HELP_WIDTH} columns: ${JSON.stringify(line)}`);
}

/** main() in this process, what it writes for the person taken: for what needs no process of its
 *  own. (Not by replacing process.stdout.write: the test runner reports through it too.) */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await main(args, {
    out: (text) => {
      stdout += text;
    },
  });
  return { code, stdout };
}

async function run(args: string[], vars: Record<string, string> = {}) {
  const p = gatehouse(args, vars);
  const r = await exitOf(p, PATIENCE_MS);
  return { code: r.code, stdout: p.stdout(), stderr: p.stderr() };
}

describe('gatehouse help and version', () => {
  before(ensureBuilt);
  after(killAll);

  it('--help lists the commands, per-command help, --version, and where the settings are (not the settings themselves)', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await run(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.equal(r.stderr, '');
      assert.match(r.stdout, /^Usage:$/m);
      assert.match(r.stdout, /gatehouse serve/);
      assert.match(r.stdout, /gatehouse migrate/);
      assert.match(r.stdout, /gatehouse login --url URL/);
      assert.match(r.stdout, /gatehouse <command> --help/);
      assert.match(r.stdout, /gatehouse --version/);
      assert.match(r.stdout, /npx gatehouse/);
      // the settings are the server's: listed by serve --help, not under the client commands
      assert.deepEqual(listed(r.stdout), [], 'no setting is listed');
      assert.match(r.stdout, /gatehouse serve --help lists them all/);
      assert.match(r.stdout, /login, token, whoami and logout read none of them/);
      assert.ok(r.stdout.split('\n').length < 40, `a page, not ${r.stdout.split('\n').length} lines`);
      assertFits(r.stdout);
    }
  });

  it("a client command's --help lists only what it reads: none of the server's settings", async () => {
    for (const command of ['login', 'token', 'whoami', 'logout']) {
      for (const args of [
        [command, '--help'],
        ['help', command],
        ['--help', command],
      ]) {
        const out = await inProcess(args);
        assert.equal(out.code, 0, args.join(' '));
        assert.match(out.stdout, new RegExp(`^Usage:\\n {2}gatehouse ${command}`), args.join(' '));
        const settings = KNOWN_VARIABLES.filter((v) => new RegExp(`\\b${v}\\b`).test(out.stdout));
        assert.deepEqual(settings, [], `${args.join(' ')} lists no setting of the server`);
        assertFits(out.stdout);
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
      // every environment variable of the table of settings, each with its default and description
      assert.deepEqual(listed(r.stdout), [...KNOWN_VARIABLES]);
      for (const { setting } of SETTING_ROWS) {
        const entry = r.stdout.slice(r.stdout.indexOf(`\n  ${setting.variable} [`));
        assert.ok(entry.startsWith(`\n  ${setting.variable} [${plain(setting.shownDefault)}]`), `${setting.variable} with its default`);
        assert.ok(entry.replace(/\s+/g, ' ').includes(plain(setting.description).replace(/\s+/g, ' ')), `${setting.variable} with its description`);
      }
      assert.ok(r.stdout.endsWith(configurationHelp()));
      assertFits(r.stdout);
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
      assert.deepEqual(listed(r.stdout), ['DATABASE_URL', 'GATEHOUSE_DATA_DIR'], 'the settings migrate reads, from the table');
      assert.match(r.stdout, /^ {2}GATEHOUSE_DATA_DIR \[\.\/data\]$/m);
      assertFits(r.stdout);
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
