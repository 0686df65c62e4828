// What counts as a change for the authentication caches, on both engines: the writes this process
// makes (write-watch.ts) and the triggers that tell other processes (migration
// 20261126T0900-auth-changes, 20261128T0900-listing-changes) name the same tables and columns, a change is seen the moment its
// statement is sent and again once it has committed, and a write that changes nothing a cache
// holds (a tenant's name, a user's display name) leaves the caches alone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { AUTH_TABLES } from '../../src/store/auth-changes.js';
import type { Db } from '../../src/store/db.js';
import { ManualClock } from '../../src/clock.js';
import { createStore } from '../../src/store/index.js';
import { isAuthWrite } from '../../src/store/write-watch.js';
import { openTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

for (const engine of engines()) {
  describe(`auth changes (${engine})`, () => {
    let db: Db;
    before(async () => {
      db = await openTestDb(engine);
    });
    after(async () => {
      await db.close();
    });

    /** how many times the signal moved while `write` ran */
    async function bumps(write: () => Promise<unknown>): Promise<number> {
      const before = db.changes.generation;
      await write();
      return db.changes.generation - before;
    }

    it('the triggers tell other processes about the same tables and columns this process watches', async () => {
      const rows = await sql<{ table: string; def: string }>`
        select c.relname as table, pg_get_triggerdef(t.oid) as def
        from pg_trigger t join pg_class c on c.oid = t.tgrelid
        where not t.tgisinternal and t.tgname like '%_auth_change' and c.relnamespace = current_schema()::regnamespace`.execute(db.kysely);
      const fromTriggers: Record<string, { updates: string[] | '*'; inserts: boolean; deletes: boolean }> = {};
      for (const { table, def } of rows.rows) {
        const events = /AFTER (.*) ON /.exec(def)![1]!;
        const of = /UPDATE OF ([\w, ]+?)(?: OR |$)/.exec(events);
        fromTriggers[table] = {
          updates: of ? of[1]!.split(', ').sort() : /UPDATE/.test(events) ? '*' : [],
          inserts: /INSERT/.test(events),
          deletes: /DELETE/.test(events),
        };
        assert.match(def, /FOR EACH STATEMENT EXECUTE FUNCTION gatehouse_notify_auth_change\(\)/);
      }
      const watched = Object.fromEntries(
        Object.entries(AUTH_TABLES).map(([table, rule]) => [
          table,
          { updates: rule.updates === '*' ? '*' : [...rule.updates].sort(), inserts: rule.inserts, deletes: true },
        ]),
      );
      assert.deepEqual(fromTriggers, watched);
    });

    it('a watched write outside a transaction is signalled when sent and after it committed', async () => {
      assert.equal(await bumps(() => db.kysely.updateTable('tenants').set({ support_enabled: false }).where('id', '=', '999999').execute()), 2);
      assert.equal(await bumps(() => db.kysely.deleteFrom('role_assignments').where('principal_id', '=', crypto.randomUUID()).execute()), 2);
    });

    it('writes that change nothing a cache holds are not signalled', async () => {
      assert.equal(await bumps(() => db.kysely.updateTable('tenants').set({ name: 'x' }).where('id', '=', '999999').execute()), 0);
      assert.equal(await bumps(() => db.kysely.updateTable('users').set({ display_name: 'x' }).where('id', '=', crypto.randomUUID()).execute()), 0);
      assert.equal(await bumps(() => db.kysely.selectFrom('clients').selectAll().execute()), 0);
      // a new tenant or user is in no cache: only a miss could have been, and misses are not kept
      const insertInto = (table: 'tenants' | 'clients' | 'users' | 'client_secrets' | 'role_assignments' | 'signing_keys') =>
        isAuthWrite(
          db.kysely
            .insertInto(table)
            .values({} as never)
            .toOperationNode(),
        );
      for (const table of ['tenants', 'users'] as const) assert.equal(insertInto(table), false, table);
      // a new client joins the cached listings; a new secret, role or key would be missing from a
      // cached client or principal
      for (const table of ['clients', 'client_secrets', 'role_assignments', 'signing_keys'] as const) assert.equal(insertInto(table), true, table);
      // an upsert may update what it meets
      const upsert = db.kysely
        .insertInto('users')
        .values({} as never)
        .onConflict((oc) => oc.doNothing());
      assert.equal(isAuthWrite(upsert.toOperationNode()), true);
    });

    it("every write to a client or its secrets is signalled: the cached listings show each column, a secret's last use included", async () => {
      assert.equal(await bumps(() => db.kysely.updateTable('clients').set({ name: 'x' }).where('id', '=', crypto.randomUUID()).execute()), 2);
      assert.equal(
        await bumps(() => db.kysely.updateTable('client_secrets').set({ last_used_at: new Date() }).where('id', '=', crypto.randomUUID()).execute()),
        2,
      );
    });

    it('raw SQL that writes a watched table is signalled', async () => {
      assert.equal(await bumps(() => sql`update clients set revoked_at = revoked_at where false`.execute(db.kysely)), 2);
    });

    it('a store transaction with a watched write signals once more after COMMIT, and one without none', async () => {
      const store = createStore(db.kysely, new ManualClock(new Date('2026-11-22T10:00:00Z')), { changes: db.changes });
      let during = 0;
      const n = await bumps(() =>
        store.transaction(async (tx) => {
          const g = db.changes.generation;
          await tx.users.setDisabled(crypto.randomUUID(), null, new Date(), crypto.randomUUID());
          during = db.changes.generation - g;
        }),
      );
      assert.equal(during, 2);
      assert.equal(n, 3, 'sent, statement done, and the commit');
      assert.equal(await bumps(() => store.transaction(async (tx) => tx.tenants.findScope('1'))), 0);
    });
  });
}
