// Device authorization (RFC 8628): one row per device code, from its issue until it expires or
// its token is issued. Only the device code's SHA-256 is kept. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const deviceAuthorizations: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table device_authorizations (
        device_code_hash bytea primary key,
        user_code text not null unique,
        client_id text not null,
        login_hint text not null,
        status text not null check (status in ('pending', 'approved', 'denied', 'issued')),
        user_id uuid references users (id) on delete cascade,
        interval_seconds integer not null,
        last_polled_at timestamptz,
        created_at timestamptz not null,
        expires_at timestamptz not null
      )`.execute(db);
    await sql`create index device_authorizations_expires_idx on device_authorizations (expires_at)`.execute(db);
  },
};
