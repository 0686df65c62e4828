// The token-signing keys: ES256 key pairs kept in the database (private halves sealed), so every
// process on one database signs and verifies with the same keys. One key signs; every key not
// retired verifies and is published in the JWKS. A kid this process has not seen is looked up in
// the database (another process may have added a key), at most once a second. At start every live
// key must load (a start that cannot use a key fails, naming it); a key met on a later reload
// that cannot be loaded (sealed under an encryption key this process lacks, or corrupt) is left
// out and logged once: the others keep working, and its tokens are refused as unknown.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Clock } from '../clock.js';
import { es256Signer, type Es256Signer } from './compact-jws.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import type { Transactional } from '../transaction.js';
import type { KeyStore, StoredSigningKey } from './store.js';

/** What the key ring reads and writes. */
export interface KeyStores {
  keys: KeyStore;
}

/** Where the key ring reports a key it leaves out (pino's logger is one). */
export interface KeyRingLog {
  error(fields: Record<string, unknown>, message: string): void;
}

export const SIGNING_ALG = 'ES256';
// binds a sealed private key to its kid: a sealed value copied onto another row does not open
const sealContext = (kid: string) => `signing-key:${kid}`;

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  signer: Es256Signer;
  createdAt: Date;
}

/** Names the key in an error about it (a start that fails says which key). */
function keyError(kid: string, err: unknown): Error {
  return new Error(`signing key ${kid} cannot be used: ${(err as Error).message}`, { cause: err });
}

/**
 * A stored key, opened and checked, or an error that names it. The unsealed private part is
 * never put into a message: a JSON error would quote it.
 */
async function loadKey(box: SealedBox, k: StoredSigningKey): Promise<LoadedKey> {
  try {
    const plaintext = box.open(k.privateJwkSealed, sealContext(k.kid));
    let privateJwk: JWK;
    try {
      privateJwk = JSON.parse(plaintext) as JWK;
    } catch {
      throw new Error('its unsealed private part is not a JSON Web Key');
    }
    return {
      kid: k.kid,
      publicJwk: k.publicJwk as JWK,
      verifyKey: (await importJWK(k.publicJwk as JWK, k.alg)) as CryptoKey,
      signer: es256Signer(privateJwk, k.publicJwk as JWK),
      createdAt: k.createdAt,
    };
  } catch (err) {
    throw keyError(k.kid, err);
  }
}

/** Whether a live key is sealed under another than the first encryption key; an error names the key. */
function needsReseal(box: SealedBox, k: StoredSigningKey): boolean {
  try {
    return box.needsReseal(k.privateJwkSealed, sealContext(k.kid));
  } catch (err) {
    throw keyError(k.kid, err);
  }
}

export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  private current!: LoadedKey;
  private lastReload = 0;
  /** live keys a reload could not load, each logged once (until it loads) */
  private readonly unloadable = new Set<string>();

  private constructor(
    private readonly store: Transactional<KeyStores>,
    private readonly box: SealedBox,
    private readonly clock: Clock,
    private readonly log: KeyRingLog,
  ) {}

  /**
   * Loads the keys, creating the first one on an empty database (once, across processes). Every
   * live key must load: one that cannot fails the start, naming the key.
   */
  static async open(store: Transactional<KeyStores>, box: SealedBox, clock: Clock, log: KeyRingLog): Promise<KeyRing> {
    const ring = new KeyRing(store, box, clock, log);
    let stored = await store.keys.listKeys();
    if (!stored.some((k) => k.retiredAt === null)) {
      stored = await store.transaction(async (tx) => {
        await tx.keys.lockKeys();
        const existing = await tx.keys.listKeys();
        if (existing.some((k) => k.retiredAt === null)) return existing;
        await tx.keys.insertKey(await ring.newKey());
        return tx.keys.listKeys();
      });
    }
    if (stored.some((k) => k.retiredAt === null && needsReseal(box, k))) {
      stored = await ring.resealKeys();
    }
    await ring.load(stored, 'strict');
    return ring;
  }

  /**
   * Seals again, under the first encryption key, every live key sealed under another one, so that
   * after a rotation the old encryption key can be dropped. Under the key lock, and checked again
   * inside it: of several processes starting together, the first re-seals and the others find
   * nothing left to do. Retired keys are never unsealed, so they are left as they are.
   */
  private async resealKeys(): Promise<StoredSigningKey[]> {
    return await this.store.transaction(async (tx) => {
      await tx.keys.lockKeys();
      for (const k of await tx.keys.listKeys()) {
        if (k.retiredAt !== null) continue;
        const resealed = this.box.reseal(k.privateJwkSealed, sealContext(k.kid));
        if (resealed !== undefined) await tx.keys.updateSealedKey(k.kid, resealed);
      }
      return tx.keys.listKeys();
    });
  }

  private async newKey(): Promise<StoredSigningKey> {
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = await exportJWK(privateKey);
    return {
      kid,
      alg: SIGNING_ALG,
      publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
      privateJwkSealed: this.box.seal(JSON.stringify(privateJwk), sealContext(kid)),
      createdAt: this.clock.now(),
      retiredAt: null,
    };
  }

  /**
   * Adds the live keys not loaded yet and drops the retired ones. `strict` (at start): a key that
   * cannot be loaded fails the whole load. `tolerant` (a reload while serving): it is left out,
   * logged once at error level with its id, and tried again at the next reload; every other key
   * still loads, and its tokens are refused as signed by an unknown key.
   */
  private async load(stored: StoredSigningKey[], mode: 'strict' | 'tolerant'): Promise<void> {
    for (const k of stored) {
      if (k.retiredAt !== null) {
        this.keys.delete(k.kid);
        this.unloadable.delete(k.kid);
        continue;
      }
      if (this.keys.has(k.kid)) continue;
      let loaded: LoadedKey;
      try {
        loaded = await loadKey(this.box, k);
      } catch (err) {
        if (mode === 'strict') throw err;
        if (!this.unloadable.has(k.kid)) {
          this.unloadable.add(k.kid);
          this.log.error(
            { kid: k.kid, reason: (err as Error).message },
            `signing key ${k.kid} cannot be used and is left out: tokens signed with it are refused, every other key keeps working. ` +
              'Give this process the encryption key it was sealed under (GATEHOUSE_ENCRYPTION_KEY) and restart it; a corrupt key must be retired (signing_keys.retired_at)',
          );
        }
        continue;
      }
      this.unloadable.delete(k.kid);
      this.keys.set(k.kid, loaded);
    }
    // the newest live key signs
    const live = [...this.keys.values()].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    if (!live[0]) throw new Error('no signing key');
    this.current = live[0];
  }

  /** the newest live key's id and a signer holding it */
  signingKey(): { kid: string; signer: Es256Signer } {
    return { kid: this.current.kid, signer: this.current.signer };
  }

  /** whether the key is in the ring now (a token verified with it earlier may still be trusted) */
  holds(kid: string): boolean {
    return this.keys.has(kid);
  }

  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    const known = this.keys.get(kid);
    if (known) return known.verifyKey;
    const now = this.clock.now().getTime();
    if (now - this.lastReload < 1000) return undefined;
    this.lastReload = now;
    await this.load(await this.store.keys.listKeys(), 'tolerant');
    return this.keys.get(kid)?.verifyKey;
  }

  /** whether the key is live in the database but could not be loaded by this process */
  cannotLoad(kid: string): boolean {
    return this.unloadable.has(kid);
  }

  jwks(): { keys: JWK[] } {
    return { keys: [...this.keys.values()].map((k) => k.publicJwk) };
  }
}
