// TokenThrottleStore contract (src/oauth/throttle-store.ts), on every engine: failure windows
// counted exactly when every process counts at once (each call gets its own count), attempts
// reserved in one conditional statement (of many at once, at most the limit are counted), windows
// that end and start again, and the record of which client authenticated from which address.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { at, type Contract, fulfilled, HOUR, MINUTE, openContract, race, RACERS, T0 } from './harness.js';
import { engines } from '../../helpers/engines.js';

const key = (kind: 'pair' | 'address') => `${kind}:${randomUUID()}`;
const WINDOW = 15 * MINUTE;
/** the start of the window that is live at `now` */
const windowStart = (now: Date) => new Date(now.getTime() - WINDOW);

for (const engine of engines()) {
  describe(`TokenThrottleStore contract (${engine})`, () => {
    let c: Contract;
    before(async () => {
      c = await openContract(engine);
    });
    after(() => c.db.close());

    it('addTokenFailure counts failures in the window begun by the first; an ended window starts again at 1', async () => {
      const k = key('pair');
      const add = (ms: number) => c.store.tokenThrottle.addTokenFailure(k, at(ms), windowStart(at(ms)));
      assert.deepEqual(await add(0), { failures: 1, since: T0 });
      assert.deepEqual(await add(MINUTE), { failures: 2, since: T0 });
      assert.deepEqual(await add(WINDOW - 1), { failures: 3, since: T0 });
      assert.deepEqual(await add(WINDOW), { failures: 1, since: at(WINDOW) }, 'a window that began at its start is over');
    });

    it('addTokenFailure at once: every call gets its own count, and none is lost', async () => {
      const k = key('address');
      const counts = fulfilled(await race(RACERS, () => c.store.tokenThrottle.addTokenFailure(k, T0, windowStart(T0))));
      assert.deepEqual(
        counts.map((w) => w.failures).sort((x, y) => x - y),
        Array.from({ length: RACERS }, (_, i) => i + 1),
      );
      assert.equal((await c.store.tokenThrottle.findTokenFailures([k], windowStart(T0))).get(k)?.failures, RACERS);
    });

    it('reserveTokenAttempt: of attempts at once, exactly the limit are counted; the others see the window as it stands', async () => {
      const LIMIT = 10;
      const [k1, k2] = [key('pair'), key('pair')];
      const [r1, r2] = await Promise.all(
        [k1, k2].map((k) => race(RACERS, () => c.store.tokenThrottle.reserveTokenAttempt(k, LIMIT, T0, windowStart(T0)))),
      );
      for (const results of [r1!, r2!]) {
        const all = fulfilled(results);
        const counted = all.filter((r) => r.counted);
        assert.deepEqual(
          counted.map((r) => r.window.failures).sort((x, y) => x - y),
          Array.from({ length: LIMIT }, (_, i) => i + 1),
          'counted 1..limit, each once, under each key',
        );
        for (const r of all.filter((x) => !x.counted)) assert.deepEqual(r.window, { failures: LIMIT, since: T0 });
      }
      // once the window has ended, attempts are counted again
      const later = at(WINDOW);
      assert.deepEqual(await c.store.tokenThrottle.reserveTokenAttempt(k1, LIMIT, later, windowStart(later)), {
        counted: true,
        window: { failures: 1, since: later },
      });
    });

    it('releaseTokenAttempt takes one back, never below zero; clearTokenFailures forgets that key only', async () => {
      const [k, other] = [key('pair'), key('address')];
      for (const x of [k, k, other]) await c.store.tokenThrottle.addTokenFailure(x, T0, windowStart(T0));
      await c.store.tokenThrottle.releaseTokenAttempt(k);
      assert.equal((await c.store.tokenThrottle.findTokenFailures([k], windowStart(T0))).get(k)?.failures, 1);
      for (let i = 0; i < 3; i++) await c.store.tokenThrottle.releaseTokenAttempt(k);
      assert.equal((await c.store.tokenThrottle.findTokenFailures([k], windowStart(T0))).get(k)?.failures, 0);
      await c.store.tokenThrottle.releaseTokenAttempt(key('pair'));
      await c.store.tokenThrottle.clearTokenFailures(k);
      const left = await c.store.tokenThrottle.findTokenFailures([k, other], windowStart(T0));
      assert.deepEqual([...left.keys()], [other]);
    });

    it('findTokenFailures: the live windows of the keys asked for; ended windows and other keys are absent', async () => {
      const [live, ended, unasked] = [key('pair'), key('pair'), key('pair')];
      await c.store.tokenThrottle.addTokenFailure(ended, at(-WINDOW), windowStart(at(-WINDOW)));
      await c.store.tokenThrottle.addTokenFailure(live, at(1), windowStart(at(1)));
      await c.store.tokenThrottle.addTokenFailure(unasked, at(1), windowStart(at(1)));
      const found = await c.store.tokenThrottle.findTokenFailures([live, ended, key('pair')], windowStart(T0));
      assert.deepEqual([...found], [[live, { failures: 1, since: at(1) }]]);
    });

    it('trusted clients: per address, the latest success kept, those since the cut listed', async () => {
      const [addr, elsewhere] = [`address-${randomUUID()}`, `address-${randomUUID()}`];
      await c.store.tokenThrottle.trustTokenClient(addr, 'client-1', at(MINUTE));
      await c.store.tokenThrottle.trustTokenClient(addr, 'client-1', T0);
      await c.store.tokenThrottle.trustTokenClient(addr, 'client-2', at(-HOUR));
      await c.store.tokenThrottle.trustTokenClient(elsewhere, 'client-3', T0);
      assert.deepEqual(
        await c.store.tokenThrottle.trustedTokenClients(addr, at(-MINUTE)),
        [{ clientId: 'client-1', at: at(MINUTE) }],
        'an earlier success never moves it back',
      );
      assert.deepEqual(
        (await c.store.tokenThrottle.trustedTokenClients(addr, at(-2 * HOUR))).sort((x, y) => x.clientId.localeCompare(y.clientId)),
        [
          { clientId: 'client-1', at: at(MINUTE) },
          { clientId: 'client-2', at: at(-HOUR) },
        ],
      );
      assert.deepEqual(await c.store.tokenThrottle.trustedTokenClients(addr, at(MINUTE)), [], 'after the cut only');
    });

    it('deleteStaleTokenThrottle deletes the counts and records whose window ended, and counts them', async () => {
      const day = 24 * HOUR;
      await c.store.tokenThrottle.deleteStaleTokenThrottle(at(day));
      const [stale, edge, live] = [key('pair'), key('pair'), key('pair')];
      await c.store.tokenThrottle.addTokenFailure(stale, at(day), windowStart(at(day)));
      await c.store.tokenThrottle.addTokenFailure(edge, at(day + MINUTE), windowStart(at(day + MINUTE)));
      await c.store.tokenThrottle.addTokenFailure(live, at(day + MINUTE + 1), windowStart(at(day + MINUTE + 1)));
      await c.store.tokenThrottle.trustTokenClient('addr-stale', 'c', at(day + MINUTE));
      await c.store.tokenThrottle.trustTokenClient('addr-live', 'c', at(day + MINUTE + 1));
      assert.equal(await c.store.tokenThrottle.deleteStaleTokenThrottle(at(day + MINUTE)), 3, 'two counts and a record');
      const cut = at(day);
      assert.deepEqual([...(await c.store.tokenThrottle.findTokenFailures([stale, edge, live], cut)).keys()], [live]);
      assert.deepEqual(await c.store.tokenThrottle.trustedTokenClients('addr-stale', cut), []);
      assert.equal((await c.store.tokenThrottle.trustedTokenClients('addr-live', cut)).length, 1);
    });
  });
}
