// Caches never weaken revocation across processes (issue 12, docs/performance.md): two
// `gatehouse serve` processes on one PostgreSQL database, both with caches that would otherwise
// live 5 minutes (GATEHOUSE_AUTH_CACHE_SECONDS=300). Each change is made through process A (or
// straight in the database, as an operator's SQL would); process B, whose caches hold the
// credentials from a moment before, refuses the old secret and the old token once it has heard
// the change (a revoked token too). The deadline is generous (a loaded CI machine); what the test holds B to is that it
// stops accepting long before its caches' lifetime, which only the notification explains. The
// guessing throttle's counts are shared too: failures through A count in B. So are the cached
// client listings: a client created or deleted through A shows in B's listing.
// PostgreSQL only: PGlite is one process's database.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ROLE_IDS } from '../../src/access/roles.js';
import {
  createDatabase,
  ENCRYPTION_KEY,
  ensureBuilt,
  freePort,
  gatehouse,
  killAll,
  type Proc,
  requestToken,
  stop,
  waitHealthy,
} from '../helpers/cli.js';

ensureBuilt();

const ROOT_ID = 'root-admin';
const ROOT_SECRET = 'gatehouse_test_root_secret_0123456789abcdefghij';
/** far longer than the test: a refusal inside it is the notification's doing */
const HEARD_WITHIN_MS = 15_000;

