// IdempotencyStore contract (src/idempotency/store.ts), on every engine: a key is taken by one
// claim only (also when many race for it), the row found says what the key holds; a running key
// is taken over only past its lease and for the same request, any key only past its time; a claim
// changes only its own row (a claim taken over cannot mark, complete, extend or free the key, and
// its change is rolled back by the persister's transaction); `committed` is reached only from
// `running` and inside a transaction's commit; `release` frees only a running key; each caller's
// keys are its own; the purge forgets keys past their time.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runKeyed } from '../../../src/idempotency/context.js';
import type { KeyClaim } from '../../../src/idempotency/model.js';
import { engines } from '../../helpers/engines.js';
import { at, type Contract, fulfilled, HOUR, openContract, RACERS, race, SECOND, sha256 } from './harness.js';

const times = (ms: number) => ({ now: at(ms), lockedUntil: at(ms + 120 * SECOND), expiresAt: at(ms + 24 * HOUR) });

for (const engine of engines()) {
  describe(`IdempotencyStore contract (${engine})`, () => {
    let c: Contract;
    before(async () => {
      c = await openContract(engine);
    });
    after(() => c.db.close());

    const claimOf = (over: Partial<KeyClaim> = {}): KeyClaim => ({
      caller: `client:${randomUUID()}`,
      key: randomUUID(),
      fingerprint: sha256('request one'),
      claimId: randomUUID(),
      ...over,
    });
    const grace = at(HOUR);
    const row = (k: KeyClaim) =>
      c.db.kysely.selectFrom('idempotency_keys').selectAll().where('caller', '=', k.caller).where('key', '=', k.key).executeTakeFirst();

    it('the first claim takes the key; a second finds it running, with the first fingerprint', async () => {
      const k = claimOf();
      assert.equal(await c.store.idempotency.claim(k, times(0)), undefined);
      const found = await c.store.idempotency.claim({ ...k, fingerprint: sha256('request two') }, times(SECOND));
      assert.equal(found?.state, 'running');
      assert.ok(found?.fingerprint.equals(sha256('request one')), 'the first request fingerprint stays');
      assert.equal(found?.answerSealed, null);
      assert.equal(found?.lockedUntil.getTime(), at(120 * SECOND).getTime());
    });

    it('of many claims of one key at once, exactly one takes it', async () => {
      const k = claimOf();
      const results = fulfilled(await race(RACERS, () => c.store.idempotency.claim(k, times(0))));
      assert.equal(results.length, RACERS, 'no claim fails');
      assert.equal(results.filter((r) => r === undefined).length, 1);
    });

    it("each caller's keys are its own: one key value, two callers, two claims taken", async () => {
      const k = claimOf();
      assert.equal(await c.store.idempotency.claim(k, times(0)), undefined);
      assert.equal(await c.store.idempotency.claim({ ...k, caller: `user:${randomUUID()}` }, times(0)), undefined);
    });

    it('a running key is taken over only once its lease is over; a committed or done one never before its time', async () => {
      const running = claimOf();
      await c.store.idempotency.claim(running, times(0));
      assert.equal((await c.store.idempotency.claim(running, times(120 * SECOND - 1)))?.state, 'running', 'within the lease');
      assert.equal(
        (await c.store.idempotency.claim({ ...running, claimId: randomUUID(), fingerprint: sha256('another') }, times(120 * SECOND)))?.state,
        'running',
        'at its end, not by another request',
      );
      const second = { ...running, claimId: randomUUID() };
      assert.equal(await c.store.idempotency.claim(second, times(120 * SECOND)), undefined, 'at its end: taken over by the same request');
      assert.equal((await row(running))?.locked_until.getTime(), at(240 * SECOND).getTime(), 'with a new lease');
      // the first claim, still running somewhere, changes nothing of the second's
      assert.equal(await c.store.idempotency.extend(running, at(HOUR)), false);
      assert.equal(await c.store.idempotency.markCommitted(running, grace), false);
      await c.store.idempotency.complete(running, 'the first answer');
      await c.store.idempotency.release(running);
      const now = await row(running);
      assert.deepEqual([now?.state, now?.answer_sealed, now?.claim_id], ['running', null, second.claimId]);
      assert.equal(await c.store.idempotency.extend(second, at(HOUR)), true);
      assert.equal((await row(second))?.locked_until.getTime(), at(HOUR).getTime());

      const committed = claimOf();
      await c.store.idempotency.claim(committed, times(0));
      await c.store.transaction((tx) => tx.idempotency.markCommitted(committed, grace));
      assert.equal((await c.store.idempotency.claim(committed, times(HOUR)))?.state, 'committed', 'past its lease, still committed');

      const done = claimOf();
      await c.store.idempotency.claim(done, times(0));
      await c.store.idempotency.complete(done, 'sealed answer');
      const found = await c.store.idempotency.claim(done, times(24 * HOUR - 1));
      assert.equal(found?.state, 'done');
      assert.equal(found?.answerSealed, 'sealed answer');
      assert.equal(await c.store.idempotency.claim({ ...done, fingerprint: sha256('another') }, times(24 * HOUR)), undefined, 'past its time, free');
      const again = await row(done);
      assert.equal(again?.state, 'running');
      assert.equal(again?.answer_sealed, null, 'the old answer is gone');
      assert.ok(Buffer.from(again!.fingerprint).equals(sha256('another')));
    });

    it('markCommitted moves only a running key, and only if its transaction commits', async () => {
      const k = claimOf();
      await c.store.idempotency.claim(k, times(0));
      await assert.rejects(
        c.store.transaction(async (tx) => {
          await tx.idempotency.markCommitted(k, grace);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.equal((await row(k))?.state, 'running');
      assert.equal(await c.store.transaction((tx) => tx.idempotency.markCommitted(k, grace)), true);
      const committed = await row(k);
      assert.equal(committed?.state, 'committed');
      assert.equal(committed?.locked_until.getTime(), grace.getTime(), 'held at least until the grace after the commit');
      await c.store.idempotency.complete(k, 'answer');
      assert.equal(await c.store.idempotency.markCommitted(k, grace), false);
      assert.equal((await row(k))?.state, 'done', 'a done key stays done');
    });

    it('a keyed transaction commits only while its claim holds the key: one taken over rolls its change back', async () => {
      const k = claimOf();
      await c.store.idempotency.claim(k, times(0));
      const taker = { ...k, claimId: randomUUID() };
      await c.store.idempotency.claim(taker, times(120 * SECOND));
      const name = `lost-${k.key.slice(0, 8)}`;
      await assert.rejects(
        runKeyed({ caller: k.caller, key: k.key, claimId: k.claimId, committed: false }, () =>
          c.store.transaction((tx) => tx.heartbeats.beat({ processId: name, host: 'h', pid: 1, version: 'v', startedAt: at(0), lastSeenAt: at(0) })),
        ),
        /outlived the hold on its Idempotency-Key/,
      );
      const written = await c.db.kysely.selectFrom('process_heartbeats').select('process_id').where('process_id', '=', name).executeTakeFirst();
      assert.equal(written, undefined, 'the change was rolled back');
      // the claim that holds it commits
      const mine = { caller: k.caller, key: k.key, claimId: taker.claimId, committed: false };
      await runKeyed(mine, () =>
        c.store.transaction((tx) => tx.heartbeats.beat({ processId: name, host: 'h', pid: 1, version: 'v', startedAt: at(0), lastSeenAt: at(0) })),
      );
      assert.equal(mine.committed, true);
      assert.equal((await row(k))?.state, 'committed');
    });

    it('release frees a running key only', async () => {
      const running = claimOf();
      await c.store.idempotency.claim(running, times(0));
      await c.store.idempotency.release(running);
      assert.equal(await row(running), undefined);
      const committed = claimOf();
      await c.store.idempotency.claim(committed, times(0));
      await c.store.idempotency.markCommitted(committed, grace);
      await c.store.idempotency.release(committed);
      assert.equal((await row(committed))?.state, 'committed', 'a change was made: the key is never freed');
    });

    it('deleteExpiredKeys forgets the keys past their time, and counts them', async () => {
      await c.store.idempotency.deleteExpiredKeys(at(1000 * HOUR));
      const early = claimOf();
      const late = claimOf();
      await c.store.idempotency.claim(early, times(0));
      await c.store.idempotency.claim(late, times(SECOND));
      assert.equal(await c.store.idempotency.deleteExpiredKeys(at(24 * HOUR - 1)), 0);
      assert.equal(await c.store.idempotency.deleteExpiredKeys(at(24 * HOUR)), 1);
      assert.equal(await row(early), undefined);
      assert.ok(await row(late));
    });
  });
}
