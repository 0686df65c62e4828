// The real executable (node bin/gatehouse.js, compiled dist/) as an operator runs it: first start
// prints the bootstrap credentials once and they work over real HTTP; SIGTERM stops it cleanly;
// the data folder is locked against a second process, a stale lock is taken over; migrate, --help,
// invalid configuration and flags. With TEST_DATABASE_URL: the same on PostgreSQL, several
// processes on one fresh database.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { KNOWN_VARIABLES } from '../src/config.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'gatehouse.js');
const TOKEN_PATH = '/auth/api/v2/auth/token';
const ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

// ---------------------------------------------------------------------------------------------
// helpers

function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    newest = Math.max(newest, st.isDirectory() ? newestMtime(path) : st.mtimeMs);
  }
  return newest;
}

/** `npm test` builds dist/ first (pretest); a lone run of this file builds it when it is missing or older than src/. */
function ensureBuilt(): void {
  const info = join(root, 'dist', 'build-info.json');
  if (existsSync(join(root, 'dist', 'cli', 'main.js')) && existsSync(info) && statSync(info).mtimeMs >= newestMtime(join(root, 'src'))) return;
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'pipe' });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
async function waitFor<T>(what: string, timeoutMs: number, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** resolves with the exit code (null when killed by a signal) and signal */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
}

const started: Proc[] = [];

/** The environment of a clean shell: nothing Gatehouse-specific inherited from the test runner. */
function cleanEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if ((KNOWN_VARIABLES as readonly string[]).includes(k) || k.startsWith('GATEHOUSE_') || k.startsWith('NODE_TEST') || k === 'TEST_DATABASE_URL') {
      continue;
    }
    env[k] = v;
  }
  return { ...env, LOG_LEVEL: 'info', ...vars };
}

function gatehouse(args: string[], vars: Record<string, string>): Proc {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: root, env: cleanEnv(vars), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let done = false;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const proc = { child, stdout: () => out, stderr: () => err, exited, running: () => !done };
  started.push(proc);
  return proc;
}

// Bounds the operator is promised, asserted on the measured time. Waits themselves use longer
// deadlines, so that on a loaded machine a slow step fails its own assertion and the later steps
// still run.
const FIRST_START_MS = 10_000;
const STOP_MS = 10_000;
const FAIL_FAST_MS = 5_000;
const PATIENCE_MS = 60_000;

/** Waits for the process to exit, failing the test (and killing it) if it does not in time. */
async function exitOf(p: Proc, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const t0 = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      p.child.kill('SIGKILL');
      reject(new Error(`process did not exit within ${timeoutMs} ms\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`));
    }, timeoutMs);
  });
  try {
    const r = await Promise.race([p.exited, timeout]);
    return { ...r, ms: Date.now() - t0 };
  } finally {
    clearTimeout(timer);
  }
}

interface Credentials {
  clientId: string;
  clientSecret: string;
  adminEmail: string;
  adminPassword: string;
}

function parseCredentials(stdout: string): Credentials | undefined {
  const field = (label: string) => new RegExp(`^\\s*${label}:\\s+(\\S+)\\s*$`, 'm').exec(stdout)?.[1];
  const clientId = field('client_id');
  const clientSecret = field('client_secret');
  const adminEmail = field('admin e-mail');
  const adminPassword = field('admin password');
  if (!clientId || !clientSecret || !adminEmail || !adminPassword) return undefined;
  return { clientId, clientSecret, adminEmail, adminPassword };
}

async function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(2000) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* text */
    }
    return { status: res.status, body };
  } catch {
    return undefined; // not listening (yet)
  }
}

/** Waits until the process answers /healthz; fails early if it exits first. */
async function waitHealthy(p: Proc, port: number, timeoutMs = PATIENCE_MS): Promise<void> {
  await waitFor(`/healthz on port ${port}`, timeoutMs, async () => {
    if (!p.running()) throw new Error(`process exited before it served\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`);
    const res = await get(port, '/healthz');
    return res?.status === 200 ? true : undefined;
  });
}