async function gql(port: number, token: string, query: string, variables: Record<string, unknown> = {}, tenant?: string, path = '/graphql') {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(tenant ? { 'x-tenant-context': tenant } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function tokenOf(port: number, clientId: string, secret: string): Promise<string> {
  const r = await requestToken(port, clientId, secret);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token as string;
}

/** Polls until `refused` holds; how long it took. Fails after HEARD_WITHIN_MS. */
async function refusedWithin(what: string, refused: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < HEARD_WITHIN_MS) {
    if (await refused()) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${what}: still accepted after ${HEARD_WITHIN_MS} ms`);
}

/** the tenant interface */
const TENANTS = '/public/query';
const LIST = '{ clients { client_id } }';
const CREATE_CLIENT = `mutation($n: String!, $r: [ID!]) { createClient(name: $n, roles: $r) { client { id client_id } client_secret } }`;

const skip = process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (two processes on one PostgreSQL)';

describe('revocation across processes on one PostgreSQL', { skip }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-xproc-'));
  let drop: () => Promise<void>;
  let url: string;
  let a: { p: Proc; port: number };
  let b: { p: Proc; port: number };
  let root: string;

  async function serve(name: string) {
    const port = await freePort();
    const p = gatehouse(['serve'], {
      DATABASE_URL: url,
      GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      GATEHOUSE_BASE_URL: 'https://id.example.com',
      GATEHOUSE_BOOTSTRAP_CLIENT_ID: ROOT_ID,
      GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_SECRET,
      GATEHOUSE_AUTH_CACHE_SECONDS: '300',
      // its own last-used writes would void its caches every 30 s: not the mechanism under test
      GATEHOUSE_LAST_USED_FLUSH_SECONDS: '3600',
      GATEHOUSE_DATA_DIR: join(tmp, name),
      PORT: String(port),
    });
    await waitHealthy(p, port);
    return { p, port };
  }

  before(async () => {
    const db = await createDatabase('gh_xproc');
    drop = db.drop;
    url = db.url;
    a = await serve('a'); // bootstraps the database
    b = await serve('b');
    root = await tokenOf(a.port, ROOT_ID, ROOT_SECRET);
  });
  after(async () => {
    await Promise.all([a && stop(a.p), b && stop(b.p)].filter(Boolean));
    await killAll();
    await drop?.();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** A new Administrator client of tenant 1, made through A; B has issued it a token and served it twice. */
  async function warmClient(name: string) {
    const made = await gql(a.port, root, CREATE_CLIENT, { n: name, r: [ROLE_IDS.Administrator] });
    assert.equal(made.body.errors, undefined, JSON.stringify(made.body.errors));
    const { client, client_secret: secret } = made.body.data.createClient;
    const token = await tokenOf(b.port, client.client_id, secret);
    for (let i = 0; i < 2; i++) assert.equal((await gql(b.port, token, LIST)).body.errors, undefined);
    await tokenOf(b.port, client.client_id, secret);
    return { id: client.id as string, clientId: client.client_id as string, secret: secret as string, token };
  }

  it('a client deleted through A: B refuses its secret and its token', async () => {
    const c = await warmClient('to-delete');
    const del = await gql(a.port, root, 'mutation($id: ID!) { deleteClient(id: $id) { id } }', { id: c.id });
    assert.equal(del.body.errors, undefined);
    await refusedWithin('the secret of a deleted client', async () => (await requestToken(b.port, c.clientId, c.secret)).status === 401);
    await refusedWithin('the token of a deleted client', async () => (await gql(b.port, c.token, LIST)).status === 401);
  });

  it("B's cached client listing shows what changed through A or in the database: a new client, a rename, a deletion", async () => {
    const listed = async () =>
      ((await gql(b.port, root, '{ clients { client_id name } }')).body.data.clients as { client_id: string; name: string }[]).map(
        (c) => `${c.client_id} ${c.name}`,
      );
    await listed();
    await listed(); // B now serves this listing from its cache
    const made = await gql(a.port, root, CREATE_CLIENT, { n: 'listed-on-b', r: [ROLE_IDS.Auditor] });
    assert.equal(made.body.errors, undefined, JSON.stringify(made.body.errors));
    const { id, client_id: clientId } = made.body.data.createClient.client;
    await refusedWithin('a listing without the new client', async () => (await listed()).includes(`${clientId} listed-on-b`));
    // a column no authentication reads: only the listings' own triggers tell B
    const sqlClient = new pg.Client({ connectionString: url });
    await sqlClient.connect();
    try {
      await sqlClient.query("update clients set name = 'renamed-by-sql' where id = $1", [id]);
    } finally {
      await sqlClient.end();
    }
    await refusedWithin('a listing with the old name', async () => (await listed()).includes(`${clientId} renamed-by-sql`));
    assert.equal((await gql(a.port, root, 'mutation($id: ID!) { deleteClient(id: $id) { id } }', { id })).body.errors, undefined);
    await refusedWithin('a listing with the deleted client', async () => !(await listed()).some((c) => c.startsWith(clientId)));
  });

  it('a secret force-rotated through A: B refuses the old secret and the token it gave, and takes the new secret', async () => {
    const c = await warmClient('to-rotate');
    const rot = await gql(a.port, root, 'mutation($id: ID!) { forceRotateClientSecret(id: $id) { client_secret } }', { id: c.id });
    assert.equal(rot.body.errors, undefined, JSON.stringify(rot.body.errors));
    await refusedWithin('the old secret', async () => (await requestToken(b.port, c.clientId, c.secret)).status === 401);
    await refusedWithin('the token of the old secret', async () => (await gql(b.port, c.token, LIST)).status === 401);
    // the new secret works on B at once: it was heard as a change too
    await tokenOf(b.port, c.clientId, rot.body.data.forceRotateClientSecret.client_secret);
  });

  it('a token revoked through A (RFC 7009): B refuses it, though it served it a moment before', async () => {
    const c = await warmClient('to-revoke-token');
    const res = await fetch(`http://127.0.0.1:${a.port}/auth/api/v2/auth/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.secret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: c.token }),
    });
    assert.equal(res.status, 200);
    await refusedWithin('the revoked token', async () => (await gql(b.port, c.token, LIST)).status === 401);
    // the client and its secret are untouched: B issues it a new token that works
    assert.equal((await gql(b.port, await tokenOf(b.port, c.clientId, c.secret), LIST)).status, 200);
  });

  it('a tenant disabled through A: B refuses its client and the token', async () => {
    const made = await gql(
      a.port,
      root,
      'mutation { createTenant(newTenant: {name: "xproc", partnerTenantID: "1"}) { id } }',
      {},
      undefined,
      TENANTS,
    );
    assert.equal(made.body.errors, undefined);
    const tenant = made.body.data.createTenant.id as string;
    const created = await gql(a.port, root, CREATE_CLIENT, { n: 'in-tenant', r: [ROLE_IDS.Administrator] }, tenant);
    assert.equal(created.body.errors, undefined, JSON.stringify(created.body.errors));
    const { client, client_secret: secret } = created.body.data.createClient;
    const token = await tokenOf(b.port, client.client_id, secret);
    assert.equal((await gql(b.port, token, LIST)).body.errors, undefined);

    const off = await gql(
      a.port,
      root,
      'mutation($id: ID!) { updateTenant(tenantID: $id, tenantUpdate: {disable: true}) { id } }',
      { id: tenant },
      undefined,
      TENANTS,
    );
    assert.equal(off.body.errors, undefined, JSON.stringify(off.body.errors));
    await refusedWithin("a disabled tenant's client secret", async () => (await requestToken(b.port, client.client_id, secret)).status === 401);
    await refusedWithin("a disabled tenant's token", async () => (await gql(b.port, token, LIST)).status === 401);
  });

  it("a role removed in the database (an operator's SQL): B stops granting it", async () => {
    const c = await warmClient('to-demote');
    const sqlClient = new pg.Client({ connectionString: url });
    await sqlClient.connect();
    try {
      await sqlClient.query('delete from role_assignments where principal_id = $1', [c.id]);
    } finally {
      await sqlClient.end();
    }
    await refusedWithin('a removed role', async () => (await gql(b.port, c.token, LIST)).body.errors?.[0]?.extensions?.code === 'FORBIDDEN');
    // a new token no longer names the role
    const fresh = await requestToken(b.port, c.clientId, c.secret);
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.scope, undefined, 'a client with no role gets a token without scope');
  });

  it('the guessing throttle counts across both: 10 wrong secrets through A, and B refuses the 11th and the right secret', async () => {
    const made = await gql(a.port, root, CREATE_CLIENT, { n: 'guessed', r: [ROLE_IDS.Administrator] });
    assert.equal(made.body.errors, undefined, JSON.stringify(made.body.errors));
    const { client, client_secret: secret } = made.body.data.createClient;
    const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (let i = 0; i < 10; i++) assert.equal((await requestToken(a.port, client.client_id, wrong)).status, 401, `guess ${i + 1} through A`);
    const eleventh = await requestToken(b.port, client.client_id, wrong);
    assert.equal(eleventh.status, 429, 'B, which saw none of the ten, does not confirm an eleventh wrong secret');
    // B never served this client: it reads the shared counts before confirming a right secret
    assert.equal((await requestToken(b.port, client.client_id, secret)).status, 429);
    assert.equal((await requestToken(a.port, client.client_id, secret)).status, 429);
  });
});
