// The real executable (node bin/gatehouse.js, compiled dist/) run as an operator runs it: spawned
// with a clean environment, its output captured, waited for with deadlines that fail the test
// (and kill the process) rather than hang it.
import assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { KNOWN_VARIABLES } from '../../src/config.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(root, 'bin', 'gatehouse.js');
export const TOKEN_PATH = '/auth/api/v2/auth/token';
export const ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

// Bounds the operator is promised, asserted on the measured time. Waits themselves use longer
// deadlines, so that on a loaded machine a slow step fails its own assertion and the later steps
// still run.
export const STOP_MS = 10_000;
/** A refused start must not hang: from its report on standard error to its exit, at most this. A
 *  handle left open (an interval, a pool, a server) keeps a process alive for good, so the bound
 *  only has to tell "exits" from "hangs": it is generous, not a speed (bench/first-start.ts
 *  measures starts). */
export const LINGER_MS = 10_000;
export const PATIENCE_MS = 60_000;

/** `npm test` builds dist/ first (scripts/test.mjs); a file run by node --test alone builds it here. The build script does nothing when dist/ is current. */
export function ensureBuilt(): void {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'pipe' });
}

/** What a migrated data folder depends on: the migrations, and the PGlite that wrote it (the lock
 *  file's versions), as test/helpers/db.ts keys its image. */
function migrationsKey(): string {
  const dir = join(root, 'src', 'store', 'migrations');
  const h = createHash('sha256');
  for (const name of readdirSync(dir).sort()) h.update(name).update(readFileSync(join(dir, name)));
  h.update(readFileSync(join(root, 'package-lock.json')));
  return h.digest('hex').slice(0, 16);
}

let migratedFolder: Promise<string> | undefined;

/** The cached folder: made once by `gatehouse migrate` (by whichever test process gets there
 *  first: it is built aside and renamed into place, so a folder found is complete). */