async function requestToken(port: number, clientId: string, secret: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${TOKEN_PATH}`, {
    method: 'POST',
    headers: {
      authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64'),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  return { status: res.status, body: await res.json() };
}

async function listClients(port: number, token: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ clients { client_id tenant_id roles } }' }),
  });
  return { status: res.status, body: await res.json() };
}

/** SIGTERM, then expect a clean exit (code 0) within a few seconds. */
async function stop(p: Proc): Promise<void> {
  p.child.kill('SIGTERM');
  const r = await exitOf(p, PATIENCE_MS);
  assert.equal(r.signal, null, `exited by signal ${r.signal}`);
  assert.equal(r.code, 0, `exit code after SIGTERM\nstderr:\n${p.stderr()}`);
  assert.ok(r.ms <= STOP_MS, `SIGTERM to exit took ${r.ms} ms (at most ${STOP_MS})`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------------------------

describe('gatehouse executable', () => {
  let tmp: string;
  before(() => {
    ensureBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-cli-'));
  });
  after(async () => {
    for (const p of started) {
      if (p.running()) {
        p.child.kill('SIGKILL');
        await p.exited;
      }
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  it('--help prints usage and exits 0', async () => {
    const p = gatehouse(['--help'], {});
    const r = await exitOf(p, PATIENCE_MS);
    assert.equal(r.code, 0);
    assert.match(p.stdout(), /^Usage:$/m);
    assert.match(p.stdout(), /gatehouse serve/);
    assert.match(p.stdout(), /gatehouse migrate/);
    assert.match(p.stdout(), /DATABASE_URL/);
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

    it('first start prints the bootstrap credentials within 10 s, serves, and they obtain a token', async () => {
      dataDir = join(tmp, 'serve');
      const port = await freePort();
      const t0 = Date.now();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
      const printed = await waitFor('the bootstrap credentials on stdout', PATIENCE_MS, () => {
        if (!p.running()) throw new Error(`exited early\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`);
        return parseCredentials(p.stdout());
      });
      const elapsed = Date.now() - t0;
      creds = printed;
      assert.match(creds.clientId, /^[0-9a-f]{32}$/);
      assert.match(creds.clientSecret, /^gatehouse_cs_[0-9A-Za-z]{49}$/);
      assert.match(creds.adminEmail, /@/);
      assert.ok(creds.adminPassword.length >= 20);
      await waitHealthy(p, port);
      assert.deepEqual((await get(port, '/healthz'))!.body, { status: 'ok' });
      assert.deepEqual((await get(port, '/readyz'))!.body, { status: 'ready', database: 'pglite' });

      const token = await requestToken(port, creds.clientId, creds.clientSecret);
      assert.equal(token.status, 200, JSON.stringify(token.body));
      assert.equal(token.body.token_type, 'Bearer');
      const clients = await listClients(port, token.body.access_token);
      assert.equal(clients.status, 200);
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
      assert.equal(readFileSync(lock, 'utf8').trim(), String(p.child.pid));
      const second = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(await freePort()) });
      const r2 = await exitOf(second, PATIENCE_MS);
      assert.notEqual(r2.code, 0);
      assert.ok(r2.ms <= FAIL_FAST_MS, `the second process took ${r2.ms} ms to give up (at most ${FAIL_FAST_MS})`);
      assert.match(second.stderr(), new RegExp(`in use by process ${p.child.pid}\\b`));
      assert.ok(second.stderr().includes(lock), `the message names the lock file: ${second.stderr()}`);
      assert.doesNotMatch(second.stdout(), /client_secret/);
      assert.doesNotMatch(second.stderr(), /RuntimeError|Aborted|\n\s+at /, 'a clear message, no stack');
      // the first one is unharmed, and still holds the lock
      assert.equal((await get(port, '/readyz'))?.status, 200);
      assert.equal(readFileSync(lock, 'utf8').trim(), String(p.child.pid));
      // `migrate` is refused the same way
      const migrate = gatehouse(['migrate'], { GATEHOUSE_DATA_DIR: dataDir });
      const rm = await exitOf(migrate, PATIENCE_MS);
      assert.notEqual(rm.code, 0);
      assert.ok(rm.ms <= FAIL_FAST_MS, `migrate took ${rm.ms} ms to give up`);
      assert.ok(migrate.stderr().includes(lock), migrate.stderr());

      // SIGTERM: a clean exit, lock released
      await stop(p);
      assert.equal(existsSync(lock), false, 'the lock file is removed on a clean stop');
      // checked last, so that on a loaded machine the steps above still ran
      assert.ok(elapsed <= FIRST_START_MS, `the credentials took ${elapsed} ms to appear (at most ${FIRST_START_MS})`);
    });

    it('a second start on the same folder prints no credentials and keeps the data', async () => {
      assert.ok(creds, 'runs after the first start');
      const port = await freePort();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(p, port);
      assert.equal(parseCredentials(p.stdout()), undefined);
      assert.doesNotMatch(p.stdout(), /client_secret|admin password/);
      assert.equal((await requestToken(port, creds.clientId, creds.clientSecret)).status, 200, "the first start's client is still there");
      await stop(p);
    });

    it('a stale lock file with a dead pid does not prevent start', async () => {
      assert.ok(creds, 'runs after the first start');
      const dead = 999999;
      assert.equal(isRunning(dead), false, 'precondition: pid 999999 is not running');
      const lock = join(dataDir, 'gatehouse.lock');
      writeFileSync(lock, `${dead}\n`);
      const port = await freePort();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(p, port);
      assert.equal(readFileSync(lock, 'utf8').trim(), String(p.child.pid), 'the lock was taken over');
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
      assert.equal(readFileSync(join(dataDir, 'gatehouse.lock'), 'utf8').trim(), String(p.child.pid), 'the lock was left behind');

      const port2 = await freePort();
      const q = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port2) });
      await waitHealthy(q, port2);
      assert.doesNotMatch(q.stdout(), /client_secret/);
      assert.equal((await requestToken(port2, creds.clientId, creds.clientSecret)).status, 200);
      const after = await requestToken(port2, crashClient.client.client_id, crashClient.client_secret);
      assert.equal(after.status, 200, `the client created before the crash survived: ${JSON.stringify(after.body)}`);
      await stop(q);
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
      for (const p of started) {
        if (p.running()) {
          p.child.kill('SIGKILL');
          await p.exited;
        }
      }
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
