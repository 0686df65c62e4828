// `gatehouse keys list|rotate|retire KID` (docs/operations.md, "Signing keys"), in this process:
// bad command lines through main() (one line, exit 2, a pointer to the help); on both engines the
// command on the database a server uses: refused on a database never served, refused while a
// server holds the embedded folder, then list, rotate, retire (without --yes it only says what it
// would do), audited as the operator (the OS user), and a key is never made with an encryption key the servers do
// not have. On PostgreSQL the server runs meanwhile and refuses the retired key's token at once.
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { keysCommand, keysCommandLine } from '../../src/cli/commands/keys.js';
import { main } from '../../src/cli/main.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { StartFailure } from '../../src/cli/failure-line.js';
import { loadConfig } from '../../src/config.js';
import { openDb } from '../../src/store/db.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.js';
import { migratedDataDir } from '../helpers/cli.js';
import { engines } from '../helpers/engines.js';

async function inProcess(args: string[]) {
  let stderr = '';
  let stdout = '';
  const code = await main(['keys', ...args], {
    env: {},
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

describe('gatehouse keys: the command line', () => {
  it('a key id that begins with "-" (base64url allows it) is the id, not an option, before or after --yes', () => {
    assert.deepEqual(keysCommandLine(['retire', '-PxYz_0a', '--yes']), { action: 'retire', kid: '-PxYz_0a', yes: true, json: false });
    assert.deepEqual(keysCommandLine(['--json', 'retire', '--yes', '-Q1']), { action: 'retire', kid: '-Q1', yes: true, json: true });
    assert.deepEqual(keysCommandLine(['retire', '-PxYz_0a']), { action: 'retire', kid: '-PxYz_0a', yes: false, json: false });
  });

  for (const [args, message] of [
    [[], /keys needs an action: list, rotate or retire KID/],
    [['frob'], /unknown keys action frob: use list, rotate or retire/],
    [['retire'], /keys retire needs the id \(kid\) of the key to retire: gatehouse keys list shows them/],
    [['retire', 'a', 'b'], /keys retire takes one key id; unexpected b/],
    [['list', 'extra'], /keys list takes no argument; unexpected extra/],
    [['rotate', '--yes'], /--yes is for keys retire only/],
    [['list', '--yess'], /Unknown option '--yess'/],
  ] as const) {
    it(`keys ${args.join(' ')}: exit 2, one line naming the mistake`, async () => {
      const r = await inProcess([...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /see gatehouse keys --help\n$/);
      assert.equal(r.stderr.split('\n').length, 2);
    });
  }

  it('--help says what each action does and lists the settings it reads', async () => {
    const r = await inProcess(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /gatehouse keys retire KID \[--yes\]/);
    assert.match(r.stdout, /GATEHOUSE_SIGNING_KEY_PREPUBLISH_HOURS/);
    assert.match(r.stdout, /GATEHOUSE_ENCRYPTION_KEY/);
  });
});

for (const engine of engines()) {
  describe(`gatehouse keys on the database (${engine})`, () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-keys-cli-'));
    after(() => rmSync(tmp, { recursive: true, force: true }));

    /** runs the command as main() would, its lines collected */
    async function keys(env: Record<string, string>, args: string[]) {
      const lines: string[] = [];
      const code = await keysCommand(loadConfig(env), args, (l) => lines.push(l));
      return { code, text: lines.join('\n') };
    }

    it('lists, rotates and retires; refused where it must be', async () => {
      let t: TestApp;
      let env: Record<string, string>;
      if (engine === 'pglite') {
        const dataDir = await migratedDataDir(join(tmp, 'data'));
        env = { GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };
        await assert.rejects(
          keys(env, ['list']),
          (err: Error) => err instanceof UsageError && /start `gatehouse serve` once first/.test(err.message),
        );
        t = await startTestApp({ engine, db: await openDb({ engine: 'pglite', dataDir }), env: { GATEHOUSE_DATA_DIR: dataDir } });
      } else {
        t = await startTestApp({ engine });
        env = { DATABASE_URL: t.db.url!, GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };
      }
      let closed = false;
      try {
        const token = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const kid = decodeProtectedHeader(token).kid!;
        if (engine === 'pglite') {
          await assert.rejects(
            keys(env, ['list']),
            (err: Error) => err instanceof StartFailure && /is in use by .*stop the server and run this again/.test(err.message),
          );
          await t.close();
          closed = true;
        }
        const listed = await keys(env, ['list', '--json']);
        const rows = listed.text.split('\n').map((l) => JSON.parse(l));
        assert.deepEqual(
          rows.map((r) => [r.kid, r.state]),
          [[kid, 'signing']],
        );

        // a key made with another encryption key could be loaded by no server: refused
        const stranger = { ...env, GATEHOUSE_ENCRYPTION_KEY: randomBytes(32).toString('hex') };
        await assert.rejects(keys(stranger, ['rotate']), /cannot open signing key .*GATEHOUSE_ENCRYPTION_KEY/);

        const rotated = await keys(env, ['rotate']);
        assert.equal(rotated.code, 0);
        assert.match(rotated.text, new RegExp(`signing now: ${kid}`));
        const next = /next: (\S+), in the JWKS now, signs from (\S+)/.exec(rotated.text)!;
        assert.ok(next, rotated.text);
        await assert.rejects(keys(env, ['rotate']), (err: Error) => err instanceof UsageError && /a rotation is under way already/.test(err.message));

        await assert.rejects(
          keys(env, ['retire', 'no-such-kid']),
          (err: Error) => err instanceof UsageError && /no signing key has the id no-such-kid/.test(err.message),
        );
        const asked = await keys(env, ['retire', kid]);
        assert.equal(asked.code, 1);
        assert.match(asked.text, /it signs now: another key signs at once.*Nothing was changed: run gatehouse keys retire \S+ --yes/);
        const unchanged = (await keys(env, ['list', '--json'])).text.split('\n').map((l) => JSON.parse(l));
        assert.equal(unchanged.find((r) => r.kid === kid).state, 'signing');

        const retired = await keys(env, ['retire', kid, '--yes']);
        assert.equal(retired.code, 0);
        assert.match(retired.text, new RegExp(`signing now: ${next[1]}`), 'the pre-published key signs at once');
        if (!closed) {
          // the server, running all along on PostgreSQL, hears it: the old key's token is refused within a second
          const t0 = performance.now();
          while ((await t.gql(token, '{ clients { client_id } }')).status !== 401) {
            assert.ok(performance.now() - t0 < 1000, 'refused within a second');
            await new Promise((r) => setTimeout(r, 10));
          }
        }
        const after = (await keys(env, ['list'])).text;
        assert.match(after, new RegExp(`^${kid}\\tretired\\t`, 'm'));
        assert.match(after, new RegExp(`^${next[1]}\\tsigning\\t`, 'm'));
        await assert.rejects(keys(env, ['retire', kid, '--yes']), /was retired already/);

        const db = engine === 'pglite' ? await openDb({ engine: 'pglite', dataDir: env.GATEHOUSE_DATA_DIR! }) : t.db;
        try {
          const events = await db.kysely
            .selectFrom('audit_events')
            .select(['action', 'actor_kind', 'actor_id'])
            .where('action', 'like', 'signing_key.%')
            .execute();
          assert.deepEqual(events.map((e) => [e.action, e.actor_kind, e.actor_id]).sort(), [
            ['signing_key.retired', 'operator', userInfo().username],
            ['signing_key.rotated', 'operator', userInfo().username],
          ]);
        } finally {
          if (engine === 'pglite') await db.close();
        }
      } finally {
        if (!closed) await t.close();
      }
    });
  });
}
