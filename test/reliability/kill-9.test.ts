// `kill -9` of the server under write load, then a restart: every write the server acknowledged
// (a 200 with the new tenant's id) is there afterwards, on both engines. Writers keep several
// mutations in flight when the process dies; what was in flight may or may not have happened
// (the caller never heard), and nothing half-made is left: every tenant found is whole (its name
// as asked). PGlite runs without fsync (docs/operations.md, "Durability"): its promise is a
// process crash, which this is; PostgreSQL's covers an operating-system crash too, which a test
// here cannot cause.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
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
  type Proc,
  requestToken,
  stop,
  waitHealthy,
} from '../helpers/cli.js';

const ROOT_ID = 'root-admin';
const ROOT_SECRET = 'gatehouse_test_root_secret_0123456789abcdefghij';
const WRITERS = 6;
/** acknowledged writes before the kill */
const BEFORE_KILL = 30;
const CREATE = 'mutation($n: String!) { createTenant(newTenant: {name: $n, partnerTenantID: "1"}) { id name } }';
const FIND = 'query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids, maxResults: 100}) { results { id name } } }';

async function gql(port: number, token: string, query: string, variables: Record<string, unknown>) {
  const res = await fetch(`http://127.0.0.1:${port}/public/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function tokenOf(port: number): Promise<string> {
  const r = await requestToken(port, ROOT_ID, ROOT_SECRET);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token as string;
}

const engines: { name: string; skip: string | false }[] = [
  { name: 'PGlite', skip: false },
  { name: 'PostgreSQL', skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL' },
];

describe('kill -9 under write load, then a restart: every acknowledged write is there', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-kill-9-'));
  const drops: (() => Promise<void>)[] = [];
  after(async () => {
    await killAll();
    for (const drop of drops) await drop();
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const engine of engines) {
    it(`on ${engine.name}`, { skip: engine.skip, timeout: 180_000 }, async () => {
      ensureBuilt();
      const vars: Record<string, string> = {
        GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
        GATEHOUSE_BOOTSTRAP_CLIENT_ID: ROOT_ID,
        GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_SECRET,
      };
      if (engine.name === 'PGlite') {
        vars.GATEHOUSE_DATA_DIR = await migratedDataDir(join(tmp, 'pglite'));
      } else {
        const db = await createDatabase('gh_kill9');
        drops.push(db.drop);
        vars.DATABASE_URL = db.url;
        vars.GATEHOUSE_DATA_DIR = join(tmp, 'pg');
      }
      const start = async (): Promise<{ p: Proc; port: number }> => {
        const port = await freePort();
        const p = gatehouse(['serve'], { ...vars, PORT: String(port) });
        await waitHealthy(p, port);
        return { p, port };
      };

      const first = await start();
      const token = await tokenOf(first.port);
      const acknowledged = new Map<string, string>(); // id -> name
      let asked = 0;
      let killed = false;
      let dead!: () => void;
      const enough = new Promise<void>((resolve) => (dead = resolve));
      const writer = async (w: number) => {
        for (let n = 0; !killed; n++) {
          const name = `k9 ${w} ${n}`;
          asked++;
          try {
            const r = await gql(first.port, token, CREATE, { n: name });
            if (r.status !== 200) continue;
            assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
            acknowledged.set(r.body.data.createTenant.id, name);
            if (acknowledged.size >= BEFORE_KILL) dead();
          } catch {
            // the connection died with the process: this one was never acknowledged
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      await enough;
      // the writers go on: several mutations are in flight at the kill
      first.p.child.kill('SIGKILL');
      killed = true;
      const r = await exitOf(first.p, PATIENCE_MS);
      assert.equal(r.signal, 'SIGKILL');
      await Promise.all(writers);
      assert.ok(acknowledged.size >= BEFORE_KILL && asked > acknowledged.size, `${acknowledged.size} acknowledged of ${asked} asked`);

      if (engine.name === 'PGlite') {
        // the lock of a process known to be dead (it was killed just now) is removed, as its
        // operator may; otherwise the next start waits out the lease (docs/operations.md)
        rmSync(join(vars.GATEHOUSE_DATA_DIR!, 'gatehouse.lock'), { force: true });
      }
      const second = await start();
      try {
        const token2 = await tokenOf(second.port);
        const ids = [...acknowledged.keys()];
        const found = new Map<string, string>();
        for (let i = 0; i < ids.length; i += 100) {
          const res = await gql(second.port, token2, FIND, { ids: ids.slice(i, i + 100) });
          assert.equal(res.body.errors, undefined, JSON.stringify(res.body.errors));
          for (const t of res.body.data.tenants.results as { id: string; name: string }[]) found.set(t.id, t.name);
        }
        const lost = ids.filter((id) => found.get(id) !== acknowledged.get(id));
        assert.deepEqual(lost, [], `acknowledged before the kill, missing or changed after the restart (${acknowledged.size} acknowledged)`);
        // whatever else is there was asked for, whole: never a tenant the writers did not name
        const all = await gql(
          second.port,
          token2,
          'query { tenants(tenantsQuery: {name: "k9 %", maxResults: 100, pageNum: 1}) { totalCount results { name } } }',
          {},
        );
        assert.equal(all.body.errors, undefined, JSON.stringify(all.body.errors));
        assert.ok(all.body.data.tenants.totalCount >= acknowledged.size && all.body.data.tenants.totalCount <= asked);
        for (const t of all.body.data.tenants.results as { name: string }[]) assert.match(t.name, /^k9 \d+ \d+$/);
      } finally {
        await stop(second.p);
      }
    });
  }
});
