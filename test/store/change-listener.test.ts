// The listener that hears other processes' changes on PostgreSQL (change-listener.ts): a change
// written by another connection reaches the cache; when the listening connection is cut, the
// caches keep nothing until it is back (a change made meanwhile is never served stale), and once
// back, changes are heard again. PostgreSQL only: PGlite has no other process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { ManualClock } from '../../src/clock.js';
import { createStore, type Store } from '../../src/store/index.js';
import { openTestDb, type TestDb } from '../helpers/db.js';
import { waitFor } from '../helpers/cli.js';

const skip = process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL';
/** generous: the notification arrives in milliseconds; this only bounds a hung test */
const PATIENCE_MS = 15_000;

describe('listening for other processes’ changes (postgres)', { skip }, () => {
  let db: TestDb;
  let other: pg.Client;
  let store: Store;
  let database: string;
  const events: string[] = [];

  before(async () => {
    db = await openTestDb('postgres');
    database = (await sql<{ d: string }>`select current_database() as d`.execute(db.kysely)).rows[0]!.d;
    await db.listenForChanges!({ lost: () => events.push('lost'), restored: () => events.push('restored') });
    // a cache lifetime far beyond the test: only a heard change can refresh what it holds
    store = createStore(db.kysely, new ManualClock(new Date('2026-11-22T10:00:00Z')), { changes: db.changes, cacheLifetimeMs: 600_000 });
    other = new pg.Client({ connectionString: db.url });
    await other.connect();
    await other.query(
      `insert into tenants (id, name, name_normalized, path, depth, created_at, updated_at) values (1, 'v', 'v', '1.', 0, now(), now())`,
    );
  });
  after(async () => {
    await other?.end();
    await db?.close();
  });

  async function support(): Promise<boolean | undefined> {
    return (await store.tenants.findScope('1'))?.supportEnabled;
  }
  async function setSupport(on: boolean) {
    await other.query('update tenants set support_enabled = $1 where id = 1', [on]);
  }

  it('a change another connection writes reaches the cached read', async () => {
    await setSupport(false);
    await waitFor('the first change heard', PATIENCE_MS, async () => ((await support()) === false ? true : undefined));
    await setSupport(true);
    await waitFor('the change heard', PATIENCE_MS, async () => ((await support()) === true ? true : undefined));
  });

  it('a client_id remembered as unknown is found once another connection writes the client', async () => {
    const clientId = 'written-elsewhere';
    assert.equal(await store.credentials.findAuthClient(clientId), undefined);
    assert.equal(await store.credentials.findAuthClient(clientId), undefined); // remembered (store/index.ts)
    await other.query(
      `insert into clients (id, tenant_id, client_id, name, name_normalized, environment, created_at, updated_at)
       values (gen_random_uuid(), 1, $1, $1, $1, 'eu1', now(), now())`,
      [clientId],
    );
    await waitFor('the new client heard', PATIENCE_MS, async () => (await store.credentials.findAuthClient(clientId)) ?? undefined);
  });

  it('while the listening connection is down nothing is cached; once back, changes are heard again', async () => {
    assert.equal(await support(), true);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      const cut = await admin.query('select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = $1 and datname = $2', [
        'gatehouse changes',
        database,
      ]);
      assert.equal(cut.rowCount, 1, 'one listening connection');
    } finally {
      await admin.end();
    }
    await waitFor('the loss noticed', PATIENCE_MS, () => (events.includes('lost') ? true : undefined));
    // a change while nobody listens: it is read from the database, not from the cache
    await setSupport(false);
    if (!db.changes.reliable) assert.equal(await support(), false);
    await waitFor('the listener back', PATIENCE_MS, () => (events.includes('restored') ? true : undefined));
    assert.equal(await support(), false);
    await setSupport(true);
    await waitFor('a change heard after the reconnect', PATIENCE_MS, async () => ((await support()) === true ? true : undefined));
  });
});
