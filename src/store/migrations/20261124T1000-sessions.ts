// Browser sessions (docs/users.md, "Sessions"): server-side rows, so that every process of one
// database sees the same sessions and ending one ends it everywhere. The cookie holds 256 random
// bits; the row holds only their SHA-256. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const sessions: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table sessions (
        id_hash bytea primary key,
        user_id uuid references users (id) on delete cascade,
        signed_in_at timestamptz,
        state jsonb not null default '{}',
        csrf_token text not null,
        created_at timestamptz not null,
        last_seen_at timestamptz not null,
        expires_at timestamptz not null
      )`.execute(db);
    await sql`create index sessions_user_idx on sessions (user_id)`.execute(db);
    await sql`create index sessions_expires_idx on sessions (expires_at)`.execute(db);
    // failed sign-in attempts per account and per address (now attempts/model.ts), shared by every process
    await sql`
      create table sign_in_failures (
        key text primary key,
        failures integer not null,
        last_failure_at timestamptz not null
      )`.execute(db);
  },
};
