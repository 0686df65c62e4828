// Processes seen recently (`gatehouse status`): each serve process writes its row every
// HEARTBEAT_SECONDS (maintenance/heartbeat.ts) — host, pid, version, when it started and when it
// was last seen. Rows of processes gone a week are purged. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const processHeartbeats: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table process_heartbeats (
        process_id text primary key,
        host text not null,
        pid integer not null,
        version text not null,
        started_at timestamptz not null,
        last_seen_at timestamptz not null
      )`.execute(db);
    await sql`create index process_heartbeats_seen_idx on process_heartbeats (last_seen_at)`.execute(db);
  },
};
