// DeviceStore contract (src/device/store.ts), on every engine: the unique rule device.userCode,
// the lock a poll holds, and the status moves that happen once whatever runs at once: a pending
// authorization decided once (approved or denied, for one user), an approved one issued once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { DeviceAuthorization } from '../../../src/device/model.js';
import type { Tenant } from '../../../src/tenants/model.js';
import {
  at,
  type Contract,
  fulfilled,
  MINUTE,
  newUser,
  oneWinsOthersDuplicate,
  openContract,
  race,
  RACERS,
  raceTransactions,
  rejectsDuplicate,
  SECOND,
  sha256,
  T0,
  trues,
  twoTenants,
  TX_RACERS,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

/** distinct 8-letter user codes of the device alphabet (never BBBBBBBB, number 0) */
let codes = 1 + Math.floor(Math.random() * 1e9);
function userCode(): string {
  const alphabet = 'BCDFGHJKLMNPQRSTVWXZ';
  let n = codes++;
  let code = '';
  for (let i = 0; i < 8; i++) {
    code += alphabet[n % 20];
    n = Math.floor(n / 20);
  }
  return code;
}

const authorization = (over: Partial<DeviceAuthorization> = {}): DeviceAuthorization => ({
  deviceCodeHash: sha256(randomUUID()),
  userCode: userCode(),
  clientId: 'gatehouse-cli',
  loginHint: 'someone@example.com',
  status: 'pending',
  userId: null,
  intervalSeconds: 5,
  lastPolledAt: null,
  createdAt: T0,
  expiresAt: at(10 * MINUTE),
  requestedFrom: '203.0.113.7',
  ...over,
});

for (const engine of engines()) {
  describe(`DeviceStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    it('an authorization is found by its user code and locked by its device code, as inserted', async () => {
      const d = authorization();
      await c.store.device.insertDeviceAuthorization(d);
      assert.deepEqual(await c.store.device.findByUserCode(d.userCode), d);
      assert.deepEqual(await c.store.transaction((tx) => tx.device.lockByDeviceCode(d.deviceCodeHash)), d);
      assert.equal(await c.store.device.findByUserCode('BBBBBBBB'), undefined);
      assert.equal(await c.store.device.lockByDeviceCode(sha256('no such device code')), undefined);
    });

    it('device.userCode: a user code names one authorization; of one code taken at once, one insert wins', async () => {
      const d = authorization();
      await c.store.device.insertDeviceAuthorization(d);
      await rejectsDuplicate(c.store.device.insertDeviceAuthorization(authorization({ userCode: d.userCode })), 'device.userCode');
      const code = userCode();
      const results = await race(RACERS, (i) => c.store.device.insertDeviceAuthorization(authorization({ userCode: code, loginHint: `racer-${i}` })));
      const winner = oneWinsOthersDuplicate(results, 'device.userCode');
      assert.equal((await c.store.device.findByUserCode(code))?.loginHint, `racer-${winner}`);
    });

    it('recordPoll stamps the poll and the interval of that authorization only; the lock serialises polls', async () => {
      const d = authorization();
      const other = authorization();
      await c.store.device.insertDeviceAuthorization(d);
      await c.store.device.insertDeviceAuthorization(other);
      await c.store.device.recordPoll(d.deviceCodeHash, at(SECOND), 10);
      const polled = await c.store.device.findByUserCode(d.userCode);
      assert.deepEqual([polled?.lastPolledAt, polled?.intervalSeconds], [at(SECOND), 10]);
      // polls at once, each slowing the next down (slow_down): none is lost
      fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx, i) => {
          const locked = await tx.device.lockByDeviceCode(d.deviceCodeHash);
          assert.ok(locked);
          await tx.device.recordPoll(d.deviceCodeHash, at(2 * SECOND + i), locked.intervalSeconds + 5);
        }),
      );
      assert.equal((await c.store.device.findByUserCode(d.userCode))?.intervalSeconds, 10 + 5 * TX_RACERS);
      const untouched = await c.store.device.findByUserCode(other.userCode);
      assert.deepEqual([untouched?.lastPolledAt, untouched?.intervalSeconds], [null, 5]);
    });

    it('decide moves a pending, unexpired authorization once: of approvals and denials at once, exactly one applies', async () => {
      const users = [await newUser(c.store, a.id), await newUser(c.store, b.id)];
      const d = authorization();
      await c.store.device.insertDeviceAuthorization(d);
      const decided = fulfilled(
        await race(RACERS, (i) => c.store.device.decide(d.userCode, i % 2 ? 'denied' : 'approved', users[i % 2]!.id, at(MINUTE))),
      );
      assert.equal(trues(decided), 1);
      const w = decided.indexOf(true);
      const after = await c.store.device.findByUserCode(d.userCode);
      assert.deepEqual(
        [after?.status, after?.userId],
        [w % 2 ? 'denied' : 'approved', users[w % 2]!.id],
        'the winner’s decision, for the winner’s user',
      );
      assert.equal(await c.store.device.decide(d.userCode, 'approved', users[0]!.id, at(MINUTE)), false, 'decided already');

      const expired = authorization({ expiresAt: at(MINUTE) });
      await c.store.device.insertDeviceAuthorization(expired);
      assert.equal(await c.store.device.decide(expired.userCode, 'approved', users[0]!.id, at(MINUTE)), false, 'expired');
      assert.equal((await c.store.device.findByUserCode(expired.userCode))?.status, 'pending');
      assert.equal(await c.store.device.decide('BBBBBBBB', 'approved', users[0]!.id, T0), false);
    });

    it('markIssued moves approved to issued once, even polled many times at once; nothing else moves', async () => {
      const u = await newUser(c.store, a.id);
      const d = authorization();
      const pending = authorization();
      await c.store.device.insertDeviceAuthorization(d);
      await c.store.device.insertDeviceAuthorization(pending);
      assert.equal(await c.store.device.markIssued(d.deviceCodeHash), false, 'not approved yet');
      assert.equal(await c.store.device.decide(d.userCode, 'approved', u.id, T0), true);
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.device.markIssued(d.deviceCodeHash)))), 1);
      assert.equal((await c.store.device.findByUserCode(d.userCode))?.status, 'issued');
      assert.equal(await c.store.device.markIssued(d.deviceCodeHash), false);
      assert.equal((await c.store.device.findByUserCode(pending.userCode))?.status, 'pending', 'another authorization is untouched');
    });

    it('setStatus sets that authorization’s status only', async () => {
      const d = authorization();
      const other = authorization();
      await c.store.device.insertDeviceAuthorization(d);
      await c.store.device.insertDeviceAuthorization(other);
      await c.store.device.setStatus(d.deviceCodeHash, 'denied');
      assert.equal((await c.store.device.findByUserCode(d.userCode))?.status, 'denied');
      assert.equal((await c.store.device.findByUserCode(other.userCode))?.status, 'pending');
    });

    it('deleteExpiredDeviceAuthorizations deletes those expired before the cut, and counts them', async () => {
      const day = 24 * 60 * MINUTE;
      await c.store.device.deleteExpiredDeviceAuthorizations(at(day));
      const gone = authorization({ expiresAt: at(day + MINUTE - 1) });
      const edge = authorization({ expiresAt: at(day + MINUTE) });
      const live = authorization({ expiresAt: at(day + 10 * MINUTE) });
      for (const d of [gone, edge, live]) await c.store.device.insertDeviceAuthorization(d);
      assert.equal(await c.store.device.deleteExpiredDeviceAuthorizations(at(day + MINUTE)), 1);
      assert.equal(await c.store.device.findByUserCode(gone.userCode), undefined);
      assert.ok(await c.store.device.findByUserCode(edge.userCode), 'expiring at the cut is not before it');
      assert.ok(await c.store.device.findByUserCode(live.userCode));
    });
  });
}
