// A token naming a kid this process has not seen makes the key ring read the keys again (another
// process may have added one), at most once a second of the service's clock, so that a flood of
// made-up kids costs one query a second and not one each. A key added that this process cannot
// load (sealed under an encryption key it lacks, or corrupt) is left out and logged once: every
// other key keeps working, and the unloadable key's tokens are refused as invalid (401), not 500.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { ManualClock } from '../../src/clock.js';
import { SealedBox } from '../../src/crypto/sealed-box.js';
import { KeyRing } from '../../src/keys/key-ring.js';
import { ChangeSignal } from '../../src/store/auth-changes.js';
import type { KeyStore, StoredSigningKey } from '../../src/keys/store.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';

interface MemoryKeyStore {
  reads: number;
  keys: KeyStore;
  transaction<T>(fn: (tx: MemoryKeyStore) => Promise<T>): Promise<T>;
}

/** Keys in memory. `heldBy`: a read takes its snapshot when called, as a database read does,
 *  and answers once the promise it returns (if any) settles. */
function memoryKeyStore(keys: StoredSigningKey[] = [], heldBy: () => Promise<void> | undefined = () => undefined): MemoryKeyStore {
  const store: MemoryKeyStore = {
    reads: 0,
    keys: {
      listKeys: async () => {
        store.reads++;
        const snapshot = keys.map((k) => ({ ...k }));
        await heldBy();
        return snapshot;
      },
      insertKey: async (k) => {
        keys.push(k);
      },
      updateSealedKey: async () => {},
      updateKeyTimes: async () => {},
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
    const ring = await KeyRing.open(store, new SealedBox([randomBytes(32)]), clock, { error: () => {} }, { tokenLifetimeMs: 36_005_000 });
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

describe('key ring reads racing a change', () => {
  it('a caller that heard of a retirement while a read was under way does not take that older read: the retired key is no longer held', async () => {
    const clock = new ManualClock(new Date('2026-11-23T10:00:00Z'));
    const box = new SealedBox([randomBytes(32)]);
    const first = await storedKey(box, new Date('2026-11-23T09:00:00Z'), null);
    const rows: StoredSigningKey[] = [first.row];
    let hold: Promise<void> | undefined;
    const store = memoryKeyStore(rows, () => hold);
    const changes = new ChangeSignal();
    const ring = await KeyRing.open(store, box, clock, { error: () => {} }, { tokenLifetimeMs: 36_005_000, changes });
    assert.equal(ring.holds(first.row.kid), true);

    // some change: a read begins and is held with what the table held then
    let release!: () => void;
    hold = new Promise<void>((r) => {
      release = r;
    });
    changes.bump();
    const early = ring.refresh();
    // meanwhile the key is retired (an emergency) and a successor added; this process hears of it
    rows[0] = { ...rows[0]!, retiredAt: clock.now() };
    rows.push((await storedKey(box, clock.now(), null)).row);
    changes.bump();
    const late = ring.refresh();
    hold = undefined;
    release();
    await Promise.all([early, late]);
    assert.equal(ring.holds(first.row.kid), false, 'the caller that heard of the retirement saw it');
    assert.equal(store.reads >= 3, true, 'the held read, then one begun after the change');
  });
});

/** A new ES256 key as another process would store it, its private part sealed by `box`, signing from its creation until `signsUntil`. */
async function storedKey(
  box: SealedBox,
  createdAt: Date,
  signsUntil: Date | null,
  privatePart?: string,
): Promise<{ row: StoredSigningKey; privateKey: CryptoKey }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const sealed = box.seal(privatePart ?? JSON.stringify(await exportJWK(privateKey)), `signing-key:${kid}`);
  return {
    row: {
      kid,
      alg: 'ES256',
      publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' },
      privateJwkSealed: sealed,
      createdAt,
      signsFrom: createdAt,
      signsUntil,
      retiredAt: null,
    },
    privateKey,
  };
}

const LIST_CLIENTS = '{ clients { client_id } }';
const errorLines = (t: TestApp) => t.logs.map((l) => JSON.parse(l) as { level: number; msg: string; kid?: string }).filter((l) => l.level >= 50);

for (const engine of engines()) {
  describe(`key ring reload with a key this process cannot load (${engine})`, () => {
    it('keeps every other key, logs the bad one once with its id, and refuses its tokens with 401', async () => {
      const t = await startTestApp({ engine });
      try {
        const genuine = JSON.parse(Buffer.from((await t.rootToken()).split('.')[1]!, 'base64url').toString('utf8'));
        const ours = new SealedBox([Buffer.from(TEST_ENCRYPTION_KEY, 'hex')]);
        const later = (seconds: number) => new Date(t.clock.now().getTime() + seconds * 1000);
        // added by other processes, oldest first, each the successor of the one before: one sealed
        // under an encryption key this process does not have, one whose unsealed private part is
        // not a key at all, then a good one
        const foreign = await storedKey(new SealedBox([randomBytes(32)]), later(1), later(2));
        const corrupt = await storedKey(ours, later(2), later(3), 'not a JSON Web Key: d=secret-looking-material');
        const good = await storedKey(ours, later(3), null);
        const [first] = await t.service.store.keys.listKeys();
        await t.service.store.keys.updateKeyTimes(first!.kid, { signsUntil: later(1) });
        for (const k of [foreign, corrupt, good]) await t.service.store.keys.insertKey(k.row);

        const sign = (k: { row: StoredSigningKey; privateKey: CryptoKey }) => {
          const now = Math.floor(t.clock.now().getTime() / 1000);
          return new SignJWT({ ...genuine, iat: now, exp: now + 600, jti: randomUUID() })
            .setProtectedHeader({ alg: 'ES256', kid: k.row.kid, typ: 'at+jwt' })
            .sign(k.privateKey);
        };

        // a token of the good key: the reload it causes loads it, past the two it cannot load
        const res = await t.gql(await sign(good), LIST_CLIENTS);
        assert.equal(res.status, 200, res.text);

        // tokens of the unloadable keys: 401 invalid_token, each time (every reload tries again)
        for (let round = 0; round < 2; round++) {
          for (const bad of [foreign, corrupt]) {
            t.clock.advance(1000);
            const refused = await t.gql(await sign(bad), LIST_CLIENTS);
            assert.equal(refused.status, 401, refused.text);
            assert.match(String(refused.headers['www-authenticate']), /error="invalid_token"/);
            assert.equal(refused.body.errors[0].extensions.code, 'UNAUTHENTICATED');
            assert.match(refused.body.errors[0].message, /signed with a key \(kid\) this server cannot load/);
          }
        }

        // each bad key logged once, at error level, by its id; nothing of its private part
        const errors = errorLines(t);
        assert.deepEqual(errors.map((l) => l.kid).sort(), [foreign.row.kid, corrupt.row.kid].sort(), JSON.stringify(errors));
        for (const line of errors) assert.match(line.msg, new RegExp(`signing key ${line.kid} cannot be used`));
        assert.ok(!t.logs.some((l) => l.includes('secret-looking-material') || l.includes(corrupt.row.privateJwkSealed)));

        // the good key is published and signs from now on (its signs_from has passed); the bad ones are not published
        const kids = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body.keys.map((k: { kid: string }) => k.kid);
        assert.ok(kids.includes(good.row.kid));
        assert.ok(!kids.includes(foreign.row.kid) && !kids.includes(corrupt.row.kid));
        const fresh = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        assert.equal(JSON.parse(Buffer.from(fresh.split('.')[0]!, 'base64url').toString('utf8')).kid, good.row.kid);
        assert.equal((await t.gql(fresh, LIST_CLIENTS)).status, 200);
      } finally {
        await t.close();
      }
    });
  });
}
