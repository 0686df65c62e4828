// PasskeyStore contract (src/signin/store.ts), on every engine: a user's passkeys listed oldest
// first and found by credential id whoever's they are; a credential id registered once (of many
// inserts at once, one); removal only of the user's own; the signature counter recorded only
// going forward (of many uses with one counter at once, one wins: a replayed answer cannot pass
// twice), both 0 allowed (an authenticator that keeps no counter); a reset and the user's
// deletion take its passkeys.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Passkey } from '../../../src/signin/store.js';
import type { Tenant } from '../../../src/tenants/model.js';
import { engines } from '../../helpers/engines.js';
import { at, childOf, type Contract, fulfilled, newUser, openContract, race, RACERS, sha256, trues, twoTenants } from './harness.js';

for (const engine of engines()) {
  describe(`PasskeyStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    const passkey = (userId: string, over: Partial<Passkey> = {}): Passkey => ({
      id: randomUUID(),
      userId,
      credentialId: randomUUID().replace(/-/g, ''),
      publicKey: Buffer.from([1, 2, 3, 4]),
      counter: 0,
      transports: ['internal', 'hybrid'],
      name: 'Laptop',
      createdAt: at(0),
      lastUsedAt: null,
      ...over,
    });

    it('lists a user’s passkeys oldest first, finds one by credential id, and keeps each user’s apart', async () => {
      const ua = await newUser(c.store, (await childOf(c.store, a)).id);
      const ub = await newUser(c.store, (await childOf(c.store, b)).id);
      const first = passkey(ua.id, { name: 'First', createdAt: at(1) });
      const second = passkey(ua.id, { name: 'Second', createdAt: at(2), transports: [] });
      const other = passkey(ub.id);
      for (const p of [second, first, other]) assert.equal(await c.store.passkeys.insertPasskey(p), true);
      assert.deepEqual(await c.store.passkeys.listPasskeys(ua.id), [first, second]);
      assert.deepEqual(await c.store.passkeys.findPasskeyByCredentialId(other.credentialId), other);
      assert.equal(await c.store.passkeys.findPasskeyByCredentialId('none'), undefined);
      // removal: only the user's own
      assert.equal(await c.store.passkeys.deletePasskey(ua.id, other.id), undefined, "another user's passkey");
      assert.deepEqual(await c.store.passkeys.deletePasskey(ub.id, other.id), other);
      assert.equal(await c.store.passkeys.deletePasskey(ub.id, other.id), undefined, 'once');
      assert.deepEqual(await c.store.passkeys.listPasskeys(ub.id), []);
    });

    it('registers a credential id once: of many inserts at once, one', async () => {
      const u = await newUser(c.store, (await childOf(c.store, a)).id);
      const v = await newUser(c.store, (await childOf(c.store, b)).id);
      const credentialId = `race-${randomUUID()}`;
      const results = fulfilled(await race(RACERS, (i) => c.store.passkeys.insertPasskey(passkey(i % 2 ? u.id : v.id, { credentialId }))));
      assert.equal(trues(results), 1);
    });

    it('records a use only when the counter goes forward (or both are 0); of many at once with one counter, one', async () => {
      const u = await newUser(c.store, (await childOf(c.store, a)).id);
      const counting = passkey(u.id);
      await c.store.passkeys.insertPasskey(counting);
      assert.equal(await c.store.passkeys.recordPasskeyUse(counting.id, 5, at(10)), true);
      assert.equal(await c.store.passkeys.recordPasskeyUse(counting.id, 5, at(11)), false, 'the same counter');
      assert.equal(await c.store.passkeys.recordPasskeyUse(counting.id, 3, at(12)), false, 'a counter behind');
      assert.equal(await c.store.passkeys.recordPasskeyUse(counting.id, 0, at(13)), false, '0 after a counter');
      const results = fulfilled(await race(RACERS, () => c.store.passkeys.recordPasskeyUse(counting.id, 6, at(14))));
      assert.equal(trues(results), 1, 'one answer, one use');
      const found = await c.store.passkeys.findPasskeyByCredentialId(counting.credentialId);
      assert.equal(found?.counter, 6);
      assert.deepEqual(found?.lastUsedAt, at(14));
      const none = passkey(u.id);
      await c.store.passkeys.insertPasskey(none);
      assert.equal(await c.store.passkeys.recordPasskeyUse(none.id, 0, at(20)), true, 'no counter kept: 0 and 0');
      assert.equal(await c.store.passkeys.recordPasskeyUse(none.id, 0, at(21)), true);
      assert.equal(await c.store.passkeys.recordPasskeyUse(randomUUID(), 9, at(22)), false, 'a passkey that is gone');
    });

    it('a reset of the user’s sign-in and the user’s deletion take its passkeys, and no one else’s', async () => {
      const u = await newUser(c.store, (await childOf(c.store, a)).id);
      const v = await newUser(c.store, (await childOf(c.store, b)).id);
      await c.store.passkeys.insertPasskey(passkey(u.id));
      const kept = passkey(v.id);
      await c.store.passkeys.insertPasskey(kept);
      await c.store.users.resetSignIn(u.id, sha256(`reset ${u.id}`), at(60_000), at(1), 'admin');
      assert.deepEqual(await c.store.passkeys.listPasskeys(u.id), []);
      await c.store.passkeys.insertPasskey(passkey(u.id));
      await c.store.users.deleteUser(u.id);
      assert.deepEqual(await c.store.passkeys.listPasskeys(u.id), []);
      assert.deepEqual(await c.store.passkeys.listPasskeys(v.id), [kept]);
    });
  });
}
