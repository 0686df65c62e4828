// The guessing throttle on its own, on each engine: small limits, a manual clock, and two
// throttles on one database standing for two processes (each keeps its own view; the counts are
// the database's).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock } from '../../src/clock.js';
import { addressPrefix } from '../../src/oauth/address-prefix.js';
import { FailureThrottle, type ThrottleOptions } from '../../src/oauth/failure-throttle.js';
import type { Db } from '../../src/store/db.js';
import { createStore } from '../../src/store/index.js';
import { purgeExpired } from '../../src/maintenance/purge.js';
import { openTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

const ATTACKER = '203.0.113.9';
const ELSEWHERE = '198.51.100.1';

/** one guess as the token endpoint makes it: refused unchecked while throttled, else checked
 *  (a wrong secret counted, a right one given back) */
async function guess(throttle: FailureThrottle, clientId: string, ip: string, correct = false): Promise<number> {
  const attempt = await throttle.begin(clientId, ip);
  if (typeof attempt === 'number') return 429;
  if (correct) {
    await throttle.succeed(attempt);
    return 200;
  }
  return (await throttle.fail(attempt)) > 0 ? 429 : 401;
}

for (const engine of engines()) {
  describe(`failure throttle (${engine})`, () => {
    let db: Db;
    let clock: ManualClock;
    const store = () => createStore(db.kysely, clock);
    const throttle = (options: ThrottleOptions) => new FailureThrottle(store().tokenThrottle, clock, options);
    /** failures counted in all (a success gives back the attempt counted before its check) */
    const counted = async () =>
      Number((await sql<{ n: string }>`select coalesce(sum(failures), 0)::text as n from token_failures`.execute(db.kysely)).rows[0]!.n);
    const rows = async () => Number((await sql<{ n: string }>`select count(*)::text as n from token_failures`.execute(db.kysely)).rows[0]!.n);

    before(async () => {
      db = await openTestDb(engine);
    });
    after(() => db.close());
    // each test starts from empty tables, an hour after the previous one
    const fresh = async () => {
      await sql`delete from token_failures`.execute(db.kysely);
      await sql`delete from token_trust`.execute(db.kysely);
      clock = new ManualClock(new Date(Date.UTC(2026, 10, 22, 10 + Math.floor(Math.random() * 10))));
    };

    it('keeps a throttled client throttled however many junk client ids the same address tries', async () => {
      await fresh();
      const t = throttle({ tableSize: 4, pairLimit: 3, addressLimit: 1000 });
      for (let i = 0; i < 3; i++) assert.equal(await guess(t, 'target', ATTACKER), 401);
      assert.equal(await guess(t, 'target', ATTACKER, true), 429);
      // far more junk ids than the process's tables hold, each below its own limit
      for (let i = 0; i < 100; i++) assert.equal(await guess(t, `junk-${i}`, ATTACKER), 401);
      assert.equal(await guess(t, 'target', ATTACKER, true), 429, 'the target is still throttled');
      // the correct secret from elsewhere still works
      assert.equal(await guess(t, 'target', ELSEWHERE, true), 200);
    });

    it('throttles an address that fails across many client ids, and then adds no rows for it', async () => {
      await fresh();
      const t = throttle({ pairLimit: 10, addressLimit: 20 });
      for (let i = 0; i < 20; i++) assert.equal(await guess(t, `junk-${i}`, ATTACKER), 401);
      const count = await rows();
      for (let i = 20; i < 200; i++) assert.equal(await guess(t, `junk-${i}`, ATTACKER), 429);
      assert.equal(await rows(), count, 'throttled requests add nothing');
      assert.equal(await guess(t, 'anyone', ATTACKER, true), 429, 'every client at that address waits');
      assert.equal(await guess(t, 'anyone', ELSEWHERE, true), 200, 'other addresses do not');
    });

    it('checks at most the allowance of attempts made at once; the others, a right secret among them, are refused unchecked', async () => {
      await fresh();
      const t = throttle({ pairLimit: 10, addressLimit: 25 });
      // thirty wrong secrets at once (a parallel burst): ten are let through to be checked
      const answers = await Promise.all(Array.from({ length: 30 }, () => guess(t, 'target', ATTACKER)));
      assert.deepEqual(
        [answers.filter((a) => a === 401).length, answers.filter((a) => a === 429).length],
        [10, 20],
        'ten checked and answered 401, the others refused unchecked',
      );
      // a correct secret sent alongside them is not checked, so not confirmed
      assert.equal(typeof (await t.begin('target', ATTACKER)), 'number');
      // a burst of junk ids stops adding pair rows once the address is past its limit
      const other = '192.0.2.200';
      const before = await rows();
      const burst = await Promise.all(Array.from({ length: 100 }, (_, i) => guess(t, `burst-${i}`, other)));
      assert.equal(burst.filter((a) => a === 401).length, 25, 'the address allows 25');
      assert.equal((await rows()) - before, 1 + 25, 'the address row and 25 pairs');
    });

    it('a trusted pair is checked first and its failures counted after; past its limit they are answered 429', async () => {
      await fresh();
      const t = throttle({ pairLimit: 3, addressLimit: 100 });
      assert.equal(await guess(t, 'own', ATTACKER, true), 200);
      const attempts = await Promise.all(Array.from({ length: 6 }, () => t.begin('own', ATTACKER)));
      assert.ok(
        attempts.every((a) => typeof a !== 'number' && a.counted === 'nothing'),
        'no database on the trusted path',
      );
      const answers = await Promise.all(attempts.map(async (a) => ((await t.fail(a as Exclude<typeof a, number>)) > 0 ? 429 : 401)));
      assert.deepEqual(answers.sort(), [401, 401, 401, 429, 429, 429]);
      assert.equal(await guess(t, 'own', ATTACKER, true), 429, 'then refused before checking');
    });

    it('once a trusted pair has failed here, its attempts are counted before they are checked, under its own limit only', async () => {
      await fresh();
      const t = throttle({ pairLimit: 4, addressLimit: 4 });
      assert.equal(await guess(t, 'own', ATTACKER, true), 200);
      assert.equal(await guess(t, 'own', ATTACKER), 401);
      // ten wrong secrets at once: three more are checked (the pair's limit is 4), the rest refused unchecked
      const answers = await Promise.all(Array.from({ length: 10 }, () => guess(t, 'own', ATTACKER)));
      assert.deepEqual([answers.filter((a) => a === 401).length, answers.filter((a) => a === 429).length], [3, 7]);
      // those four failures used up the address's limit (4); the trusted pair is not held by it
      assert.equal(await guess(t, 'stranger', ATTACKER, true), 429, 'a client new to the address waits');
      clock.advance(5 * 60_000);
      assert.equal(await guess(t, 'own', ATTACKER, true), 200, 'the window ends');
    });

    it('is exact across processes: failures spread over two count once, and a limit reached in one holds in the other', async () => {
      await fresh();
      const a = throttle({ pairLimit: 10, addressLimit: 30 });
      const b = throttle({ pairLimit: 10, addressLimit: 30 });
      // the guesser alternates between the two processes: 10 answers of 401 in all, not 20
      const answers: number[] = [];
      for (let i = 0; i < 20; i++) answers.push(await guess(i % 2 ? b : a, 'target', ATTACKER));
      assert.equal(answers.filter((x) => x === 401).length, 10);
      assert.deepEqual(answers.slice(10), Array(10).fill(429));
      // a third process that saw none of it does not confirm the right secret either
      const c = throttle({ pairLimit: 10, addressLimit: 30 });
      assert.equal(await guess(c, 'target', ATTACKER, true), 429);
      assert.ok(c.retryAfter('target', ATTACKER) > 0, 'and it now refuses before authenticating');
      // the address limit too: it has counted 10 failures (the attempts refused by the pair's limit
      // were given back to the address)
      for (let i = 0; i < 20; i++) assert.equal(await guess(i % 2 ? a : b, `junk-${i}`, ATTACKER), 401, `junk ${i}`);
      assert.equal(await guess(a, 'junk-x', ATTACKER), 429, 'past 30 failures of the address, in one process');
      assert.equal(await guess(b, 'junk-y', ATTACKER), 429, 'and in the other');
      assert.equal(await guess(c, 'newcomer', ATTACKER, true), 429, 'and for a correct secret in a third');
    });

    it('keeps serving, in every process, a client that authenticated from an address before its limit was reached', async () => {
      await fresh();
      const a = throttle({ pairLimit: 10, addressLimit: 5 });
      const b = throttle({ pairLimit: 10, addressLimit: 5 });
      assert.equal(await guess(a, 'neighbour', ATTACKER, true), 200);
      for (let i = 0; i < 6; i++) await guess(b, `junk-${i}`, ATTACKER);
      assert.ok(b.retryAfter('junk-0', ATTACKER) > 0, 'b knows the address is throttled');
      // b never served the neighbour, but learnt from the database that a did
      assert.equal(b.retryAfter('neighbour', ATTACKER), 0);
      assert.equal(await guess(b, 'neighbour', ATTACKER, true), 200);
      assert.equal(await guess(b, 'newcomer', ATTACKER, true), 429);
    });

    it('never counts successes, and a success clears the pair but not the address', async () => {
      await fresh();
      const t = throttle({ pairLimit: 3, addressLimit: 5 });
      for (let i = 0; i < 300; i++) assert.equal(await guess(t, 'busy-client', ATTACKER, true), 200);
      assert.equal(await counted(), 0, 'successes count nothing');
      assert.equal(await guess(t, 'own', ATTACKER), 401);
      assert.equal(await guess(t, 'own', ATTACKER), 401);
      assert.equal(await guess(t, 'own', ATTACKER, true), 200);
      // the pair starts again from 0 ...
      assert.equal(await guess(t, 'own', ATTACKER), 401);
      assert.equal(await guess(t, 'own', ATTACKER), 401);
      assert.equal(await guess(t, 'own', ATTACKER, true), 200, 'a success clears it each time');
      // ... but the address has now failed 4 times, and a fifth failure is its last
      assert.equal(await guess(t, 'other', ATTACKER), 401);
      assert.equal(await guess(t, 'newcomer', ATTACKER, true), 429, 'a client not yet served from there waits');
      // a client served from there within the window is still served; its own count still applies
      assert.equal(await guess(t, 'own', ATTACKER, true), 200);
      clock.advance(5 * 60_000);
      assert.equal(await guess(t, 'newcomer', ATTACKER, true), 200, 'the window ends');
    });

    it('answers Retry-After as the seconds left of the window that began with the first failure', async () => {
      await fresh();
      const t = throttle({ pairLimit: 2 });
      assert.equal(await guess(t, 'c', ATTACKER), 401);
      clock.advance(60_000);
      assert.equal(await guess(t, 'c', ATTACKER), 401);
      assert.equal(t.retryAfter('c', ATTACKER), 240);
      clock.advance(239_500);
      assert.equal(t.retryAfter('c', ATTACKER), 1);
      clock.advance(500);
      assert.equal(t.retryAfter('c', ATTACKER), 0);
      // the next failure starts a new window at 1
      assert.equal(await guess(t, 'c', ATTACKER), 401);
    });

    it('counts client ids that cannot exist under one key, so their length costs no storage', async () => {
      await fresh();
      const t = throttle({ pairLimit: 2, addressLimit: 1000 });
      await guess(t, 'x'.repeat(100_000), ATTACKER);
      await guess(t, 'y\u0000', ATTACKER);
      const keys = (await sql<{ key: string }>`select key from token_failures order by key`.execute(db.kysely)).rows.map((r) => r.key);
      assert.deepEqual(keys, [`address:${ATTACKER}`, `pair: ${ATTACKER}`]);
      assert.ok(t.retryAfter('', ATTACKER) > 0);
      assert.equal(t.retryAfter('x', ATTACKER), 0);
    });

    it('leaves counts to the purge once their window is over', async () => {
      await fresh();
      const t = throttle({ pairLimit: 3 });
      await guess(t, 'c', ATTACKER);
      await guess(t, 'd', ATTACKER, true);
      clock.advance(5 * 60_000 + 1);
      const purged = await purgeExpired(store(), clock, { sessionIdleSeconds: 3600, auditRetentionDays: 365 });
      assert.equal(purged.failureCounts, 3, 'the pair and address counts, and the success');
      assert.equal(await rows(), 0);
    });
  });
}

describe('address prefixes', () => {
  it('keys IPv4 by address and IPv6 by /64; IPv4-mapped IPv6 is IPv4', () => {
    assert.equal(addressPrefix('192.0.2.1'), '192.0.2.1');
    assert.equal(addressPrefix('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(addressPrefix('::ffff:c000:201'), '192.0.2.1');
    for (const a of ['2001:db8:7:1::1', '2001:DB8:7:1:ffff:ffff:ffff:ffff', '2001:0db8:0007:0001:0:0:0:0', '2001:db8:7:1::1%eth0']) {
      assert.equal(addressPrefix(a), '2001:db8:7:1::/64', a);
    }
    assert.equal(addressPrefix('2001:db8:7:2::1'), '2001:db8:7:2::/64');
    assert.equal(addressPrefix('::1'), '0:0:0:0::/64');
    assert.equal(addressPrefix('2001:db8::192.0.2.1'), '2001:db8:0:0::/64');
    assert.equal(addressPrefix('x'.repeat(1000)).length, 65, 'a non-address is cut short');
  });
});
