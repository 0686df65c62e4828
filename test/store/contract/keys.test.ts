// KeyStore contract (src/keys/store.ts), on every engine: signing keys listed oldest first as
// inserted, a re-sealed private half replacing one key's only, and the lock that serialises key
// creation across processes: of many first starts at once, exactly one creates the key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { StoredSigningKey } from '../../../src/keys/store.js';
import { at, type Contract, fulfilled, HOUR, openContract, raceTransactions, T0, TX_RACERS } from './harness.js';
import { engines } from '../../helpers/engines.js';

const key = (over: Partial<StoredSigningKey> = {}): StoredSigningKey => ({
  kid: randomUUID(),
  alg: 'RS256',
  publicJwk: { kty: 'RSA', n: 'sXch', e: 'AQAB', use: 'sig' },
  privateJwkSealed: `v2.c0ffee00.${randomUUID()}`,
  createdAt: T0,
  signsFrom: over.createdAt ?? T0,
  signsUntil: null,
  retiredAt: null,
  ...over,
});

for (const engine of engines()) {
  describe(`KeyStore contract (${engine})`, () => {
    let c: Contract;
    before(async () => {
      c = await openContract(engine);
    });
    after(() => c.db.close());

    it('of first starts at once under lockKeys, exactly one creates the key; the others find it', async () => {
      assert.deepEqual(await c.store.keys.listKeys(), [], 'a migrated database has no key');
      const created = fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx, i) => {
          await tx.keys.lockKeys();
          if ((await tx.keys.listKeys()).length > 0) return false;
          await tx.keys.insertKey(key({ kid: `first-${i}` }));
          return true;
        }),
      );
      assert.equal(created.filter(Boolean).length, 1);
      assert.deepEqual(
        (await c.store.keys.listKeys()).map((k) => k.kid),
        [`first-${created.indexOf(true)}`],
      );
    });

    it('listKeys: every key as inserted, oldest first', async () => {
      const [first] = await c.store.keys.listKeys();
      const retired = key({ createdAt: at(HOUR), retiredAt: at(2 * HOUR), alg: 'ES256', publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } });
      // not open-ended: the first key is (one open-ended key not retired at most: below)
      const newest = key({ createdAt: at(3 * HOUR), signsUntil: at(4 * HOUR) });
      await c.store.keys.insertKey(newest);
      await c.store.keys.insertKey(retired);
      assert.deepEqual(await c.store.keys.listKeys(), [first, retired, newest]);
      await assert.rejects(c.store.keys.insertKey(key({ kid: newest.kid })), 'a key id names one key');
      assert.equal((await c.store.keys.listKeys()).length, 3);
    });

    it('updateSealedKey replaces that key’s sealed private half only', async () => {
      const before = await c.store.keys.listKeys();
      const [target, ...others] = before;
      await c.store.keys.updateSealedKey(target!.kid, 'v2.deadbeef.resealed');
      await c.store.keys.updateSealedKey('no-such-kid', 'v2.deadbeef.other');
      assert.deepEqual(await c.store.keys.listKeys(), [{ ...target!, privateJwkSealed: 'v2.deadbeef.resealed' }, ...others]);
    });

    it('updateKeyTimes changes that key’s times only, and what it is not given stays', async () => {
      const before = await c.store.keys.listKeys();
      const [target, ...others] = before;
      await c.store.keys.updateKeyTimes(target!.kid, { signsUntil: at(5 * HOUR) });
      await c.store.keys.updateKeyTimes(target!.kid, { signsFrom: at(-HOUR) });
      await c.store.keys.updateKeyTimes('no-such-kid', { retiredAt: at(HOUR) });
      assert.deepEqual(await c.store.keys.listKeys(), [{ ...target!, signsFrom: at(-HOUR), signsUntil: at(5 * HOUR) }, ...others]);
    });

    it('at most one key not retired has no end (signs_until): a second is refused, a retired one is not counted', async () => {
      const open = key({ createdAt: at(6 * HOUR) });
      await c.store.keys.insertKey(open);
      await assert.rejects(c.store.keys.insertKey(key({ createdAt: at(7 * HOUR) })), 'a second open-ended key');
      await c.store.keys.insertKey(key({ createdAt: at(7 * HOUR), retiredAt: at(7 * HOUR) }));
      await c.store.keys.updateKeyTimes(open.kid, { retiredAt: at(8 * HOUR) });
      await c.store.keys.insertKey(key({ createdAt: at(8 * HOUR) }));
      const openEnded = (await c.store.keys.listKeys()).filter((k) => k.signsUntil === null && k.retiredAt === null);
      assert.equal(openEnded.length, 1);
    });
  });
}
