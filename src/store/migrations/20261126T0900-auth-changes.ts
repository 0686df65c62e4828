// Every process on one PostgreSQL hears the writes that change what the authentication caches
// hold: a statement-level trigger per table NOTIFYs `gatehouse_auth_changes` with the table's
// schema (deployments that share a database in separate schemas ignore each other's). The tables
// and columns are those of src/store/auth-changes.ts; test/store/auth-changes.test.ts keeps the
// two lists equal. NOTIFY is delivered at COMMIT and folded to one per transaction, so a
// transaction costs one notification however many rows it writes. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

const TRIGGERS: [table: string, events: string][] = [
  ['clients', 'update of id, tenant_id, client_id, environment, revoked_at or delete'],
  ['client_secrets', 'insert or update of id, client_id, secret_hash, expires_at, revoked_at or delete'],
  ['users', 'update of id, tenant_id, disabled_at, tokens_valid_after or delete'],
  ['tenants', 'update of id, parent_id, path, enabled, tokens_valid_after, support_enabled, support_expires_at or delete'],
  ['role_assignments', 'insert or update or delete'],
  ['signing_keys', 'insert or update or delete'],
];

export const authChanges: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create function gatehouse_notify_auth_change() returns trigger language plpgsql as $$
      begin
        perform pg_notify('gatehouse_auth_changes', tg_table_schema);
        return null;
      end
      $$`.execute(db);
    for (const [table, events] of TRIGGERS) {
      await sql
        .raw(`create trigger ${table}_auth_change after ${events} on ${table} for each statement execute function gatehouse_notify_auth_change()`)
        .execute(db);
    }
  },
};
