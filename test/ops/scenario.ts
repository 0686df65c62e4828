// The outage and failover scenarios (docs/operations.md, "PostgreSQL outages and failover"),
// shared by the bounded test of the default suite (pg-outage.test.ts) and the longer ones of
// `npm run test:ops` (*.ops.ts, and failover.test.ts again). A `gatehouse serve` process runs against a PostgreSQL of the
// test's own (or a TCP proxy in front of it); writers create clients without pause, each
// remembering the clients whose creation was acknowledged; the database goes away and comes back
// (or fails over); then every acknowledged client must be in the database.
import assert from 'node:assert/strict';
import net from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { ENCRYPTION_KEY, freePort, gatehouse, type Proc, requestToken, waitFor, waitHealthy } from '../helpers/cli.js';

export const ROOT_ID = 'root-admin';
export const ROOT_SECRET = 'gatehouse_test_root_secret_0123456789abcdefghij';
const CREATE_CLIENT = 'mutation($n: String!) { createClient(name: $n) { client { id client_id } client_secret } }';

/** an answer later than this is a hang */
const HANG_MS = 20_000;

export interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
  ms: number;
}

export async function serve(url: string, dataDir: string): Promise<{ p: Proc; port: number }> {
  const port = await freePort();
  const p = gatehouse(['serve'], {
    DATABASE_URL: url,
    GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    GATEHOUSE_BASE_URL: 'https://id.example.com',
    GATEHOUSE_BOOTSTRAP_CLIENT_ID: ROOT_ID,
    GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_SECRET,
    GATEHOUSE_CLIENT_CREATE_LIMIT: '1000000',
    GATEHOUSE_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PORT: String(port),
  });
  await waitHealthy(p, port);
  return { p, port };
}

async function timed(res: Promise<Response>): Promise<Answer> {
  const t0 = Date.now();
  const r = await res;
  const text = await r.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body, ms: Date.now() - t0 };
}

export function createClient(port: number, token: string, name: string): Promise<Answer> {
  return timed(
    fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: CREATE_CLIENT, variables: { n: name } }),
      // a hang shows as a failure (status 0), not as the test's timeout
      signal: AbortSignal.timeout(HANG_MS),
    }),
  );
}

export function ready(port: number): Promise<Answer> {
  return timed(fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(HANG_MS) }));
}

export async function token(port: number, clientId = ROOT_ID, secret = ROOT_SECRET): Promise<Answer & { token?: string }> {
  const t0 = Date.now();
  const r = await requestToken(port, clientId, secret);
  return { status: r.status, retryAfter: null, body: r.body, ms: Date.now() - t0, token: r.body?.access_token };
}

/** Writers creating clients until stopped: what was acknowledged, and every failure seen. */
export function load(port: number, accessToken: string, writers: number, prefix: string) {
  const acknowledged: string[] = [];
  const failures: Answer[] = [];
  /** Date.now() of each acknowledged write */
  const ackTimes: number[] = [];
  let running = true;
  let n = 0;
  const loops = Array.from({ length: writers }, async (_, w) => {
    while (running) {
      const name = `${prefix}-${w}-${n++}`;
      const a = await createClient(port, accessToken, name).catch(
        (err: Error): Answer => ({ status: 0, retryAfter: null, body: String(err), ms: 0 }),
      );
      if (a.status === 200 && a.body?.data?.createClient?.client?.id) {
        acknowledged.push(name);
        ackTimes.push(Date.now());
      } else {
        failures.push(a);
        // as a client told Retry-After would, but sooner: the test wants to see the way back
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  return {
    acknowledged,
    failures,
    ackTimes,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Asserts that an answer is the fast 503 of an unreachable database, in the GraphQL shape. */
export function assertUnavailable(a: Answer): void {
  assert.equal(a.status, 503, JSON.stringify(a.body));
  assert.equal(a.retryAfter, '5');
  assert.equal(a.body.errors[0].extensions.code, 'INTERNAL', JSON.stringify(a.body));
  assert.equal(a.body.errors[0].extensions.retryAfter, 5, 'told apart from a bug by retryAfter');
  assert.match(a.body.errors[0].message, /database is unavailable; retry in 5 seconds/);
}

/** The names of all live clients, read straight from the database. */
export async function clientNames(url: string): Promise<Set<string>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ name: string }>('select name from clients');
    return new Set(r.rows.map((row) => row.name));
  } finally {
    await c.end();
  }
}

export async function waitReady(port: number, timeoutMs = 30_000): Promise<number> {
  const t0 = Date.now();
  await waitFor(`/readyz on port ${port}`, timeoutMs, async () => ((await ready(port)).status === 200 ? true : undefined));
  return Date.now() - t0;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** No line of standard error or output says the process met an error it did not expect. */
export function assertNoCrash(p: Proc): void {
  assert.ok(p.running(), `gatehouse exited\nstderr:\n${p.stderr()}`);
  const text = `${p.stdout()}\n${p.stderr()}`;
  assert.doesNotMatch(text, /unhandled|uncaught|"level":50.*"msg":"(unhandled error|resolver failed)"/i, text.slice(-4000));
}

/** A TCP proxy on loopback that forwards to one port, and can be switched to another: the
 *  switch drops every open connection (as a failed primary does), new ones go to the new port. */
export async function tcpProxy(target: number): Promise<{ port: number; switchTo(port: number): void; close(): Promise<void> }> {
  let to = target;
  const open = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(to, '127.0.0.1');
    open.add(inbound).add(outbound);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      open.delete(inbound);
      open.delete(outbound);
    };
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    switchTo(p) {
      to = p;
      for (const s of open) s.destroy();
      open.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

export { join };
