// The token endpoint's shared failure counts (oauth/throttle-store.ts): one upsert per failure, so
// that processes counting the same key at once each get their own, exact, count.
import { type Kysely, sql } from 'kysely';
import type { FailureWindow, TokenThrottleStore } from '../oauth/throttle-store.js';
import type { Database } from './schema.js';

export function tokenThrottleStore(db: Kysely<Database>): TokenThrottleStore {
  return {
    async addTokenFailure(key, at, windowStart) {
      const over = sql<boolean>`token_failures.window_start <= ${windowStart}`;
      const row = await db
        .insertInto('token_failures')
        .values({ key, failures: 1, window_start: at })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            failures: sql`case when ${over} then 1 else token_failures.failures + 1 end`,
            window_start: sql`case when ${over} then excluded.window_start else token_failures.window_start end`,
          }),
        )
        .returning(['failures', 'window_start'])
        .executeTakeFirstOrThrow();
      return { failures: row.failures, since: new Date(row.window_start) };
    },

    async reserveTokenAttempt(key, limit, at, windowStart) {
      const over = sql<boolean>`token_failures.window_start <= ${windowStart}`;
      const row = await db
        .insertInto('token_failures')
        .values({ key, failures: 1, window_start: at })
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet({
              failures: sql`case when ${over} then 1 else token_failures.failures + 1 end`,
              window_start: sql`case when ${over} then excluded.window_start else token_failures.window_start end`,
            })
            .where(sql<boolean>`${over} or token_failures.failures < ${limit}::int`),
        )
        .returning(['failures', 'window_start'])
        .executeTakeFirst();
      if (row) return { counted: true, window: { failures: row.failures, since: new Date(row.window_start) } };
      const now = await db.selectFrom('token_failures').select(['failures', 'window_start']).where('key', '=', key).executeTakeFirst();
      return { counted: false, window: now ? { failures: now.failures, since: new Date(now.window_start) } : { failures: limit, since: at } };
    },

    async releaseTokenAttempt(key) {
      await db
        .updateTable('token_failures')
        .set({ failures: sql`token_failures.failures - 1` })
        .where('key', '=', key)
        .where('failures', '>', 0)
        .execute();
    },

    async findTokenFailures(keys, windowStart) {
      const rows = await db
        .selectFrom('token_failures')
        .select(['key', 'failures', 'window_start'])
        .where('key', 'in', keys)
        .where('window_start', '>', windowStart)
        .execute();
      return new Map<string, FailureWindow>(rows.map((r) => [r.key, { failures: r.failures, since: new Date(r.window_start) }]));
    },

    async clearTokenFailures(key) {
      await db.deleteFrom('token_failures').where('key', '=', key).execute();
    },

    async trustTokenClient(address, clientId, at) {
      await db
        .insertInto('token_trust')
        .values({ address, client_id: clientId, trusted_at: at })
        .onConflict((oc) =>
          oc.columns(['address', 'client_id']).doUpdateSet({ trusted_at: sql`greatest(token_trust.trusted_at, excluded.trusted_at)` }),
        )
        .execute();
    },

    async trustedTokenClients(address, since) {
      const rows = await db
        .selectFrom('token_trust')
        .select(['client_id', 'trusted_at'])
        .where('address', '=', address)
        .where('trusted_at', '>', since)
        .execute();
      return rows.map((r) => ({ clientId: r.client_id, at: new Date(r.trusted_at) }));
    },

    async deleteStaleTokenThrottle(windowStart) {
      const a = await db.deleteFrom('token_failures').where('window_start', '<=', windowStart).executeTakeFirst();
      const b = await db.deleteFrom('token_trust').where('trusted_at', '<=', windowStart).executeTakeFirst();
      return Number(a.numDeletedRows) + Number(b.numDeletedRows);
    },
  };
}
