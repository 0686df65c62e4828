// AttemptStore contract (src/attempts/store.ts), on every engine: reserveAttempts counts an
// attempt under each key whose rule allows another now (doubling delays, or a window), in one
// statement of conditional counts: of many attempts at once no more are counted under a key than
// its rule allows, and each count is its own key's. Taking back, clearing and deleting stale
// counts; statements on the same counts at once never wait for each other in a circle. And the
// gate over it (attempts/gate.ts): an attempt counts under all its keys, or under none. Clearing
// one account's counts by their keys' text (an Administrator's unlock).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { AttemptGate } from '../../../src/attempts/gate.js';
import { accountCounts, type AttemptRule } from '../../../src/attempts/model.js';
import { ManualClock } from '../../../src/clock.js';
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

    /** one key's reservation: its count, or undefined when not counted */
    const reserveOne = async (k: string, rule: AttemptRule, now: Date) => (await c.store.attempts.reserveAttempts([{ key: k, rule }], now)).get(k);
    const findOne = async (k: string) => (await c.store.attempts.findAttempts([k])).get(k);
    const releaseOne = (k: string) => c.store.attempts.releaseAttempts([k]);

    it('doubling: the free attempts, then one per delay after the last (30 s, doubling), then a fresh count after a quiet hour', async () => {
      const k = key('account');
      const reserve = (ms: number) => reserveOne(k, doubling, at(ms));
      assert.deepEqual([await reserve(0), await reserve(0), await reserve(0)], [1, 2, 3]);
      assert.equal(await reserve(0), undefined, 'the fourth waits');
      assert.equal(await reserve(30 * SECOND - 1), undefined);
      assert.deepEqual(await findOne(k), { attempts: 3, firstAt: T0, lastAt: T0 }, 'refused attempts are not counted');
      assert.equal(await reserve(30 * SECOND), 4, '30 s after the last');
      assert.equal(await reserve(90 * SECOND - 1), undefined, 'then 60 s');
      assert.equal(await reserve(90 * SECOND), 5);
      assert.deepEqual(await findOne(k), { attempts: 5, firstAt: T0, lastAt: at(90 * SECOND) });
      assert.equal(await reserve(90 * SECOND + HOUR), 1, 'a quiet hour starts the count again');
      assert.deepEqual(await findOne(k), { attempts: 1, firstAt: at(90 * SECOND + HOUR), lastAt: at(90 * SECOND + HOUR) });
      assert.equal(await findOne(key('unknown')), undefined);
    });

    it('window: the free attempts within a window from the first; none more until it ends, refused ones not counted', async () => {
      const k = key('accountAll');
      const reserve = (ms: number) => reserveOne(k, windowed, at(ms));
      assert.deepEqual([await reserve(0), await reserve(MINUTE), await reserve(2 * MINUTE)], [1, 2, 3]);
      for (const ms of [3 * MINUTE, 9 * MINUTE, 10 * MINUTE - 1]) assert.equal(await reserve(ms), undefined, `refused at ${ms} ms`);
      assert.deepEqual(await findOne(k), { attempts: 3, firstAt: T0, lastAt: at(2 * MINUTE) }, 'the wait is not drawn out');
      assert.equal(await reserve(10 * MINUTE), 1, 'a new window');
      assert.deepEqual(await findOne(k), { attempts: 1, firstAt: at(10 * MINUTE), lastAt: at(10 * MINUTE) });
    });

    it('of attempts at once, exactly the allowance is counted, each under its own key', async () => {
      const rules: AttemptRule[] = [
        { free: 5, after: 'doubling', resetSeconds: 3600 },
        { free: 10, after: 'window', resetSeconds: 3600 },
      ];
      for (const rule of rules) {
        const k1 = key(rule.after);
        const k2 = key(rule.after);
        const [r1, r2] = await Promise.all([race(RACERS, () => reserveOne(k1, rule, T0)), race(RACERS, () => reserveOne(k2, rule, T0))]);
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
          assert.equal((await findOne(k))?.attempts, rule.free);
        }
      }
    });

    it('releaseAttempts takes one attempt back, with the count’s time as it was, never below zero', async () => {
      const k = key('code');
      await reserveOne(k, doubling, T0);
      await reserveOne(k, doubling, at(10 * SECOND));
      await releaseOne(k);
      assert.deepEqual(await findOne(k), { attempts: 1, firstAt: T0, lastAt: T0 });
      await releaseOne(k);
      await releaseOne(k);
      assert.equal((await findOne(k))?.attempts, 0);
      await releaseOne(key('unknown'));
      // a success given back does not move the delay on: the free attempts are free again
      const full = key('code');
      for (let i = 0; i < 3; i++) await reserveOne(full, doubling, T0);
      assert.equal(await reserveOne(full, doubling, at(SECOND)), undefined);
      await releaseOne(full);
      assert.equal(await reserveOne(full, doubling, at(SECOND)), 3);
    });

    it('reserveAttempts counts under each key by its own rule in one statement; a key past its allowance is left out, the others counted', async () => {
      const [full, fresh, windowFull, doublingDue] = [key('account'), key('address'), key('accountAll'), key('code')];
      for (let i = 0; i < 3; i++) {
        await reserveOne(full, doubling, T0);
        await reserveOne(windowFull, windowed, T0);
        await reserveOne(doublingDue, doubling, T0);
      }
      // a minute on: the doubling count's 30 s are over, the window's 10 minutes are not
      const counted = await c.store.attempts.reserveAttempts(
        [
          { key: fresh, rule: doubling },
          { key: windowFull, rule: windowed },
          { key: doublingDue, rule: doubling },
        ],
        at(MINUTE),
      );
      assert.deepEqual(
        [...counted].sort(),
        [
          [doublingDue, 4],
          [fresh, 1],
        ].sort(),
      );
      const found = await c.store.attempts.findAttempts([full, fresh, windowFull, doublingDue, key('unknown')]);
      assert.deepEqual(
        [found.get(full)?.attempts, found.get(fresh)?.attempts, found.get(windowFull)?.attempts, found.get(doublingDue)?.attempts, found.size],
        [3, 1, 3, 4, 4],
      );
      assert.equal((await c.store.attempts.reserveAttempts([], T0)).size, 0);
      assert.equal((await c.store.attempts.findAttempts([])).size, 0);
    });

    it('of attempts at once under the same keys, each key counts exactly its own allowance', async () => {
      const [k1, k2] = [key('doubling'), key('window')];
      const keys = [
        { key: k1, rule: { free: 5, after: 'doubling', resetSeconds: 3600 } as AttemptRule },
        { key: k2, rule: { free: 10, after: 'window', resetSeconds: 3600 } as AttemptRule },
      ];
      // in both orders: the store takes the counts' locks in one order whatever the caller's
      const results = fulfilled(await race(RACERS, (i) => c.store.attempts.reserveAttempts(i % 2 ? keys : [...keys].reverse(), T0)));
      for (const { key: k, rule } of keys) {
        const counts = results.flatMap((m) => (m.has(k) ? [m.get(k)!] : []));
        assert.deepEqual(
          counts.sort((x, y) => x - y),
          Array.from({ length: rule.free }, (_, i) => i + 1),
          `${rule.after}: counts 1..${rule.free}, each once`,
        );
        assert.equal((await findOne(k))?.attempts, rule.free);
      }
    });

    it('reserving, giving back, clearing (by keys and by prefix) and purging the same counts at once: every statement completes (no deadlock)', async () => {
      // counts whose last attempt is stale, so that the purge takes them too
      const keys = [key('address'), key('account'), key('accountAll'), key('code')];
      const rule: AttemptRule = { free: 1000, after: 'doubling', resetSeconds: 3600 };
      const long = -2 * HOUR;
      for (const k of keys) await reserveOne(k, rule, at(long));
      /** the keys in an order of the racer's own */
      const orderOf = (i: number) => keys.map((_, j) => keys[(i + j) % keys.length]!).reverse();
      for (let round = 0; round < 5; round++) {
        fulfilled(
          await race(RACERS, async (i) => {
            const mine = orderOf(i + round);
            switch (i % 4) {
              case 0:
              case 1:
                return c.store.attempts.reserveAttempts(
                  mine.map((k) => ({ key: k, rule })),
                  at(long + round * SECOND),
                );
              case 2:
                return c.store.attempts.releaseAttempts(mine);
              default:
                if (i % 8 === 3) return c.store.attempts.clearAttempts(mine.slice(1));
                // by keys and by a prefix (the first key less its last characters), as an unlock does
                if (i % 16 === 15) return c.store.attempts.clearAttemptsUnder(mine.slice(1), [mine[0]!.slice(0, -4)]);
                return c.store.attempts.deleteStaleAttempts(at(long + HOUR));
            }
          }),
        );
      }
    });

    it('the gate counts an attempt under all its keys or none: a key that refuses gives the others back, and says how long to wait', async () => {
      const gate = new AttemptGate(c.store, new ManualClock(T0));
      const [prefix, account] = [`203.0.113.${randomUUID()}`, `someone-${randomUUID()}@example.com`];
      const keys = [
        ['address', prefix],
        ['account', `${account}|${prefix}`],
        ['accountAll', account],
      ] as const;
      for (let i = 1; i <= 5; i++) {
        const r = await gate.reserve(keys);
        assert.deepEqual(r, { kind: 'reserved', keys: keys.map(([kind, v]) => `${kind}:${v}`), counts: { address: i, account: i, accountAll: i } });
      }
      // the account from this address has had its 5 free attempts: the sixth waits 30 s, and the
      // address and the account-wide count are as they were
      assert.deepEqual(await gate.reserve(keys), { kind: 'wait', seconds: 30, refusedBy: 'account' });
      const found = await c.store.attempts.findAttempts(keys.map(([kind, v]) => `${kind}:${v}`));
      assert.deepEqual(
        keys.map(([kind, v]) => found.get(`${kind}:${v}`)?.attempts),
        [5, 5, 5],
      );
      // a success gives back under each
      await gate.release({ keys: keys.map(([kind, v]) => `${kind}:${v}`) });
      const after = await c.store.attempts.findAttempts(keys.map(([kind, v]) => `${kind}:${v}`));
      assert.deepEqual(
        keys.map(([kind, v]) => after.get(`${kind}:${v}`)?.attempts),
        [4, 4, 4],
      );
    });

    it('clearAttempts deletes the counts of those keys only', async () => {
      const [k1, k2, k3] = [key('a'), key('b'), key('c')];
      for (const k of [k1, k2, k3]) await reserveOne(k, doubling, T0);
      await c.store.attempts.clearAttempts([k1, k2]);
      await c.store.attempts.clearAttempts([]);
      assert.equal(await findOne(k1), undefined);
      assert.equal(await findOne(k2), undefined);
      assert.equal((await findOne(k3))?.attempts, 1);
    });

    it('clearAttemptsUnder deletes one account’s counts, account-wide and from every address, and no other account’s', async () => {
      // `_` and `%` would match anything as LIKE patterns; a longer address and one whose domain
      // goes on after a `|` start with this one's text
      const id = randomUUID().slice(0, 8);
      const account = `a_b%${id}@x.io`;
      const { keys, prefixes } = accountCounts(account);
      const mine = [
        ...keys,
        `account:${account}|203.0.113.7`,
        `account:${account}|2001:db8:1:2::/64`,
        `code:${account}|203.0.113.7`,
        `code:${account}|198.51.100.1`,
      ];
      const others = [
        `address:203.0.113.7`,
        `accountAll:${account}.evil`,
        `account:${account}.evil|203.0.113.7`,
        `code:${account}.evil|203.0.113.7`,
        `account:${account}|evil.com|203.0.113.7`,
        `code:${account}|evil.com|203.0.113.7`,
        `account:axb%${id}@x.io|203.0.113.7`,
        `account:a_bx${id}@x.io|203.0.113.7`,
        `code:aXb%${id}@x.io|203.0.113.7`,
        `browser:${randomUUID()}|${randomUUID()}`,
        `accountAll:${account}|203.0.113.7`,
        `x${keys[0]}`,
      ];
      for (const k of [...mine, ...others]) await reserveOne(k, doubling, T0);
      assert.equal(await c.store.attempts.clearAttemptsUnder(keys, prefixes), mine.length);
      const found = await c.store.attempts.findAttempts([...mine, ...others]);
      assert.deepEqual(
        mine.filter((k) => found.has(k)),
        [],
        'every count of the account is gone',
      );
      assert.deepEqual(
        others.filter((k) => found.get(k)?.attempts !== 1),
        [],
        'no other count changed',
      );
      assert.equal(await c.store.attempts.clearAttemptsUnder(keys, prefixes), 0, 'nothing left to clear');
      assert.equal(await c.store.attempts.clearAttemptsUnder([], []), 0);
    });

    it('deleteStaleAttempts deletes the counts whose last attempt is before the cut, and counts them', async () => {
      // later than every other test's counts, which go first
      const day = 48 * HOUR;
      await c.store.attempts.deleteStaleAttempts(at(day));
      const [old, edge, fresh] = [key('old'), key('edge'), key('fresh')];
      await reserveOne(old, doubling, at(day));
      await reserveOne(old, doubling, at(day + MINUTE - 1));
      await reserveOne(edge, doubling, at(day + MINUTE));
      await reserveOne(fresh, doubling, at(day + 2 * MINUTE));
      assert.equal(await c.store.attempts.deleteStaleAttempts(at(day + MINUTE)), 1);
      assert.equal(await findOne(old), undefined);
      assert.ok(await findOne(edge), 'a last attempt at the cut is not before it');
      assert.ok(await findOne(fresh));
    });

    it('deleteStaleAttempts deletes the counts of a longer kind by its own cut', async () => {
      const day = 60 * 24 * HOUR;
      await c.store.attempts.deleteStaleAttempts(at(day));
      const long = `longKind:${randomUUID()}`;
      const short = `shortKind:${randomUUID()}`;
      await reserveOne(long, doubling, at(day));
      await reserveOne(short, doubling, at(day));
      const longer = (cut: number) => [{ kind: 'longKind', before: at(cut) }];
      assert.equal(await c.store.attempts.deleteStaleAttempts(at(day + HOUR), longer(day)), 1, 'the short count only');
      assert.equal(await findOne(short), undefined);
      assert.ok(await findOne(long), 'the long kind is kept past the common cut');
      assert.equal(await c.store.attempts.deleteStaleAttempts(at(day + HOUR), longer(day + MINUTE)), 1);
      assert.equal(await findOne(long), undefined);
    });
  });
}
