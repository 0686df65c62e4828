// AuditStore on Kysely (both engines).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuditStore } from '../audit/store.js';
import type { Database } from './schema.js';

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
          action: e.action,
          target_kind: e.target.kind,
          target_id: e.target.id,
          details: JSON.stringify(e.details ?? {}),
        })
        .execute();
    },
  };
}
