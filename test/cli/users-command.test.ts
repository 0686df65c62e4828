// `gatehouse users …`: operators manage users on the database (docs/users.md), on both engines:
// refused on an empty database with what to do, then create (set-up link kept only as a digest),
// list, disable/enable, reset, unlock, and every bad command line answered with exit 2 and a pointer to
// the help. The executable is spawned where its run is the point (exit codes, output, the folder
// held by a server); bad command lines go through main() in this process, each one line to
// standard error and exit 2 as main() answers them; the embedded folder starts as a copy of a
// migrated one (migratedDataDir).
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import {
  createDatabase,
  ENCRYPTION_KEY,
  ensureBuilt,
  exitOf,
  freePort,
  gatehouse,
  killAll,
  migratedDataDir,
  PATIENCE_MS,
  stop,
  waitHealthy,
} from '../helpers/cli.js';
import { engines } from '../helpers/engines.js';
import { ROLE_IDS } from '../../src/access/roles.js';
import { usersCommand, usersCommandLine } from '../../src/cli/commands/users.js';
import { main } from '../../src/cli/main.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { loadConfig } from '../../src/config.js';

ensureBuilt();

interface Target {
  env: Record<string, string>;
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

async function run(env: Record<string, string>, args: string[]) {
  const p = gatehouse(['users', ...args], env);
  const r = await exitOf(p, PATIENCE_MS);
  return { code: r.code, stdout: p.stdout(), stderr: p.stderr() };
}

/** `gatehouse users ARGS` through main() in this process, with this environment: its exit code,
 *  and what it wrote to standard error. */
async function inProcess(env: Record<string, string>, args: string[]) {
  let stderr = '';
  const code = await main(['users', ...args], {
    env,
    err: (text) => {
      stderr += text;
    },
  });
  return { code, stderr };
}

for (const engine of engines()) {
  describe(`gatehouse users (${engine})`, () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-users-cli-'));
    let env: Record<string, string>;
    let dropDb: (() => Promise<void>) | undefined;
    let target: Target | undefined;

    before(async () => {
      if (engine === 'postgres') {
        const db = await createDatabase('gh_users_cli');
        dropDb = db.drop;
        env = { DATABASE_URL: db.url, GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY, GATEHOUSE_BASE_URL: 'https://id.example.com' };
      } else {
        // migrated, never served: as `gatehouse migrate` leaves it
        env = { GATEHOUSE_DATA_DIR: await migratedDataDir(join(tmp, 'data')), GATEHOUSE_BASE_URL: 'https://id.example.com' };
      }
    });
    after(async () => {
      await killAll();
      await target?.close();
      await dropDb?.();
      rmSync(tmp, { recursive: true, force: true });
    });

    /** Opens the database the CLI wrote (after it has exited: PGlite has one owner at a time). */
    async function open(): Promise<Target> {
      if (engine === 'postgres') {
        const client = new pg.Client({ connectionString: env.DATABASE_URL });
        await client.connect();
        return { env, query: async (q, p) => (await client.query(q, p as unknown[])).rows, close: () => client.end() };
      }
      const db = await PGlite.create(join(env.GATEHOUSE_DATA_DIR!, 'pgdata'));
      return { env, query: async (q, p) => (await db.query<Record<string, unknown>>(q, p as unknown[])).rows, close: () => db.close() };
    }
    async function inspect<T>(fn: (t: Target) => Promise<T>): Promise<T> {
      const t = await open();
      try {
        return await fn(t);
      } finally {
        await t.close();
      }
    }

    it('on a database that was never served, says to start serve once first', async () => {
      const r = await run(env, ['create', '--email', 'early@example.com']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^gatehouse: this database is empty: start `gatehouse serve` once first .*; see gatehouse users --help\n$/);
    });

    it('creates a user with roles by name and prints a one-time link kept only as a digest', async () => {
      const port = await freePort();
      const serve = gatehouse(['serve'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
      await waitHealthy(serve, port);
      if (engine === 'pglite') {
        // the server holds the embedded folder: said, with the way to do it through the server
        const held = await run(env, ['create', '--email', 'held@example.com']);
        assert.equal(held.code, 1, held.stderr);
        assert.equal(held.stderr.split('\n').length, 2, `one line: ${held.stderr}`);
        assert.match(held.stderr, new RegExp(`is in use by process ${serve.child.pid} on host \\S+ \\(a running gatehouse serve\\)`));
        assert.match(held.stderr, /stop the server and run this again, or do the same through the running server: the createUser mutation/);
        assert.match(held.stderr, /on \/graphql, with a token of an Administrator \(gatehouse login, then gatehouse token; docs\/users\.md\)\n$/);
      }
      await stop(serve);

      const r = await run(env, [
        'create',
        '--email',
        'Ops@Example.com',
        '--role',
        'administrator',
        '--role',
        'Auditor',
        '--display-name',
        'Ops  Person',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^created Ops@Example\.com\tactive \(set-up pending\)\ttenant 1\tAdministrator@1, Auditor@1\t[0-9a-f-]{36}\n/);
      const link = /^ {2}(https:\/\/id\.example\.com\/login\/setup\?token=([A-Za-z0-9_-]{43}))$/m.exec(r.stdout);
      assert.ok(link, r.stdout);
      // which settings made the link, and how to make one with the server's
      assert.match(r.stdout, /^set-up link \(one use, valid 3 days, until \d{4}-.*; send it to the person, privately\):$/m);
      assert.match(r.stdout, /^made with this command's settings, which may not be the running server's:$/m);
      assert.match(r.stdout, /^ {2}base URL {2}https:\/\/id\.example\.com {2}\(GATEHOUSE_BASE_URL, else http:\/\/HOST:PORT\)$/m);
      assert.match(r.stdout, /^ {2}lifetime {2}3 days {2}\(GATEHOUSE_USER_SETUP_TTL, in seconds\)$/m);
      assert.match(r.stdout, /^ {2}gatehouse users reset --email Ops@Example\.com --base-url URL --user-setup-ttl SECONDS$/m);
      const [row] = await inspect((t) =>
        t.query("select display_name, setup_token_hash, password_hash from users where email_normalized = 'ops@example.com'"),
      );
      assert.equal(row!.display_name, 'Ops Person');
      assert.equal(row!.password_hash, null);
      assert.deepEqual(Buffer.from(row!.setup_token_hash as Uint8Array), createHash('sha256').update(link[2]!).digest());
      const events = await inspect((t) => t.query("select actor_kind, actor_id from audit_events where action = 'user.created'"));
      // the operator: the OS user who ran the command, as every command line change names it
      assert.deepEqual(events, [{ actor_kind: 'operator', actor_id: userInfo().username }]);
    });

    it('lists users as lines or JSON, disables and enables them by address in any case', async () => {
      const list = await run(env, ['list', '--json']);
      assert.equal(list.code, 0, list.stderr);
      const users = list.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        users.map((u) => [u.email, u.status, u.roles.map((x: { role: string }) => x.role)]),
        [
          ['admin@gatehouse.local', 'active', ['Administrator']],
          ['Ops@Example.com', 'active', ['Administrator', 'Auditor']],
        ],
      );
      const off = await run(env, ['disable', '--email', 'OPS@example.COM']);
      assert.equal(off.code, 0, off.stderr);
      assert.match(off.stdout, /^disabled Ops@Example\.com\tdisabled/);
      const [row] = await inspect((t) => t.query("select disabled_at, tokens_valid_after from users where email_normalized = 'ops@example.com'"));
      assert.ok(row!.disabled_at instanceof Date && row!.tokens_valid_after instanceof Date);
      const on = await run(env, ['enable', '--email', 'ops@example.com']);
      assert.match(on.stdout, /^enabled Ops@Example\.com\tactive/);
    });

    it("reset prints a new link that replaces the old one, with the settings given (the server's)", async () => {
      const before = await inspect((t) => t.query("select setup_token_hash from users where email_normalized = 'ops@example.com'"));
      const t0 = Date.now();
      const r = await run(env, ['reset', '--email', 'ops@example.com', '--base-url', 'http://127.0.0.1:9000', '--user-setup-ttl', '300']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^ {2}http:\/\/127\.0\.0\.1:9000\/login\/setup\?token=/m);
      assert.match(r.stdout, /^ {2}lifetime {2}300 s {2}/m);
      const until = Date.parse(/valid 300 s, until (\S+);/.exec(r.stdout)![1]!);
      assert.ok(until >= t0 + 300_000 && until <= Date.now() + 300_000, `valid for 300 s: until ${new Date(until).toISOString()}`);
      const [stored] = await inspect((t) => t.query("select setup_expires_at from users where email_normalized = 'ops@example.com'"));
      assert.equal((stored!.setup_expires_at as Date).getTime(), until, 'the link ends when the database says');
      const token = /token=([A-Za-z0-9_-]{43})$/m.exec(r.stdout)![1]!;
      const [row] = await inspect((t) => t.query("select setup_token_hash from users where email_normalized = 'ops@example.com'"));
      assert.notDeepEqual(row!.setup_token_hash, before[0]!.setup_token_hash);
      assert.deepEqual(Buffer.from(row!.setup_token_hash as Uint8Array), createHash('sha256').update(token).digest());
      // the person is told, without the link (the server delivers what the command queued)
      const queued = await inspect((t) =>
        t.query("select template, status, body_sealed from mail_outbox where to_address = 'Ops@Example.com' order by created_at"),
      );
      assert.deepEqual(
        queued.map((q) => [q.template, q.status]),
        [['sign_in_reset_by_operator', 'queued']],
      );
      assert.ok(!String(queued[0]!.body_sealed).includes(token), 'sealed, and the link is not in it anyway');
    });

    it('unlock clears the failure counts of the account (from every address, and account-wide) and no other, keeping its factors', async () => {
      const counts = [
        'accountAll:ops@example.com',
        'secondFactorMonth:ops@example.com',
        'account:ops@example.com|203.0.113.9',
        'code:ops@example.com|203.0.113.9',
        'account:ops@example.com.evil|203.0.113.9',
        'address:203.0.113.9',
      ];
      const factors = "select password_hash, totp_secret_sealed, setup_token_hash, updated_at from users where email_normalized = 'ops@example.com'";
      const before = await inspect(async (t) => {
        for (const key of counts) {
          await t.query('insert into sign_in_failures (key, failures, first_failure_at, last_failure_at) values ($1, 100, now(), now())', [key]);
        }
        return t.query(factors);
      });
      const r = await run(env, ['unlock', '--email', 'OPS@example.com']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^unlocked Ops@Example\.com\tactive/);
      const left = await inspect((t) => t.query('select key from sign_in_failures where key = any($1) order by key', [counts]));
      assert.deepEqual(
        left.map((row) => row.key),
        ['account:ops@example.com.evil|203.0.113.9', 'address:203.0.113.9'],
      );
      assert.deepEqual(await inspect((t) => t.query(factors)), before, 'the factors and the set-up link are as they were');
      const events = await inspect((t) => t.query("select actor_kind, details from audit_events where action = 'user.sign_in_unlocked'"));
      assert.deepEqual(events, [{ actor_kind: 'operator', details: { counts_cleared: 4, password_failures: 100, second_factor_failures: 100 } }]);
    });

    it('answers a bad command line with exit 2, what was wrong, and where help is (in process)', async () => {
      const cases: [string[], RegExp][] = [
        [['create', '--email', 'ops@example.com'], /A user with this e-mail address exists/],
        [['create', '--email', 'not-an-address'], /email "not-an-address" is not an e-mail address/],
        [['create', '--email', 'x@example.com', '--role', 'Wizard'], /unknown role "Wizard": use one of Administrator, Analyst/],
        [['create', '--email', 'x@example.com', '--tenant', '999'], /Tenant 999 not found/],
        [['create', '--mail', 'x@example.com'], /Unknown option '--mail'/],
        [['create'], /users create needs --email ADDRESS/],
        [['disable', '--email', 'nobody@example.com'], /User "nobody@example.com" not found/],
        [['frob'], /unknown users action frob/],
        [[], /users needs an action: create, list, disable, enable, reset or unlock/],
      ];
      for (const [args, message] of cases) {
        const r = await inProcess(env, args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message, args.join(' '));
        assert.match(r.stderr, /; see gatehouse users --help\n$/);
        assert.equal(r.stderr.split('\n').length, 2, 'one line');
      }
      const [count] = await inspect((t) => t.query('select count(*)::int as n from users'));
      assert.equal(count!.n, 2, 'nothing was written');
    });
  });
}

describe('gatehouse users: roles by name in every refusal (in process)', () => {
  it('Operations or Support outside tenant 1: refused by name, before the database is opened', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-users-roles-'));
    const dataDir = join(tmp, 'data');
    try {
      for (const role of ['operations', 'Support', ROLE_IDS.Operations]) {
        await assert.rejects(
          usersCommand(loadConfig({ GATEHOUSE_DATA_DIR: dataDir }), ['create', '--email', 'x@example.com', '--tenant', '999', '--role', role]),
          (err: Error) => {
            assert.ok(err instanceof UsageError);
            assert.match(
              err.message,
              /^role (Operations|Support) exists only in the vendor tenant 1: give --tenant 1, or for tenant 999 one of Administrator, Analyst, Responder, Auditor$/,
            );
            assert.doesNotMatch(err.message, /[0-9a-f]{8}-[0-9a-f]{4}-/, 'no role id');
            return true;
          },
        );
      }
      assert.equal(existsSync(dataDir), false, 'the database was not opened');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('gatehouse users: the command line, read before anything is opened (in process)', () => {
  it('a mistake in it is a usage error, answered with exit 2 before the database is opened', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-users-line-'));
    const dataDir = join(tmp, 'data');
    const cases: [string[], RegExp][] = [
      [['create', '--email', 'x@example.com', '--role', 'Wizard'], /^unknown role "Wizard": use one of Administrator, Analyst, /],
      [['create', '--mail', 'x@example.com'], /^Unknown option '--mail'$/],
      [['create'], /^users create needs --email ADDRESS$/],
      [['reset', '--tenant', '1'], /^users reset needs --email ADDRESS$/],
      [['list', 'extra'], /^Unexpected argument 'extra'/],
      [['frob'], /^unknown users action frob$/],
      [[], /^users needs an action: create, list, disable, enable, reset or unlock$/],
    ];
    try {
      for (const [args, message] of cases) {
        assert.throws(
          () => usersCommandLine(args),
          (err: Error) => err instanceof UsageError && message.test(err.message),
          args.join(' '),
        );
        const r = await inProcess({ GATEHOUSE_DATA_DIR: dataDir }, args);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, /^gatehouse: .*; see gatehouse users --help\n$/, args.join(' '));
      }
      assert.equal(existsSync(dataDir), false, 'the database was not opened');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('reads the action, the address, the tenant (1 unless given) and the roles by name or id', () => {
    assert.deepEqual(
      usersCommandLine([
        'create',
        '--email',
        'a@example.com',
        '--role',
        'auditor',
        '--role',
        ROLE_IDS.Analyst,
        '--tenant',
        '7',
        '--display-name',
        'A',
      ]),
      { action: 'create', email: 'a@example.com', tenant: '7', roles: [ROLE_IDS.Auditor, ROLE_IDS.Analyst], displayName: 'A', json: false },
    );
    assert.deepEqual(usersCommandLine(['list', '--json']), { action: 'list', tenant: '1', roles: [], displayName: null, json: true });
    assert.deepEqual(usersCommandLine(['disable', '--email', 'B@example.com']), {
      action: 'disable',
      email: 'B@example.com',
      tenant: '1',
      roles: [],
      displayName: null,
      json: false,
    });
  });
});
