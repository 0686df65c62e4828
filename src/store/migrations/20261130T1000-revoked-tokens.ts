// Revoked access tokens (RFC 7009, oauth/revocation-store.ts): a token's id (jti), its tenant and
// its expiry, after which the purge deletes the row. Its writes are changes for the
// authentication caches of every process (the trigger of 20261126T0900-auth-changes's function),
// so that a revoked token stops working everywhere at once. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const revokedTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table revoked_tokens (
        jti uuid primary key,
        tenant_id bigint not null,
        expires_at timestamptz not null
      )`.execute(db);
    await sql`create index revoked_tokens_expiry_idx on revoked_tokens (expires_at)`.execute(db);
    await sql`
      create trigger revoked_tokens_auth_change after insert or update or delete on revoked_tokens
      for each statement execute function gatehouse_notify_auth_change()`.execute(db);
  },
};
