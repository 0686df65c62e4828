// Safe retries (docs/graphql.md "Safe retries: Idempotency-Key"): one row per caller and key, for
// 24 hours. The request's fingerprint (SHA-256), its state (running, committed in the change's
// own transaction, done), which claim of the key holds it (a request only ever changes the row of
// its own claim), the answer sealed under the encryption key once done (it may hold a client
// secret), how long a running request holds the key, and when the key is forgotten.
// Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const idempotencyKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table idempotency_keys (
        caller text not null,
        key text not null,
        fingerprint bytea not null,
        claim_id uuid not null,
        state text not null check (state in ('running', 'committed', 'done')),
        answer_sealed text,
        created_at timestamptz not null,
        locked_until timestamptz not null,
        expires_at timestamptz not null,
        primary key (caller, key)
      )`.execute(db);
    await sql`create index idempotency_keys_expires_idx on idempotency_keys (expires_at)`.execute(db);
  },
};
