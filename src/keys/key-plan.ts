// Making a signing key, and carrying out a KeyPlan (keys/model.ts) inside a transaction that holds
// the key lock: the key ring's first key and the key service's rotations and retirements alike.
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { SealedBox } from '../crypto/sealed-box.js';
import type { KeyPlan } from './model.js';
import type { KeyStore, StoredSigningKey } from './store.js';

export const SIGNING_ALG = 'ES256';
/** binds a sealed private key to its kid: a sealed value copied onto another row does not open */
export const sealContext = (kid: string) => `signing-key:${kid}`;

/** A new ES256 key pair, its private half sealed; published from `now`, signing from `signsFrom`. */
export async function newSigningKey(box: SealedBox, now: Date, signsFrom: Date): Promise<StoredSigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    kid,
    alg: SIGNING_ALG,
    publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
    privateJwkSealed: box.seal(JSON.stringify(privateJwk), sealContext(kid)),
    createdAt: now,
    signsFrom,
    signsUntil: null,
    retiredAt: null,
  };
}

/**
 * Writes the plan: its updates in order (a retirement, or an end set, before the new key, so
 * that at no moment two keys not retired are open-ended: the unique index), then the new key.
 * The caller holds the key lock (KeyStore.lockKeys) in the same transaction. Returns the new key.
 */
export async function applyKeyPlan(keys: KeyStore, box: SealedBox | undefined, plan: KeyPlan, now: Date): Promise<StoredSigningKey | undefined> {
  for (const { kid, ...change } of plan.updates) await keys.updateKeyTimes(kid, change);
  if (plan.newKeySignsFrom === undefined) return undefined;
  if (!box) throw new Error('a signing key is made only with the encryption key');
  const key = await newSigningKey(box, now, plan.newKeySignsFrom);
  await keys.insertKey(key);
  return key;
}
