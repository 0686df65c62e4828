// The token endpoint's guessing throttle, shared by every process of one database
// (oauth/failure-throttle.ts): failure counts per key (a client id and address, or an address)
// in a window that begins with the key's first failure, and which clients authenticated from
// which address (they pass an address's limit). Rows past their window are purged
// (maintenance/purge.ts). Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const tokenFailures: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table token_failures (
        key text primary key,
        failures integer not null,
        window_start timestamptz not null
      )`.execute(db);
    await sql`create index token_failures_window_idx on token_failures (window_start)`.execute(db);
    await sql`
      create table token_trust (
        address text not null,
        client_id text not null,
        trusted_at timestamptz not null,
        primary key (address, client_id)
      )`.execute(db);
    await sql`create index token_trust_time_idx on token_trust (trusted_at)`.execute(db);
  },
};
