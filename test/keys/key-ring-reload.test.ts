// A token naming a kid this process has not seen makes the key ring read the keys again (another
// process may have added one), at most once a second of the service's clock, so that a flood of
// made-up kids costs one query a second and not one each.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/clock.js';
import { SealedBox } from '../../src/crypto/sealed-box.js';
import { KeyRing } from '../../src/keys/key-ring.js';
import type { KeyStore, StoredSigningKey } from '../../src/keys/store.js';

interface MemoryKeyStore {
  reads: number;
  keys: KeyStore;
  transaction<T>(fn: (tx: MemoryKeyStore) => Promise<T>): Promise<T>;
}

function memoryKeyStore(): MemoryKeyStore {
  const keys: StoredSigningKey[] = [];
  const store: MemoryKeyStore = {
    reads: 0,
    keys: {
      listKeys: async () => {
        store.reads++;
        return [...keys];
      },
      insertKey: async (k) => {
        keys.push(k);
      },
      updateSealedKey: async () => {},
      lockKeys: async () => {},
    },
    transaction: (fn) => fn(store),
  };
  return store;
}

describe('key ring reloads', () => {
  it('looks an unknown kid up at most once a second of the injected clock', async () => {
    const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'));
    const store = memoryKeyStore();
    const ring = await KeyRing.open(store, new SealedBox([randomBytes(32)]), clock);
    const opened = store.reads;
    assert.equal(await ring.verificationKey('made-up-1'), undefined);
    assert.equal(store.reads, opened + 1, 'the first unknown kid reads the keys');
    // the wall clock runs on; the service's clock does not: no second read
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal(await ring.verificationKey('made-up-2'), undefined);
    assert.equal(store.reads, opened + 1, 'within the same second of the service clock nothing is read');
    clock.advance(1000);
    assert.equal(await ring.verificationKey('made-up-3'), undefined);
    assert.equal(store.reads, opened + 2);
  });
});