async function cachedMigratedFolder(): Promise<string> {
  const cache = join(root, 'node_modules', '.cache', 'gatehouse-test');
  const folder = join(cache, `data-dir-${migrationsKey()}`);
  if (existsSync(folder)) return folder;
  mkdirSync(cache, { recursive: true });
  const building = `${folder}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  const m = gatehouse(['migrate'], { GATEHOUSE_DATA_DIR: building });
  const r = await exitOf(m, PATIENCE_MS);
  assert.equal(r.code, 0, `gatehouse migrate for the cached data folder failed:\n${m.stderr()}`);
  assert.deepEqual(readdirSync(building), ['pgdata'], 'migrate leaves the database alone in the folder (no lock, no key)');
  try {
    renameSync(building, folder);
  } catch (err) {
    // another test process put its own in place first: made from the same migrations
    if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    rmSync(building, { recursive: true, force: true });
  }
  return folder;
}

/**
 * Makes `dataDir` (GATEHOUSE_DATA_DIR) an embedded database on which `gatehouse migrate` has run
 * and nothing else (no tenant, no key, no lock): a copy of a folder migrated once and cached,
 * keyed by the migrations' content. A spawned serve or users then starts as on any existing
 * folder, instead of creating the database (initdb) and applying every migration first, which
 * costs seconds of CPU a spawn. A serve on it is still a first start (it bootstraps).
 */
export async function migratedDataDir(dataDir: string): Promise<string> {
  migratedFolder ??= cachedMigratedFolder();
  cpSync(await migratedFolder, dataDir, { recursive: true });
  // as migrate left it, whatever may have been written to the cache since: no lock, no key
  assert.deepEqual(readdirSync(dataDir), ['pgdata'], `${dataDir} is a migrated folder and nothing else`);
  return dataDir;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A port held by another listener (as another process would hold it) until `close`. */
export function occupiedPort(): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const srv: Server = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      resolve({ port, close: () => new Promise<void>((r) => srv.close(() => r())) });
    });
  });
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** resolves with the exit code (null when killed by a signal) and signal */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
  /** when (Date.now()) the process first wrote to standard error, and when it exited */
  times(): { firstStderr: number | undefined; exit: number | undefined };
}

const started: Proc[] = [];

/** The environment of a clean shell: nothing Gatehouse-specific inherited from the test runner. */
export function cleanEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if ((KNOWN_VARIABLES as readonly string[]).includes(k) || k.startsWith('GATEHOUSE_') || k.startsWith('NODE_TEST') || k === 'TEST_DATABASE_URL') {
      continue;
    }
    env[k] = v;
  }
  return { ...env, LOG_LEVEL: 'info', ...vars };
}

/** V8 flags of the spawned executable. `--liftoff-only`: PGlite's WebAssembly (PostgreSQL) runs
 *  as first compiled, without the optimising tier. A server here lives for seconds, and that tier
 *  spent about 2 of the 5.5 CPU-seconds of a start and stop optimising code the test never ran
 *  again (docs/benchmarks.md, "The test suite"). The commands a user types run verbatim, without
 *  it: the README walkthrough, the Ctrl-C and the image tests. */
const TEST_NODE_FLAGS = ['--liftoff-only'];

export function gatehouse(args: string[], vars: Record<string, string>): Proc {
  return spawned(process.execPath, [...TEST_NODE_FLAGS, BIN, ...args], vars);
}

/** Any program (a Python example), run like gatehouse() from the repository with a clean environment. */
export function spawned(command: string, args: string[], vars: Record<string, string>): Proc {
  const child = spawn(command, args, { cwd: root, env: cleanEnv(vars), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let done = false;
  let firstStderr: number | undefined;
  let exit: number | undefined;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    firstStderr ??= Date.now();
    err += d;
  });
  child.once('exit', () => (exit = Date.now()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const proc = { child, stdout: () => out, stderr: () => err, exited, running: () => !done, times: () => ({ firstStderr, exit }) };
  started.push(proc);
  return proc;
}

/** How long the process lived on after it reported its failure (a lingering handle shows here). */
export function lingeredMs(p: Proc): number {
  const { firstStderr, exit } = p.times();
  assert.ok(firstStderr !== undefined && exit !== undefined, 'it reported a failure and exited');
  return exit - firstStderr;
}

/** Kills (SIGKILL) every process a test started that still runs; for after() hooks. */
export async function killAll(): Promise<void> {
  for (const p of started) {
    if (p.running()) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
}

/** Waits for the process to exit, failing the test (and killing it) if it does not in time. */
export async function exitOf(p: Proc, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
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

/** The process's standard error, asserted to be exactly one line (no stack, no second message). */
export function oneLine(p: Proc): string {
  const text = p.stderr().trim();
  assert.ok(text.length > 0, 'a message on standard error');
  assert.equal(text.split('\n').length, 1, `one line on standard error, got:\n${p.stderr()}`);
  assert.doesNotMatch(text, /\n\s+at |RuntimeError|Aborted/, 'a clear message, no stack');
  return text;
}

export interface Credentials {
  clientId: string;
  clientSecret: string;
  adminEmail: string;
  adminPassword: string;
}

export function parseCredentials(stdout: string): Credentials | undefined {
  const field = (label: string) => new RegExp(`^\\s*${label}:\\s+(\\S+)\\s*$`, 'm').exec(stdout)?.[1];
  const clientId = field('client_id');
  const clientSecret = field('client_secret');
  const adminEmail = field('admin e-mail');
  const adminPassword = field('admin password');
  if (!clientId || !clientSecret || !adminEmail || !adminPassword) return undefined;
  return { clientId, clientSecret, adminEmail, adminPassword };
}

export async function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; text: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(2000) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* text */
    }
    return { status: res.status, body, text };
  } catch {
    return undefined; // not listening (yet)
  }
}

/** Waits until the process answers /healthz; fails early if it exits first. */
export async function waitHealthy(p: Proc, port: number, timeoutMs = PATIENCE_MS): Promise<void> {
  await waitFor(`/healthz on port ${port}`, timeoutMs, async () => {
    if (!p.running()) throw new Error(`process exited before it served\nstdout:\n${p.stdout()}\nstderr:\n${p.stderr()}`);
    const res = await get(port, '/healthz');
    return res?.status === 200 ? true : undefined;
  });
}

export async function requestToken(port: number, clientId: string, secret: string): Promise<{ status: number; body: any }> {
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

export async function listClients(port: number, token: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ clients { client_id tenant_id roles } }' }),
  });
  return { status: res.status, body: await res.json() };
}

/** SIGTERM, then expect a clean exit (code 0) within a few seconds. */
export async function stop(p: Proc): Promise<void> {
  p.child.kill('SIGTERM');
  const r = await exitOf(p, PATIENCE_MS);
  assert.equal(r.signal, null, `exited by signal ${r.signal}`);
  assert.equal(r.code, 0, `exit code after SIGTERM\nstderr:\n${p.stderr()}`);
  assert.ok(r.ms <= STOP_MS, `SIGTERM to exit took ${r.ms} ms (at most ${STOP_MS})`);
}

export interface LockFile {
  token: string;
  pid: number;
  host: string;
  startedAt: string;
  refreshedAt: string;
}

/** The data folder's lock record. */
export function readLock(dataDir: string): LockFile {
  return JSON.parse(readFileSync(join(dataDir, 'gatehouse.lock'), 'utf8')) as LockFile;
}

/** A fresh PostgreSQL database in TEST_DATABASE_URL's server; `drop` removes it. */
export async function createDatabase(prefix: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    drop: async () => {
      const d = new pg.Client({ connectionString: adminUrl });
      await d.connect();
      await d.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
      await d.query(`drop database if exists ${name}`);
      await d.end();
    },
  };
}

const USER_CODE = /\b([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})\b/;
const VERIFICATION_LINK = /(https?:\/\/\S+\/device\?user_code=\S+)/;

/** Waits until a device login (`gatehouse login`, the Python example) has printed its code and
 *  link on standard output; both, as printed. */
export function deviceLoginShown(p: Proc, timeoutMs: number): Promise<{ code: string; link: string }> {
  return waitFor('the code and the link on standard output', timeoutMs, () => {
    const code = USER_CODE.exec(p.stdout())?.[1];
    const link = VERIFICATION_LINK.exec(p.stdout())?.[1];
    if (!p.running() && !(code && link)) throw new Error(`exited early:\n${p.stdout()}\n${p.stderr()}`);
    return code && link ? { code, link } : undefined;
  });
}
