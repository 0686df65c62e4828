// AttemptStore contract (src/attempts/store.ts), on every engine: reserveAttempt counts an attempt
// only if its rule allows another now (doubling delays, or a window), in one conditional
// statement: of many attempts at once no more are counted than the rule allows, and each count is
// its own key's. Taking back, clearing and deleting stale counts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { AttemptRule } from '../../../src/attempts/model.js';
import { at, type Contract, fulfilled, HOUR, MINUTE, openContract, race, RACERS, SECOND, T0 } from './harness.js';
import { engines } from '../../helpers/engines.js';

const doubling: AttemptRule = { free: 3, after: 'doubling', resetSeconds: 3600 };
const windowed: AttemptRule = { free: 3, after: 'window', resetSeconds: 600 };
const key = (what: string) => `${what}:${randomUUID()}`;

for (const engine of engines()) {
  describe(`AttemptStore contract (${engine})`, () => {
    let c: Contract;
    before(async () => {
      c = await openContract(engine);
    });
    after(() => c.db.close());

    it('doubling: the free attempts, then one per delay after the last (30 s, doubling), then a fresh count after a quiet hour', async () => {
      const k = key('account');
      const reserve = (ms: number) => c.store.attempts.reserveAttempt(k, doubling, at(ms));
      assert.deepEqual([await reserve(0), await reserve(0), await reserve(0)], [1, 2, 3]);
      assert.equal(await reserve(0), undefined, 'the fourth waits');
      assert.equal(await reserve(30 * SECOND - 1), undefined);
      assert.deepEqual(await c.store.attempts.findAttempts(k), { attempts: 3, firstAt: T0, lastAt: T0 }, 'refused attempts are not counted');
      assert.equal(await reserve(30 * SECOND), 4, '30 s after the last');
      assert.equal(await reserve(90 * SECOND - 1), undefined, 'then 60 s');
      assert.equal(await reserve(90 * SECOND), 5);
      assert.deepEqual(await c.store.attempts.findAttempts(k), { attempts: 5, firstAt: T0, lastAt: at(90 * SECOND) });
      assert.equal(await reserve(90 * SECOND + HOUR), 1, 'a quiet hour starts the count again');
      assert.deepEqual(await c.store.attempts.findAttempts(k), { attempts: 1, firstAt: at(90 * SECOND + HOUR), lastAt: at(90 * SECOND + HOUR) });
      assert.equal(await c.store.attempts.findAttempts(key('unknown')), undefined);
    });

    it('window: the free attempts within a window from the first; none more until it ends, refused ones not counted', async () => {
      const k = key('accountAll');
      const reserve = (ms: number) => c.store.attempts.reserveAttempt(k, windowed, at(ms));
      assert.deepEqual([await reserve(0), await reserve(MINUTE), await reserve(2 * MINUTE)], [1, 2, 3]);
      for (const ms of [3 * MINUTE, 9 * MINUTE, 10 * MINUTE - 1]) assert.equal(await reserve(ms), undefined, `refused at ${ms} ms`);
      assert.deepEqual(await c.store.attempts.findAttempts(k), { attempts: 3, firstAt: T0, lastAt: at(2 * MINUTE) }, 'the wait is not drawn out');
      assert.equal(await reserve(10 * MINUTE), 1, 'a new window');
      assert.deepEqual(await c.store.attempts.findAttempts(k), { attempts: 1, firstAt: at(10 * MINUTE), lastAt: at(10 * MINUTE) });
    });

    it('of attempts at once, exactly the allowance is counted, each under its own key', async () => {
      const rules: AttemptRule[] = [
        { free: 5, after: 'doubling', resetSeconds: 3600 },
        { free: 10, after: 'window', resetSeconds: 3600 },
      ];
      for (const rule of rules) {
        const k1 = key(rule.after);
        const k2 = key(rule.after);
        const [r1, r2] = await Promise.all([
          race(RACERS, () => c.store.attempts.reserveAttempt(k1, rule, T0)),
          race(RACERS, () => c.store.attempts.reserveAttempt(k2, rule, T0)),
        ]);
        for (const [k, results] of [
          [k1, r1],
          [k2, r2],
        ] as const) {
          const counted = fulfilled(results).filter((n) => n !== undefined);
          assert.deepEqual(
            counted.sort((x, y) => x! - y!),
            Array.from({ length: rule.free }, (_, i) => i + 1),
            `${rule.after}: counts 1..${rule.free}, each once`,
          );
          assert.equal((await c.store.attempts.findAttempts(k))?.attempts, rule.free);
        }
      }
    });

    it('releaseAttempt takes one attempt back, with the count’s time as it was, never below zero', async () => {
      const k = key('code');
      await c.store.attempts.reserveAttempt(k, doubling, T0);
      await c.store.attempts.reserveAttempt(k, doubling, at(10 * SECOND));
      await c.store.attempts.releaseAttempt(k);
      assert.deepEqual(await c.store.attempts.findAttempts(k), { attempts: 1, firstAt: T0, lastAt: T0 });
      await c.store.attempts.releaseAttempt(k);
      await c.store.attempts.releaseAttempt(k);
      assert.equal((await c.store.attempts.findAttempts(k))?.attempts, 0);
      await c.store.attempts.releaseAttempt(key('unknown'));
      // a success given back does not move the delay on: the free attempts are free again
      const full = key('code');
      for (let i = 0; i < 3; i++) await c.store.attempts.reserveAttempt(full, doubling, T0);
      assert.equal(await c.store.attempts.reserveAttempt(full, doubling, at(SECOND)), undefined);
      await c.store.attempts.releaseAttempt(full);
      assert.equal(await c.store.attempts.reserveAttempt(full, doubling, at(SECOND)), 3);
    });

    it('clearAttempts deletes the counts of those keys only', async () => {
      const [k1, k2, k3] = [key('a'), key('b'), key('c')];
      for (const k of [k1, k2, k3]) await c.store.attempts.reserveAttempt(k, doubling, T0);
      await c.store.attempts.clearAttempts([k1, k2]);
      await c.store.attempts.clearAttempts([]);
      assert.equal(await c.store.attempts.findAttempts(k1), undefined);
      assert.equal(await c.store.attempts.findAttempts(k2), undefined);
      assert.equal((await c.store.attempts.findAttempts(k3))?.attempts, 1);
    });

    it('deleteStaleAttempts deletes the counts whose last attempt is before the cut, and counts them', async () => {
      // later than every other test's counts, which go first
      const day = 48 * HOUR;
      await c.store.attempts.deleteStaleAttempts(at(day));
      const [old, edge, fresh] = [key('old'), key('edge'), key('fresh')];
      await c.store.attempts.reserveAttempt(old, doubling, at(day));
      await c.store.attempts.reserveAttempt(old, doubling, at(day + MINUTE - 1));
      await c.store.attempts.reserveAttempt(edge, doubling, at(day + MINUTE));
      await c.store.attempts.reserveAttempt(fresh, doubling, at(day + 2 * MINUTE));
      assert.equal(await c.store.attempts.deleteStaleAttempts(at(day + MINUTE)), 1);
      assert.equal(await c.store.attempts.findAttempts(old), undefined);
      assert.ok(await c.store.attempts.findAttempts(edge), 'a last attempt at the cut is not before it');
      assert.ok(await c.store.attempts.findAttempts(fresh));
    });
  });
}
