// AuditStore on Kysely (both engines).
import { randomUUID } from 'node:crypto';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { AuditOutcome, StoredAuditEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Database } from './schema.js';

type EventRow = Database['audit_events'] extends infer T ? { [K in keyof T]: unknown } : never;

function fromRow(r: EventRow): StoredAuditEvent {
  const details = typeof r.details === 'string' ? (JSON.parse(r.details) as Record<string, unknown>) : (r.details as Record<string, unknown>);
  return {
    id: r.id as string,
    occurredAt: new Date(r.occurred_at as Date | string),
    tenantId: String(r.tenant_id),
    actor: {
      kind: r.actor_kind as StoredAuditEvent['actor']['kind'],
      id: r.actor_id as string,
      tenantId: r.actor_tenant_id === null ? null : String(r.actor_tenant_id),
    },
    action: r.action as string,
    target: { kind: r.target_kind as string, id: r.target_id as string },
    details,
    outcome: r.outcome as AuditOutcome,
    requestId: (r.request_id as string | null) ?? null,
    address: (r.address as string | null) ?? null,
  };
}

export function auditStore(db: Kysely<Database>): AuditStore {
  return {
    async insertEvent(e) {
      await db
        .insertInto('audit_events')
        .values({
          id: randomUUID(),
          occurred_at: e.occurredAt,
          tenant_id: e.tenantId,
          actor_kind: e.actor.kind,
          actor_id: e.actor.id,
          actor_tenant_id: e.actor.tenantId ?? null,
          action: e.action,
          target_kind: e.target.kind,
          target_id: e.target.id,
          details: JSON.stringify(e.details ?? {}),
          outcome: e.outcome ?? 'success',
          request_id: e.request?.id ?? null,
          address: e.request?.address ?? null,
        })
        .execute();
    },

    async listEvents(scope, filter, after, limit) {
      let q: SelectQueryBuilder<Database, 'audit_events', object> = db
        .selectFrom('audit_events')
        .where('tenant_id', 'in', (sub) => sub.selectFrom('tenant_closure').select('tenant_id').where('ancestor_id', '=', scope.subtreeOf));
      if (scope.tenantId) q = q.where('tenant_id', '=', scope.tenantId);
      if (filter.from) q = q.where('occurred_at', '>=', filter.from);
      if (filter.to) q = q.where('occurred_at', '<=', filter.to);
      if (filter.actorId) q = q.where('actor_id', '=', filter.actorId);
      if (filter.action) q = q.where('action', '=', filter.action);
      if (filter.outcome) q = q.where('outcome', '=', filter.outcome);
      // newest first; ties by id, so that a page boundary between equal times loses nothing
      if (after) {
        q = q.where((eb) =>
          eb.or([eb('occurred_at', '<', after.occurredAt), eb.and([eb('occurred_at', '=', after.occurredAt), eb('id', '<', after.id)])]),
        );
      }
      const rows = await q.selectAll().orderBy('occurred_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(fromRow);
    },

    async exportEvents(since, tenantId, after, limit) {
      let q = db.selectFrom('audit_events').where('occurred_at', '>=', since);
      if (tenantId !== null) {
        q = q.where('tenant_id', 'in', (sub) => sub.selectFrom('tenant_closure').select('tenant_id').where('ancestor_id', '=', tenantId));
      }
      if (after) {
        q = q.where((eb) =>
          eb.or([eb('occurred_at', '>', after.occurredAt), eb.and([eb('occurred_at', '=', after.occurredAt), eb('id', '>', after.id)])]),
        );
      }
      const rows = await q.selectAll().orderBy('occurred_at', 'asc').orderBy('id', 'asc').limit(limit).execute();
      return rows.map(fromRow);
    },

    async deleteEventsBefore(before) {
      const r = await db.deleteFrom('audit_events').where('occurred_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
