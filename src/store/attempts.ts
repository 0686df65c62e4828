// AttemptStore on Kysely (both engines): the counts of attempts/model.ts in sign_in_failures.
// reserveAttempts is one INSERT ... ON CONFLICT DO UPDATE ... WHERE of a row per key: for each
// row PostgreSQL takes the row's lock and evaluates the WHERE (that key's rule) on its newest
// version, so attempts at once are counted one after another and those past a key's allowance
// find its WHERE false and count nothing under it.
//
// A statement that writes several counts holds their locks until it ends, so every such
// statement takes them in one order, the keys' bytes ("C" collation), or two of them could each
// wait for a lock the other holds (a deadlock, which PostgreSQL ends by failing one): the rows of
// the upsert are sent in that order, and the statements that change or delete counts found by a
// condition lock them first, in that order (`locked`); the purge skips counts in use.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { type AttemptRule, FIRST_DELAY_SECONDS, MAX_DELAY_SECONDS } from '../attempts/model.js';
import type { AttemptStore } from '../attempts/store.js';
import type { Database } from './schema.js';

/** In the order of their bytes, which is the order of the "C" collation. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function attemptStore(db: Kysely<Database>): AttemptStore {
  /** the counts under these keys, locked in the keys' order (a CTE of a statement that writes them) */
  const locked = (keys: readonly string[]) =>
    db.with('locked', (w) => w.selectFrom('sign_in_failures').select('key').where('key', 'in', keys).orderBy(sql`key collate "C"`).forUpdate());

  return {
    async reserveAttempts(keys, now) {
      if (keys.length === 0) return new Map();
      const ordered = [...keys].sort((a, b) => byBytes(a.key, b.key));
      /** per row, the condition of its key's rule */
      const byKey = (condition: (rule: AttemptRule) => RawBuilder<boolean>) =>
        sql<boolean>`(case sign_in_failures.key ${sql.join(
          ordered.map(({ key, rule }) => sql`when ${key} then ${condition(rule)}`),
          sql` `,
        )} end)`;
      const stale = byKey((rule) => {
        const resetFrom = new Date(now.getTime() - rule.resetSeconds * 1000);
        return rule.after === 'window'
          ? sql<boolean>`sign_in_failures.first_failure_at <= ${resetFrom}`
          : sql<boolean>`sign_in_failures.last_failure_at <= ${resetFrom}`;
      });
      // within the free attempts; or, doubling, the delay after the last is over
      // (attempts/model.ts, delaySeconds); a window allows nothing more until it ends (stale)
      const allowed = byKey((rule) =>
        rule.after === 'window'
          ? sql<boolean>`sign_in_failures.failures < ${rule.free}::int`
          : sql<boolean>`sign_in_failures.failures < ${rule.free}::int or sign_in_failures.last_failure_at + make_interval(secs => least(${FIRST_DELAY_SECONDS}::float8 * power(2::float8, least(sign_in_failures.failures - ${rule.free}::int, 20)), ${MAX_DELAY_SECONDS}::float8)) <= ${now}`,
      );
      const rows = await db
        .insertInto('sign_in_failures')
        .values(ordered.map(({ key }) => ({ key, failures: 1, first_failure_at: now, last_failure_at: now, previous_failure_at: null })))
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet({
              failures: sql`case when ${stale} then 1 else sign_in_failures.failures + 1 end`,
              first_failure_at: sql`case when ${stale} then excluded.first_failure_at else sign_in_failures.first_failure_at end`,
              previous_failure_at: sql`case when ${stale} then null else sign_in_failures.last_failure_at end`,
              last_failure_at: sql`excluded.last_failure_at`,
            })
            .where(sql<boolean>`${stale} or ${allowed}`),
        )
        .returning(['key', 'failures'])
        .execute();
      return new Map(rows.map((r) => [r.key, r.failures]));
    },

    async findAttempts(keys) {
      if (keys.length === 0) return new Map();
      const rows = await db
        .selectFrom('sign_in_failures')
        .select(['key', 'failures', 'first_failure_at', 'last_failure_at'])
        .where('key', 'in', keys)
        .execute();
      return new Map(rows.map((r) => [r.key, { attempts: r.failures, firstAt: r.first_failure_at, lastAt: r.last_failure_at }]));
    },

    async releaseAttempts(keys) {
      if (keys.length === 0) return;
      await locked(keys)
        .updateTable('sign_in_failures')
        .from('locked')
        .set({
          failures: sql`sign_in_failures.failures - 1`,
          last_failure_at: sql`coalesce(sign_in_failures.previous_failure_at, sign_in_failures.last_failure_at)`,
        })
        .whereRef('sign_in_failures.key', '=', 'locked.key')
        .where('sign_in_failures.failures', '>', 0)
        .execute();
    },

    async clearAttempts(keys) {
      if (keys.length === 0) return;
      await locked(keys).deleteFrom('sign_in_failures').using('locked').whereRef('sign_in_failures.key', '=', 'locked.key').execute();
    },

    async clearAttemptsUnder(keys, prefixes) {
      if (keys.length === 0 && prefixes.length === 0) return 0;
      // by text, not LIKE (an address may hold `_` or `%`); then the rest must be one part. The
      // table is read through: this is an Administrator's rare action, and the purge keeps the
      // table to the last hour's counts (and the 30-day second-factor ones)
      const r = await db
        .with('under', (w) =>
          w
            .selectFrom('sign_in_failures')
            .select('key')
            .where((eb) =>
              eb.or([
                ...(keys.length > 0 ? [eb('key', 'in', keys)] : []),
                ...prefixes.map((p) => sql<boolean>`(left(key, length(${p})) = ${p} and strpos(substr(key, length(${p}) + 1), '|') = 0)`),
              ]),
            )
            .orderBy(sql`key collate "C"`)
            .forUpdate(),
        )
        .deleteFrom('sign_in_failures')
        .using('under')
        .whereRef('sign_in_failures.key', '=', 'under.key')
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async deleteStaleAttempts(before, longer = []) {
      // a key is `kind:value` (attempts/model.ts attemptKey): its kind is the text before the first colon
      const kindOf = sql<string>`split_part(key, ':', 1)`;
      const longKinds = longer.map((l) => l.kind);
      const r = await db
        .with('stale', (w) =>
          w
            .selectFrom('sign_in_failures')
            .select('key')
            .where((eb) =>
              eb.or([
                longKinds.length > 0
                  ? eb.and([eb('last_failure_at', '<', before), eb(kindOf, 'not in', longKinds)])
                  : eb('last_failure_at', '<', before),
                ...longer.map((l) => eb.and([eb(kindOf, '=', l.kind), eb('last_failure_at', '<', l.before)])),
              ]),
            )
            .orderBy(sql`key collate "C"`)
            .forUpdate()
            .skipLocked(),
        )
        .deleteFrom('sign_in_failures')
        .using('stale')
        .whereRef('sign_in_failures.key', '=', 'stale.key')
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
