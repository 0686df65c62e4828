// The real executable (node bin/gatehouse.js, compiled dist/) as an operator runs it: first start
// prints the bootstrap credentials once and they work over real HTTP; SIGTERM stops it cleanly;
// the data folder is locked against a second process (a lease: see test/cli/data-dir-lock.test.ts
// for the rest), a lock left by a killed process lapses and is taken over; migrate, --help,
// invalid configuration and flags. With TEST_DATABASE_URL: the same on PostgreSQL, several
// processes on one fresh database.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import {
  ENCRYPTION_KEY,
  LINGER_MS,
  lingeredMs,
  PATIENCE_MS,
  ensureBuilt,
  exitOf,
  freePort,
  gatehouse,
  get,
  killAll,
  listClients,
  oneLine,
  parseCredentials,
  readLock,
  requestToken,
  stop,
  waitFor,
  waitHealthy,
  type Credentials,
} from './helpers/cli.js';

const LOCK_STALE_MS = 15_000;

// ---------------------------------------------------------------------------------------------

/**
 * The state the embedded database's folder was left in, from its pg_control file (DBState, the
 * int after the system identifier and the two version numbers): "shut down" needs no crash
 * recovery at the next open, "in production" does (the server did not close it).
 */
function clusterState(dataDir: string): string {
  const state = readFileSync(join(dataDir, 'pgdata', 'global', 'pg_control')).readUInt32LE(16);
  return ({ 1: 'shut down', 6: 'in production' } as Record<number, string>)[state] ?? `state ${state}`;
}

