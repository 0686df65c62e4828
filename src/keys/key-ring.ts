// The token-signing keys: ES256 key pairs kept in the database (private halves sealed), so every
// process on one database signs and verifies with the same keys. One key signs; every key not
// retired verifies and is published in the JWKS. A kid this process has not seen is looked up in
// the database (another process may have added a key), at most once a second.
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

/** The signer of a stored key, or an error that names the key (a start that fails says which). */
function loadSigner(kid: string, privateJwk: JWK, publicJwk: JWK): Es256Signer {
  try {
    return es256Signer(privateJwk, publicJwk);
  } catch (err) {
    throw new Error(`signing key ${kid} cannot be used: ${(err as Error).message}`, { cause: err });
  }
}

export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  private current!: LoadedKey;
  private lastReload = 0;

  private constructor(
    private readonly store: Transactional<KeyStores>,
    private readonly box: SealedBox,
    private readonly clock: Clock,
  ) {}

  /** Loads the keys, creating the first one on an empty database (once, across processes). */
  static async open(store: Transactional<KeyStores>, box: SealedBox, clock: Clock): Promise<KeyRing> {
    const ring = new KeyRing(store, box, clock);
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
    if (stored.some((k) => k.retiredAt === null && box.needsReseal(k.privateJwkSealed, sealContext(k.kid)))) {
      stored = await ring.resealKeys();
    }
    await ring.load(stored);
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

  private async load(stored: StoredSigningKey[]): Promise<void> {
    for (const k of stored) {
      if (k.retiredAt !== null) {
        this.keys.delete(k.kid);
        continue;
      }
      if (this.keys.has(k.kid)) continue;
      const privateJwk = JSON.parse(this.box.open(k.privateJwkSealed, sealContext(k.kid))) as JWK;
      this.keys.set(k.kid, {
        kid: k.kid,
        publicJwk: k.publicJwk as JWK,
        verifyKey: (await importJWK(k.publicJwk as JWK, k.alg)) as CryptoKey,
        signer: loadSigner(k.kid, privateJwk, k.publicJwk as JWK),
        createdAt: k.createdAt,
      });
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
    await this.load(await this.store.keys.listKeys());
    return this.keys.get(kid)?.verifyKey;
  }

  jwks(): { keys: JWK[] } {
    return { keys: [...this.keys.values()].map((k) => k.publicJwk) };
  }
}
