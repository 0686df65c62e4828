// HeartbeatStore on Kysely (both engines).
import type { Kysely } from 'kysely';
import type { HeartbeatStore } from '../maintenance/heartbeat.js';
import type { Database } from './schema.js';

export function heartbeatStore(db: Kysely<Database>): HeartbeatStore {
  return {
    async beat(b) {
      await db
        .insertInto('process_heartbeats')
        .values({
          process_id: b.processId,
          host: b.host,
          pid: b.pid,
          version: b.version,
          started_at: b.startedAt,
          last_seen_at: b.lastSeenAt,
        })
        .onConflict((oc) => oc.column('process_id').doUpdateSet({ last_seen_at: b.lastSeenAt }))
        .execute();
    },
    async seenSince(since) {
      const rows = await db.selectFrom('process_heartbeats').selectAll().where('last_seen_at', '>=', since).orderBy('last_seen_at', 'desc').execute();
      return rows.map((r) => ({
        processId: r.process_id,
        host: r.host,
        pid: Number(r.pid),
        version: r.version,
        startedAt: new Date(r.started_at),
        lastSeenAt: new Date(r.last_seen_at),
      }));
    },
    async deleteSeenBefore(before) {
      const r = await db.deleteFrom('process_heartbeats').where('last_seen_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