describe('gatehouse executable', () => {
  let tmp: string;
  before(() => {
    ensureBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  });
  after(async () => {
    await killAll();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('--help prints usage and exits 0', async () => {
    const p = gatehouse(['--help'], {});
    const r = await exitOf(p, PATIENCE_MS);
    assert.equal(r.code, 0);
    assert.match(p.stdout(), /^Usage:$/m);
    assert.match(p.stdout(), /gatehouse serve/);
    assert.match(p.stdout(), /gatehouse migrate/);
    assert.match(p.stdout(), /gatehouse serve --help lists them all/);
  });

  it('invalid configuration exits non-zero with one line per problem, each naming its variable', async () => {
    const dataDir = join(tmp, 'invalid-config');
    const p = gatehouse(['serve'], { PORT: 'abc', GATEHOUSE_REGION: 'mars', GATEHOUSE_DATA_DIR: dataDir });
    const r = await exitOf(p, PATIENCE_MS);
    assert.notEqual(r.code, 0);
    assert.equal(r.signal, null);
    const lines = p.stderr().trim().split('\n');
    assert.equal(lines.length, 2, p.stderr());
    assert.equal(lines.filter((l) => /\bPORT\b/.test(l) && !/GATEHOUSE_REGION/.test(l)).length, 1, p.stderr());
    assert.equal(lines.filter((l) => /\bGATEHOUSE_REGION\b/.test(l) && !/\bPORT\b/.test(l)).length, 1, p.stderr());
    assert.doesNotMatch(p.stdout(), /client_secret/);
    assert.equal(existsSync(dataDir), false, 'nothing was opened or created');
  });

  it('migrate on a fresh folder applies the migrations and exits 0; again, it has nothing to do', async () => {
    const dataDir = join(tmp, 'migrate-only');
    const first = gatehouse(['migrate'], { GATEHOUSE_DATA_DIR: dataDir });
    const r1 = await exitOf(first, PATIENCE_MS);
    assert.equal(r1.code, 0, first.stderr());
    assert.match(first.stdout(), /^applied: \S+/m);
    assert.doesNotMatch(first.stdout(), /client_secret/, 'migrate does not bootstrap');
    assert.equal(existsSync(join(dataDir, 'gatehouse.lock')), false, 'the lock is released');
    const again = gatehouse(['migrate', '--data-dir', dataDir], {});
    const r2 = await exitOf(again, PATIENCE_MS);
    assert.equal(r2.code, 0, again.stderr());
    assert.match(again.stdout(), /up to date/);
  });

  describe('serve on the embedded database', () => {
    let dataDir: string;
    let creds: Credentials;
    let firstJwks: unknown;

    it('first start prints the bootstrap credentials, serves, and they obtain a token', async () => {
      dataDir = join(tmp, 'serve');
      const port = await freePort();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
      const printed = await waitFor('the bootstrap credentials on stdout', PATIENCE_MS, () => {
        if (!p.running()) throw new Error(`exited early\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`);
        return parseCredentials(p.stdout());
      });
      creds = printed;
      assert.match(creds.clientId, /^[0-9a-f]{32}$/);
      assert.match(creds.clientSecret, /^gatehouse_cs_[0-9A-Za-z]{49}$/);
      assert.match(creds.adminEmail, /@/);
      assert.ok(creds.adminPassword.length >= 20);
      // where to use them: the sign-in page and the token endpoint of this server
      assert.match(p.stdout(), new RegExp(`^ {2}sign in at: +http://127\\.0\\.0\\.1:${port}/login `, 'm'));
      assert.match(p.stdout(), new RegExp(`^ {2}tokens from: +http://127\\.0\\.0\\.1:${port}/auth/api/v2/auth/token `, 'm'));
      await waitHealthy(p, port);
      assert.deepEqual((await get(port, '/healthz'))!.body, { status: 'ok' });
      assert.deepEqual((await get(port, '/readyz'))!.body, { status: 'ready', database: 'pglite' });

      const token = await requestToken(port, creds.clientId, creds.clientSecret);
      assert.equal(token.status, 200, JSON.stringify(token.body));
      assert.equal(token.body.token_type, 'Bearer');
      const clients = await listClients(port, token.body.access_token);
      assert.equal(clients.status, 200);
      firstJwks = (await get(port, '/.well-known/jwks.json'))!.body;
      assert.deepEqual(clients.body.data.clients, [{ client_id: creds.clientId, tenant_id: '1', roles: ['Administrator'] }]);
      // a secret differing in its last character (whatever that character is)
      const wrong = creds.clientSecret.slice(0, -1) + (creds.clientSecret.endsWith('0') ? '1' : '0');
      assert.equal((await requestToken(port, creds.clientId, wrong)).status, 401);

      // the secrets are printed once, on stdout, and logged nowhere
      assert.equal(p.stdout().split(creds.clientSecret).length - 1, 1, 'the client secret is printed exactly once');
      assert.equal(p.stdout().split(creds.adminPassword).length - 1, 1, 'the admin password is printed exactly once');
      assert.equal(p.stderr().includes(creds.clientSecret), false);

      // while it serves, a second process on the same folder fails fast, naming the lock
      const lock = join(dataDir, 'gatehouse.lock');
      const held = readLock(dataDir);
      assert.equal(held.pid, p.child.pid);
      assert.equal(held.host, hostname());
      assert.match(held.token, /^[0-9a-f]{32}$/);
      const second = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(await freePort()) });
      const r2 = await exitOf(second, PATIENCE_MS);
      assert.notEqual(r2.code, 0);
      assert.ok(lingeredMs(second) <= LINGER_MS, `the second process lived on ${lingeredMs(second)} ms after reporting the refusal`);
      const refusal = oneLine(second);
      assert.match(refusal, new RegExp(`in use by process ${p.child.pid} on host ${hostname()}\\b`));
      assert.ok(refusal.includes(lock), `the message names the lock file: ${refusal}`);
      assert.doesNotMatch(second.stdout(), /client_secret/);
      // the first one is unharmed, and still holds the lock
      assert.equal((await get(port, '/readyz'))?.status, 200);
      assert.equal(readLock(dataDir).token, held.token);
      // `migrate` is refused the same way
      const migrate = gatehouse(['migrate'], { GATEHOUSE_DATA_DIR: dataDir });
      const rm = await exitOf(migrate, PATIENCE_MS);
      assert.notEqual(rm.code, 0);
      assert.ok(lingeredMs(migrate) <= LINGER_MS, `migrate lived on ${lingeredMs(migrate)} ms after reporting the refusal`);
      assert.ok(oneLine(migrate).includes(lock), migrate.stderr());

      // SIGTERM: a clean exit, lock released, the database closed with its shutdown checkpoint
      assert.equal(clusterState(dataDir), 'in production', 'while it serves');
      await stop(p);
      assert.equal(existsSync(lock), false, 'the lock file is removed on a clean stop');
      assert.equal(clusterState(dataDir), 'shut down', 'the next open needs no crash recovery');
    });

    it('a second start on the same folder prints no credentials and keeps the data', async () => {
      assert.ok(creds, 'runs after the first start');
      const port = await freePort();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(p, port);
      assert.equal(parseCredentials(p.stdout()), undefined);
      assert.doesNotMatch(p.stdout(), /client_secret|admin password/);
      assert.equal((await requestToken(port, creds.clientId, creds.clientSecret)).status, 200, "the first start's client is still there");
      // without GATEHOUSE_ENCRYPTION_KEY, the signing key is sealed with the folder's key file,
      // created once (owner-only) and read again: the same signing key signs (the token above)
      assert.equal(statSync(join(dataDir, 'encryption.key')).mode & 0o777, 0o600);
      assert.deepEqual((await get(port, '/.well-known/jwks.json'))!.body, firstJwks);
      await stop(p);
    });

    it('a stale lock (not refreshed for longer than the lease) does not prevent start', async () => {
      assert.ok(creds, 'runs after the first start');
      const lock = join(dataDir, 'gatehouse.lock');
      const stale = new Date(Date.now() - 4 * LOCK_STALE_MS).toISOString();
      writeFileSync(
        lock,
        JSON.stringify({ token: 'f'.repeat(32), pid: 999999, host: 'gone-container', startedAt: stale, refreshedAt: stale }) + '\n',
      );
      const port = await freePort();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(p, port);
      const taken = readLock(dataDir);
      assert.equal(taken.pid, p.child.pid, 'the lock was taken over');
      assert.notEqual(taken.token, 'f'.repeat(32));
      assert.equal((await requestToken(port, creds.clientId, creds.clientSecret)).status, 200);
      await stop(p);
    });

    it('after kill -9, the next start takes over the lock and the acknowledged data is there', async () => {
      assert.ok(creds, 'runs after the first start');
      const port = await freePort();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(p, port);
      const token = await requestToken(port, creds.clientId, creds.clientSecret);
      assert.equal(token.status, 200);
      // an acknowledged write just before the crash
      const created = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { createClient(name: "before-crash") { client { client_id } client_secret } }' }),
      });
      const createdBody = (await created.json()) as any;
      assert.equal(created.status, 200, JSON.stringify(createdBody));
      const crashClient = createdBody.data.createClient;
      p.child.kill('SIGKILL');
      assert.equal((await exitOf(p, PATIENCE_MS)).signal, 'SIGKILL');
      assert.equal(clusterState(dataDir), 'in production', 'killed: the next open recovers from the WAL');
      const left = readLock(dataDir);
      assert.equal(left.pid, p.child.pid, 'the lock was left behind');

      // within the lease, a start is refused: nothing can tell a killed holder from a live one
      // in another PID namespace; the message says when the lock lapses
      const early = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(await freePort()) });
      assert.notEqual((await exitOf(early, PATIENCE_MS)).code, 0);
      assert.match(oneLine(early), /lapses 15 s after its last refresh/);
      // once it has lapsed, the next start takes it over
      await waitFor('the lease to lapse', PATIENCE_MS, () => (Date.now() - Date.parse(left.refreshedAt) > LOCK_STALE_MS + 500 ? true : undefined));
      const port2 = await freePort();
      const q = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port2) });
      await waitHealthy(q, port2);
      assert.equal(readLock(dataDir).pid, q.child.pid);
      assert.doesNotMatch(q.stdout(), /client_secret/);
      assert.equal((await requestToken(port2, creds.clientId, creds.clientSecret)).status, 200);
      const after = await requestToken(port2, crashClient.client.client_id, crashClient.client_secret);
      assert.equal(after.status, 200, `the client created before the crash survived: ${JSON.stringify(after.body)}`);
      await stop(q);
      assert.equal(clusterState(dataDir), 'shut down', 'after recovering, a SIGTERM closes the folder cleanly again');
    });

    it('a flag overrides the environment (--port over PORT, --data-dir over GATEHOUSE_DATA_DIR)', async () => {
      assert.ok(creds, 'runs after the first start');
      const envPort = await freePort();
      const flagPort = await freePort();
      const elsewhere = join(tmp, 'not-this-one');
      const p = gatehouse(['serve', '--port', String(flagPort), `--data-dir=${dataDir}`], {
        PORT: String(envPort),
        GATEHOUSE_DATA_DIR: elsewhere,
      });
      await waitHealthy(p, flagPort);
      assert.equal(await get(envPort, '/healthz'), undefined, 'nothing listens on the PORT of the environment');
      assert.equal(existsSync(elsewhere), false, "the environment's data folder was not used");
      assert.doesNotMatch(p.stdout(), /client_secret/, "the flag's folder, already bootstrapped, was used");
      assert.equal((await requestToken(flagPort, creds.clientId, creds.clientSecret)).status, 200);
      await stop(p);
    });
  });

  describe('serve on PostgreSQL (DATABASE_URL)', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, () => {
    const adminUrl = process.env.TEST_DATABASE_URL!;
    const dbName = `gh_cli_${randomBytes(6).toString('hex')}`;
    let databaseUrl: string;

    before(async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`create database ${dbName}`);
      await c.end();
      const u = new URL(adminUrl);
      u.pathname = `/${dbName}`;
      databaseUrl = u.toString();
    });
    after(async () => {
      await killAll();
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]);
      await c.query(`drop database if exists ${dbName}`);
      await c.end();
    });

    it('two processes starting together on a fresh database: one prints credentials, both serve and share keys', async () => {
      const ports = [await freePort(), await freePort()];
      const procs = ports.map((port, i) =>
        gatehouse(['serve'], {
          DATABASE_URL: databaseUrl,
          PORT: String(port),
          // several processes behind one public address: one issuer, and one key sealing the signing keys
          GATEHOUSE_BASE_URL: 'http://gatehouse.test',
          GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
          GATEHOUSE_DATA_DIR: join(tmp, `pg-${i}`),
        }),
      );
      for (const [i, p] of procs.entries()) await waitHealthy(p, ports[i]!);
      const printed = procs.map((p) => parseCredentials(p.stdout())).filter((c): c is Credentials => c !== undefined);
      assert.equal(printed.length, 1, 'exactly one process bootstrapped');
      const creds = printed[0]!;
      for (const port of ports) assert.deepEqual((await get(port, '/readyz'))!.body, { status: 'ready', database: 'postgres' });

      // a token from one process is accepted by the other
      const token = await requestToken(ports[0]!, creds.clientId, creds.clientSecret);
      assert.equal(token.status, 200, JSON.stringify(token.body));
      const other = await listClients(ports[1]!, token.body.access_token);
      assert.equal(other.status, 200, JSON.stringify(other.body));
      assert.deepEqual(other.body.data.clients, [{ client_id: creds.clientId, tenant_id: '1', roles: ['Administrator'] }]);
      assert.equal((await requestToken(ports[1]!, creds.clientId, creds.clientSecret)).status, 200);
      for (const p of procs) await stop(p);

      // a later start creates nothing and prints nothing
      const port = await freePort();
      const again = gatehouse(['serve', '--database-url', databaseUrl], {
        PORT: String(port),
        GATEHOUSE_BASE_URL: 'http://gatehouse.test',
        GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
        GATEHOUSE_DATA_DIR: join(tmp, 'pg-again'),
      });
      await waitHealthy(again, port);
      assert.equal(parseCredentials(again.stdout()), undefined);
      assert.equal((await requestToken(port, creds.clientId, creds.clientSecret)).status, 200);
      await stop(again);
      assert.equal(existsSync(join(tmp, 'pg-again', 'gatehouse.lock')), false, 'no PGlite lock with DATABASE_URL');
    });

    it('migrate on a fresh database exits 0', async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      const fresh = `${dbName}_m`;
      await c.connect();
      await c.query(`create database ${fresh}`);
      try {
        const u = new URL(adminUrl);
        u.pathname = `/${fresh}`;
        const p = gatehouse(['migrate'], { DATABASE_URL: u.toString(), GATEHOUSE_DATA_DIR: join(tmp, 'pg-migrate') });
        const r = await exitOf(p, PATIENCE_MS);
        assert.equal(r.code, 0, p.stderr());
        assert.match(p.stdout(), /^applied: /m);
      } finally {
        await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [fresh]);
        await c.query(`drop database if exists ${fresh}`);
        await c.end();
      }
    });
  });
});
