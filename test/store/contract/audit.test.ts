// AuditStore contract (src/audit/store.ts), on every engine: an event is written whole, with its
// details, in the transaction of the change it records: a change rolled back leaves no event,
// and events written at once are all kept. The interface has no read method: events are read
// back from their table.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AuditEvent } from '../../../src/audit/model.js';
import type { Tenant } from '../../../src/tenants/model.js';
import { at, type Contract, fulfilled, openContract, race, RACERS, T0, twoTenants } from './harness.js';
import { engines } from '../../helpers/engines.js';

interface Row {
  tenant_id: string;
  occurred_at: Date;
  actor_kind: string;
  actor_id: string;
  action: string;
  target_kind: string;
  target_id: string;
  details: Record<string, unknown> | string;
}

for (const engine of engines()) {
  describe(`AuditStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    /** the events about a target, as stored */
    const eventsOf = async (targetId: string) =>
      (
        await sql<Row>`select tenant_id::text as tenant_id, occurred_at, actor_kind, actor_id, action, target_kind, target_id, details
          from audit_events where target_id = ${targetId} order by occurred_at`.execute(c.db.kysely)
      ).rows.map((r) => ({ ...r, occurred_at: new Date(r.occurred_at), details: typeof r.details === 'string' ? JSON.parse(r.details) : r.details }));

    const event = (targetId: string, over: Partial<AuditEvent> = {}): AuditEvent => ({
      occurredAt: T0,
      tenantId: a.id,
      actor: { kind: 'user', id: randomUUID() },
      action: 'client.created',
      target: { kind: 'client', id: targetId },
      details: { name: 'ci', roles: ['Analyst'], hint: 'gh_…abcd' },
      ...over,
    });

    it('insertEvent writes the event whole, details included (none: an empty object)', async () => {
      const target = randomUUID();
      const e = event(target);
      await c.store.audit.insertEvent(e);
      await c.store.audit.insertEvent(
        event(target, { occurredAt: at(1), tenantId: b.id, actor: { kind: 'system', id: 'expiry' }, details: undefined }),
      );
      assert.deepEqual(await eventsOf(target), [
        {
          tenant_id: a.id,
          occurred_at: T0,
          actor_kind: 'user',
          actor_id: e.actor.id,
          action: 'client.created',
          target_kind: 'client',
          target_id: target,
          details: { name: 'ci', roles: ['Analyst'], hint: 'gh_…abcd' },
        },
        {
          tenant_id: b.id,
          occurred_at: at(1),
          actor_kind: 'system',
          actor_id: 'expiry',
          action: 'client.created',
          target_kind: 'client',
          target_id: target,
          details: {},
        },
      ]);
    });

    it('an event written in a transaction that rolls back is gone with the change; one that commits stays', async () => {
      const target = randomUUID();
      await assert.rejects(
        c.store.transaction(async (tx) => {
          await tx.labels.insertLabels([
            { id: target, tenantId: a.id, name: 'L', nameNormalized: 'l', value: null, ownerPartnerTenantId: a.id, restricted: false, createdAt: T0 },
          ]);
          await tx.audit.insertEvent(event(target, { action: 'label.created' }));
          throw new Error('the use case fails after writing');
        }),
        /the use case fails after writing/,
      );
      assert.deepEqual(await eventsOf(target), []);
      assert.equal(await c.store.labels.findLabel(target), undefined);
      await c.store.transaction(async (tx) => {
        await tx.audit.insertEvent(event(target, { action: 'label.created' }));
      });
      assert.equal((await eventsOf(target)).length, 1);
    });

    it('events written at once are all kept', async () => {
      const target = randomUUID();
      fulfilled(await race(RACERS, (i) => c.store.audit.insertEvent(event(target, { occurredAt: at(i) }))));
      assert.deepEqual(
        (await eventsOf(target)).map((e) => e.occurred_at),
        Array.from({ length: RACERS }, (_, i) => at(i)),
      );
    });
  });
}
