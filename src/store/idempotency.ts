// IdempotencyStore on Kysely (both engines): the keys of safe retries (idempotency/). Every change
// of a row after its claim names the claim (claim_id), so a request that lost its key to another
// claim changes nothing of the other's.
import { sql, type Kysely } from 'kysely';
import type { IdempotencyStore } from '../idempotency/store.js';
import type { Database } from './schema.js';

export function idempotencyStore(db: Kysely<Database>): IdempotencyStore {
  const mine = (claim: { caller: string; key: string; claimId: string }) =>
    db.updateTable('idempotency_keys').where('caller', '=', claim.caller).where('key', '=', claim.key).where('claim_id', '=', claim.claimId);
  return {
    async claim(claim, { now, lockedUntil, expiresAt }) {
      for (let attempt = 0; ; attempt++) {
        // a key's row is taken over when it is past its time, or running past its lease for the
        // same request (its process died before any change committed); otherwise the conflict
        // leaves it as it is
        const taken = await db
          .insertInto('idempotency_keys')
          .values({
            caller: claim.caller,
            key: claim.key,
            fingerprint: claim.fingerprint,
            claim_id: claim.claimId,
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
                claim_id: (eb) => eb.ref('excluded.claim_id'),
                state: 'running',
                answer_sealed: null,
                created_at: (eb) => eb.ref('excluded.created_at'),
                locked_until: (eb) => eb.ref('excluded.locked_until'),
                expires_at: (eb) => eb.ref('excluded.expires_at'),
              })
              .where((eb) =>
                eb.or([
                  eb('idempotency_keys.expires_at', '<=', now),
                  eb.and([
                    eb('idempotency_keys.state', '=', 'running'),
                    eb('idempotency_keys.locked_until', '<=', now),
                    eb('idempotency_keys.fingerprint', '=', eb.ref('excluded.fingerprint')),
                  ]),
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

    async extend(claim, lockedUntil) {
      const r = await mine(claim).set({ locked_until: lockedUntil }).where('state', '=', 'running').executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async markCommitted(claim, graceUntil) {
      const r = await mine(claim)
        .set({ state: 'committed', locked_until: sql`greatest(locked_until, ${graceUntil})` })
        .where('state', 'in', ['running', 'committed'])
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },

    async complete(claim, answerSealed) {
      await mine(claim).set({ state: 'done', answer_sealed: answerSealed }).execute();
    },

    async release(claim) {
      await db
        .deleteFrom('idempotency_keys')
        .where('caller', '=', claim.caller)
        .where('key', '=', claim.key)
        .where('claim_id', '=', claim.claimId)
        .where('state', '=', 'running')
        .execute();
    },

    async deleteExpiredKeys(now) {
      const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
