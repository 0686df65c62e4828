// The audit trail people read (docs/operations.md "Audit trail"): who acted (and from which
// tenant), the outcome, the request id and the client's address beside each event; an index
// for a tenant's events in time order (the GraphQL query and its cursor: occurred_at, id) and
// one on the time alone (the retention purge and `gatehouse audit export --since`).
// Rows written before this migration are successes of an unknown request. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const auditTrail: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table audit_events add column actor_tenant_id bigint`.execute(db);
    await sql`alter table audit_events add column outcome text not null default 'success'`.execute(db);
    await sql`alter table audit_events add column request_id text`.execute(db);
    await sql`alter table audit_events add column address text`.execute(db);
    await sql`drop index audit_events_tenant_time_idx`.execute(db);
    await sql`create index audit_events_tenant_time_idx on audit_events (tenant_id, occurred_at, id)`.execute(db);
    await sql`create index audit_events_time_idx on audit_events (occurred_at, id)`.execute(db);
  },
};
