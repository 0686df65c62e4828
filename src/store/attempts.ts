// AttemptStore on Kysely (both engines): the counts of attempts/model.ts in sign_in_failures.
// reserveAttempt is one INSERT ... ON CONFLICT DO UPDATE ... WHERE: PostgreSQL takes the row's
// lock and evaluates the WHERE on its newest version, so attempts at once are counted one after
// another and those past the allowance find the WHERE false and count nothing.
import { type Kysely, sql } from 'kysely';
import { FIRST_DELAY_SECONDS, MAX_DELAY_SECONDS } from '../attempts/model.js';
import type { AttemptStore } from '../attempts/store.js';
import type { Database } from './schema.js';

export function attemptStore(db: Kysely<Database>): AttemptStore {
  return {
    async reserveAttempt(key, rule, now) {
      const resetFrom = new Date(now.getTime() - rule.resetSeconds * 1000);
      const stale =
        rule.after === 'window'
          ? sql<boolean>`sign_in_failures.first_failure_at <= ${resetFrom}`
          : sql<boolean>`sign_in_failures.last_failure_at <= ${resetFrom}`;
      // doubling: the delay after the last attempt (attempts/model.ts, delaySeconds); a window
      // allows nothing more until it ends (stale)
      const delayOver =
        rule.after === 'window'
          ? sql<boolean>`false`
          : sql<boolean>`sign_in_failures.last_failure_at + make_interval(secs => least(${FIRST_DELAY_SECONDS}::float8 * power(2::float8, least(sign_in_failures.failures - ${rule.free}::int, 20)), ${MAX_DELAY_SECONDS}::float8)) <= ${now}`;
      const row = await db
        .insertInto('sign_in_failures')
        .values({ key, failures: 1, first_failure_at: now, last_failure_at: now, previous_failure_at: null })
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet({
              failures: sql`case when ${stale} then 1 else sign_in_failures.failures + 1 end`,
              first_failure_at: sql`case when ${stale} then excluded.first_failure_at else sign_in_failures.first_failure_at end`,
              previous_failure_at: sql`case when ${stale} then null else sign_in_failures.last_failure_at end`,
              last_failure_at: sql`excluded.last_failure_at`,
            })
            .where(sql<boolean>`${stale} or sign_in_failures.failures < ${rule.free}::int or ${delayOver}`),
        )
        .returning('failures')
        .executeTakeFirst();
      return row?.failures;
    },

    async findAttempts(key) {
      const r = await db
        .selectFrom('sign_in_failures')
        .select(['failures', 'first_failure_at', 'last_failure_at'])
        .where('key', '=', key)
        .executeTakeFirst();
      return r && { attempts: r.failures, firstAt: r.first_failure_at, lastAt: r.last_failure_at };
    },

    async releaseAttempt(key) {
      await db
        .updateTable('sign_in_failures')
        .set({
          failures: sql`sign_in_failures.failures - 1`,
          last_failure_at: sql`coalesce(sign_in_failures.previous_failure_at, sign_in_failures.last_failure_at)`,
        })
        .where('key', '=', key)
        .where('failures', '>', 0)
        .execute();
    },

    async clearAttempts(keys) {
      if (keys.length > 0) await db.deleteFrom('sign_in_failures').where('key', 'in', keys).execute();
    },

    async deleteStaleAttempts(before) {
      const r = await db.deleteFrom('sign_in_failures').where('last_failure_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
