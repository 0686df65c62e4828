// IdempotencyStore on Kysely (both engines): the keys of safe retries (idempotency/).
import { sql, type Kysely } from 'kysely';
import type { IdempotencyStore } from '../idempotency/store.js';
import type { Database } from './schema.js';

export function idempotencyStore(db: Kysely<Database>): IdempotencyStore {
  return {
    async claim(claim, { now, lockedUntil, expiresAt }) {
      // a key's row is free to take when it is past its time, or running past its lease (its
      // process died before any change committed); otherwise the conflict leaves it as it is
      for (let attempt = 0; ; attempt++) {
        const taken = await db
          .insertInto('idempotency_keys')
          .values({
            caller: claim.caller,
            key: claim.key,
            fingerprint: claim.fingerprint,
            state: 'running',
            answer_sealed: null,
            created_at: now,
            locked_until: lockedUntil,
            expires_at: expiresAt,
          })
          .onConflict((oc) =>
            oc
              .columns(['caller', 'key'])
              .doUpdateSet({
                fingerprint: (eb) => eb.ref('excluded.fingerprint'),
                state: 'running',
                answer_sealed: null,
                created_at: (eb) => eb.ref('excluded.created_at'),
                locked_until: (eb) => eb.ref('excluded.locked_until'),
                expires_at: (eb) => eb.ref('excluded.expires_at'),
              })
              .where((eb) =>
                eb.or([
                  eb('idempotency_keys.expires_at', '<=', now),
                  eb.and([eb('idempotency_keys.state', '=', 'running'), eb('idempotency_keys.locked_until', '<=', now)]),
                ]),
              ),
          )
          .returning(sql<number>`1`.as('taken'))
          .executeTakeFirst();
        if (taken) return undefined;
        const row = await db
          .selectFrom('idempotency_keys')
          .select(['state', 'fingerprint', 'answer_sealed', 'locked_until'])
          .where('caller', '=', claim.caller)
          .where('key', '=', claim.key)
          .executeTakeFirst();
        // freed between the two statements (its request changed nothing): take it again
        if (!row) {
          if (attempt < 3) continue;
          throw new Error('an idempotency key kept being freed while it was claimed');
        }
        return {
          state: row.state,
          fingerprint: Buffer.from(row.fingerprint),
          answerSealed: row.answer_sealed,
          lockedUntil: new Date(row.locked_until),
        };
      }
    },

    async markCommitted(caller, key) {
      await db
        .updateTable('idempotency_keys')
        .set({ state: 'committed' })
        .where('caller', '=', caller)
        .where('key', '=', key)
        .where('state', '=', 'running')
        .execute();
    },

    async complete(caller, key, answerSealed) {
      await db
        .updateTable('idempotency_keys')
        .set({ state: 'done', answer_sealed: answerSealed })
        .where('caller', '=', caller)
        .where('key', '=', key)
        .execute();
    },

    async release(caller, key) {
      await db.deleteFrom('idempotency_keys').where('caller', '=', caller).where('key', '=', key).where('state', '=', 'running').execute();
    },

    async deleteExpiredKeys(now) {
      const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
