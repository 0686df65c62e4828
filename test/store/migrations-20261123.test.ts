// Upgrading a database of the release before 2026-11-23:
// - names were compared case-sensitively (clients, services) or kept inner whitespace runs in their
//   keys (labels, subscriptions): names that now collide are kept apart by renaming the younger
//   ones "name (2)" … (services were compared by lower(name) only, so their collisions are
//   full-width twins), with an audit event each, and the new unique indexes hold afterwards;
//   tenants' keys are case-folded; nothing is deleted;
// - tenants disabled at the upgrade get the time access was cut, so re-enabling them does not
//   revive their principals' old tokens.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/store/migrate.js';
import type { Db } from '../../src/store/db.js';
import { migrateUpTo, openEmptyTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

const BEFORE = '20261122T1900-tenant-closure';

for (const engine of engines()) {
  describe(`upgrade from the schema before 2026-11-23 (${engine})`, () => {
    let db: Db;
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 12, minute));
    const ids = { clients: [] as string[], services: [] as string[], labels: [] as string[], subs: [] as string[] };
    const longLabel = 'L'.repeat(99);

    before(async () => {
      db = await openEmptyTestDb(engine);
      await migrateUpTo(db, BEFORE);
      const k = db.kysely as any;
      const tenant = (id: string, parent: string | null, path: string, name = `t${id}`, enabled = true) =>
        k
          .insertInto('tenants')
          .values({
            id,
            parent_id: parent,
            path,
            depth: path.split('.').length - 2,
            name,
            name_normalized: name.toLowerCase(),
            is_partner: true,
            enabled,
            created_at: at(0),
            updated_at: at(0),
          })
          .execute();
      await tenant('1', null, '1.');
      await tenant('2', '1', '1.2.');
      await tenant('3', '1', '1.3.', 'Hauptstraße GmbH');
      await tenant('4', '1', '1.4.', 'Disabled Co', false);

      // clients: three spellings of one name in tenant 2, a revoked twin, and the same name in tenant 1
      const client = async (tenantId: string, name: string, minute: number, revoked = false) => {
        const id = randomUUID();
        await k
          .insertInto('clients')
          .values({
            id,
            tenant_id: tenantId,
            client_id: id.replace(/-/g, ''),
            name,
            environment: 'us1',
            created_at: at(minute),
            updated_at: at(minute),
            revoked_at: revoked ? at(minute) : null,
          })
          .execute();
        return id;
      };
      ids.clients.push(await client('2', 'CI Pipeline', 1), await client('2', 'ci pipeline', 2), await client('2', 'CI PIPELINE', 3));
      ids.clients.push(await client('2', 'Ci Pipeline', 4, true), await client('1', 'ci pipeline', 5), await client('2', 'ci pipeline (2)', 0));

      for (const [name, minute] of [
        ['Detection', 1],
        ['ｄｅｔｅｃｔｉｏｎ', 2],
      ] as const) {
        const id = randomUUID();
        await k
          .insertInto('services')
          .values({ id, owner_tenant_id: '1', name, created_at: at(minute), updated_at: at(minute) })
          .execute();
        ids.services.push(id);
      }
      for (const [name, key, minute] of [
        ['team blue', 'team blue', 1],
        ['team   blue', 'team   blue', 2],
        [longLabel, longLabel.toLowerCase(), 3],
        [longLabel.toLowerCase(), longLabel.toLowerCase() + ' ', 4],
      ] as const) {
        const id = randomUUID();
        await k
          .insertInto('tenant_labels')
          .values({ id, tenant_id: '2', name, name_normalized: key, owner_partner_tenant_id: '1', created_at: at(minute), updated_at: at(minute) })
          .execute();
        ids.labels.push(id);
      }
      for (const [name, key, minute, retired] of [
        ['Gold  Plan', 'gold  plan', 1, false],
        ['gold plan', 'gold plan', 2, false],
        ['GOLD PLAN', 'gold plan', 0, true],
      ] as const) {
        const id = randomUUID();
        await k
          .insertInto('partner_subscriptions')
          .values({
            id,
            partner_tenant_id: '1',
            service_id: ids.services[0],
            name,
            name_normalized: key,
            created_at: at(minute),
            updated_at: at(minute),
            retired_at: retired ? at(minute) : null,
          })
          .execute();
        ids.subs.push(id);
      }
      await migrateToLatest(db.kysely);
    });
    after(() => db.close());

    const names = async (table: string, list: string[]) => {
      const rows = await sql<{
        id: string;
        name: string;
        name_normalized: string;
      }>`select id::text as id, name, name_normalized from ${sql.table(table)}`.execute(db.kysely);
      return list.map((id) => rows.rows.find((r) => r.id === id)!.name);
    };

    it('keeps the oldest name and renames the younger live twins, skipping names already taken', async () => {
      // "ci pipeline (2)" existed already, so the twins become (3) and (4)
      assert.deepEqual(await names('clients', ids.clients), [
        'CI Pipeline',
        'ci pipeline (3)',
        'CI PIPELINE (4)',
        'Ci Pipeline',
        'ci pipeline',
        'ci pipeline (2)',
      ]);
      assert.deepEqual(await names('services', ids.services), ['Detection', 'ｄｅｔｅｃｔｉｏｎ (2)']);
      // a renamed label stays within the 100 characters label names may have
      assert.deepEqual(await names('tenant_labels', ids.labels), ['team blue', 'team blue (2)', longLabel, `${'l'.repeat(96)} (2)`]);
      // the retired subscription takes no part; the live ones collapse to one key
      assert.deepEqual(await names('partner_subscriptions', ids.subs), ['Gold Plan', 'gold plan (2)', 'GOLD PLAN']);
    });

    it('records each rename in the audit log', async () => {
      const events = await sql<{ action: string; target_id: string; details: Record<string, string> }>`
        select action, target_id, details from audit_events where actor_id = 'migration' order by action, target_id`.execute(db.kysely);
      assert.equal(events.rows.length, 6);
      const client = events.rows.find((e) => e.target_id === ids.clients[1]);
      assert.equal(client?.action, 'client.renamed');
      assert.deepEqual(client?.details, { from: 'ci pipeline', to: 'ci pipeline (3)', reason: 'names are now compared case-insensitively' });
    });

    it('case-folds tenant keys (name search compares them), leaving ASCII names as they were', async () => {
      const rows = await sql<{ id: string; name_normalized: string }>`select id::text as id, name_normalized from tenants order by id`.execute(
        db.kysely,
      );
      assert.deepEqual(
        rows.rows.map((r) => [r.id, r.name_normalized]),
        [
          ['1', 't1'],
          ['2', 't2'],
          ['3', 'hauptstrasse gmbh'],
          ['4', 'disabled co'],
        ],
      );
      const closure = await sql<{
        name_normalized: string;
      }>`select name_normalized from tenant_closure where tenant_id = 3 and ancestor_id = 1`.execute(db.kysely);
      assert.equal(closure.rows[0]?.name_normalized, 'hauptstrasse gmbh', 'the closure copy follows');
    });

    it('marks tenants disabled at the upgrade as cut off, and no others', async () => {
      const rows = await sql<{ id: string; cut: Date | null }>`select id::text as id, tokens_valid_after as cut from tenants order by id`.execute(
        db.kysely,
      );
      assert.deepEqual(
        rows.rows.filter((r) => r.cut !== null).map((r) => r.id),
        ['4'],
      );
    });

    it('enforces the new keys: a case twin of a live client cannot be inserted', async () => {
      await assert.rejects(
        (db.kysely as any)
          .insertInto('clients')
          .values({
            id: randomUUID(),
            tenant_id: '2',
            client_id: 'x1',
            name: 'CI pipeline',
            name_normalized: 'ci pipeline',
            environment: 'us1',
            created_at: at(9),
            updated_at: at(9),
          })
          .execute(),
        /clients_tenant_name_live_uq/,
      );
    });
  });
}
