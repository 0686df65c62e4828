// The guessing throttle on its own (no storage), with tables small enough to fill in a test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { addressPrefix } from '../../src/oauth/address-prefix.js';
import { FailureThrottle } from '../../src/oauth/failure-throttle.js';

const ATTACKER = '203.0.113.9';

/** one guess as the token endpoint makes it: refused while throttled, else counted when wrong */
function guess(throttle: FailureThrottle, clientId: string, ip: string, correct = false): number {
  const wait = throttle.retryAfter(clientId, ip);
  if (wait > 0) return 429;
  if (correct) return throttle.succeed(clientId, ip) > 0 ? 429 : 200;
  return throttle.fail(clientId, ip) > 0 ? 429 : 401;
}

describe('failure throttle', () => {
  it('keeps a throttled client throttled when junk client ids from the same address overflow a small table', () => {
    const throttle = new FailureThrottle(new ManualClock(), { tableSize: 4, pairLimit: 3, addressLimit: 1000 });
    for (let i = 0; i < 3; i++) assert.equal(guess(throttle, 'target', ATTACKER), 401);
    assert.equal(guess(throttle, 'target', ATTACKER, true), 429);
    // far more junk ids than the table holds, each below its own limit
    for (let i = 0; i < 100; i++) assert.equal(guess(throttle, `junk-${i}`, ATTACKER), 401);
    assert.equal(guess(throttle, 'target', ATTACKER, true), 429, 'the target is still throttled');
    assert.ok(throttle.size.pairs <= 8, 'both pair tables stay within their size');
    // the correct secret from elsewhere still works
    assert.equal(guess(throttle, 'target', '198.51.100.1', true), 200);
  });

  it('throttles an address that fails across many client ids, and then adds no entries for it', () => {
    const throttle = new FailureThrottle(new ManualClock(), { pairLimit: 10, addressLimit: 20 });
    for (let i = 0; i < 20; i++) assert.equal(guess(throttle, `junk-${i}`, ATTACKER), 401);
    const size = throttle.size;
    for (let i = 20; i < 200; i++) assert.equal(guess(throttle, `junk-${i}`, ATTACKER), 429);
    assert.deepEqual(throttle.size, size, 'throttled requests add nothing');
    assert.equal(guess(throttle, 'anyone', ATTACKER, true), 429, 'every client at that address waits');
    assert.equal(guess(throttle, 'anyone', '198.51.100.1', true), 200, 'other addresses do not');
  });

  it('lets failures that were checked together go past no limit: the extra ones are answered 429', () => {
    const throttle = new FailureThrottle(new ManualClock(), { pairLimit: 10, addressLimit: 25 });
    // thirty requests pass the check before any of them fails (a parallel burst)
    for (let i = 0; i < 30; i++) assert.equal(throttle.retryAfter('target', ATTACKER), 0);
    const answers = Array.from({ length: 30 }, () => (throttle.fail('target', ATTACKER) > 0 ? 429 : 401));
    assert.equal(answers.filter((a) => a === 401).length, 10);
    // a correct secret that was checked alongside them is not confirmed either
    assert.ok(throttle.succeed('target', ATTACKER) > 0);
    // a burst of junk ids stops adding pair entries once the address is past its limit
    const other = '192.0.2.200';
    const burst = Array.from({ length: 100 }, (_, i) => `burst-${i}`);
    for (const id of burst) assert.equal(throttle.retryAfter(id, other), 0);
    const before = throttle.size.pairs;
    for (const id of burst) throttle.fail(id, other);
    assert.equal(throttle.size.pairs - before, 25);
  });

  it('never counts successes, and a success clears the pair but not the address', () => {
    const clock = new ManualClock();
    const throttle = new FailureThrottle(clock, { pairLimit: 3, addressLimit: 5 });
    for (let i = 0; i < 1000; i++) assert.equal(guess(throttle, 'busy-client', ATTACKER, true), 200);
    assert.equal(guess(throttle, 'own', ATTACKER), 401);
    assert.equal(guess(throttle, 'own', ATTACKER), 401);
    assert.equal(guess(throttle, 'own', ATTACKER, true), 200);
    // the pair starts again from 0 ...
    assert.equal(guess(throttle, 'own', ATTACKER), 401);
    assert.equal(guess(throttle, 'own', ATTACKER), 401);
    // ... but the address has now failed 4 times, and a fifth failure is its last
    assert.equal(guess(throttle, 'other', ATTACKER), 401);
    assert.equal(guess(throttle, 'newcomer', ATTACKER, true), 429, 'a client not yet served from there waits');
    // a client served from there within the window is still served; its own count still applies
    assert.equal(guess(throttle, 'own', ATTACKER, true), 200);
    clock.advance(5 * 60_000);
    assert.equal(guess(throttle, 'newcomer', ATTACKER, true), 200, 'the window ends');
  });

  it('answers Retry-After as the seconds left of the window that began with the first failure', () => {
    const clock = new ManualClock();
    const throttle = new FailureThrottle(clock, { pairLimit: 2 });
    throttle.fail('c', ATTACKER);
    clock.advance(60_000);
    throttle.fail('c', ATTACKER);
    assert.equal(throttle.retryAfter('c', ATTACKER), 240);
    clock.advance(239_500);
    assert.equal(throttle.retryAfter('c', ATTACKER), 1);
    clock.advance(500);
    assert.equal(throttle.retryAfter('c', ATTACKER), 0);
  });

  it('counts client ids that cannot exist under one key, so their length costs no memory', () => {
    const throttle = new FailureThrottle(new ManualClock(), { pairLimit: 2, addressLimit: 1000 });
    throttle.fail('x'.repeat(100_000), ATTACKER);
    throttle.fail('y'.repeat(200), ATTACKER);
    assert.equal(throttle.size.pairs, 1);
    assert.ok(throttle.retryAfter('', ATTACKER) > 0);
    assert.equal(throttle.retryAfter('x', ATTACKER), 0);
  });

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
