// The token-signing keys: ES256 key pairs kept in the database (private halves sealed), so every
// process on one database signs and verifies with the same keys. Which key signs, which are
// published in the JWKS and which are trusted follow from each key's stored times and the clock
// (keys/model.ts), the same in every process: no process leads. The ring reads the keys again
// whenever the database's change signal says something changed (another process's rotation or
// retirement is heard through PostgreSQL LISTEN/NOTIFY; on PGlite every write is this process's),
// and, while other processes' changes could go unheard, at most every half second: a retired key
// is refused everywhere within a second. A kid this process has not seen is also looked up in the
// database, at most once a second. At start every published key must load (a start that cannot
// use a key fails, naming it); a key met on a later reload that cannot be loaded (sealed under an
// encryption key this process lacks, or corrupt) is left out and logged once: the others keep
// working, and its tokens are refused as unknown.
import { performance } from 'node:perf_hooks';
import { importJWK, type CryptoKey, type JWK } from 'jose';
import type { Clock } from '../clock.js';
import { es256Signer, type Es256Signer } from './compact-jws.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import type { Transactional } from '../transaction.js';
import { applyKeyPlan, sealContext } from './key-plan.js';
import { isPublished, planSigner, signerAt, type KeyTimes } from './model.js';
import type { KeyStore, StoredSigningKey } from './store.js';

export { SIGNING_ALG } from './key-plan.js';

/** What the key ring reads and writes. */
export interface KeyStores {
  keys: KeyStore;
}

/** Where the key ring reports a key it leaves out (pino's logger is one). */
export interface KeyRingLog {
  error(fields: Record<string, unknown>, message: string): void;
}

/** The database's change signal as the ring reads it (store/auth-changes.ts ChangeSignal). */
export interface ChangeWatch {
  /** bumped by every change that may matter, the signing keys' included */
  readonly generation: number;
  /** false while changes of other processes could go unheard */
  readonly reliable: boolean;
}

export interface KeyRingOptions {
  /** how long a key stays published after it stopped signing (model.ts RotationSettings) */
  tokenLifetimeMs: number;
  /** without one, the keys are read again only for an unknown kid */
  changes?: ChangeWatch;
}

/** how often the keys are read while other processes' changes could go unheard (within the 1 s promised) */
const UNHEARD_RELOAD_MS = 500;
/** reads one refresh() may wait for: the one under way, and one begun after the change it heard of */
const MAX_READ_ROUNDS = 3;

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  signer: Es256Signer;
  times: KeyTimes;
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
      times: timesOf(k),
    };
  } catch (err) {
    throw keyError(k.kid, err);
  }
}

const timesOf = (k: StoredSigningKey): KeyTimes => ({
  kid: k.kid,
  createdAt: k.createdAt,
  signsFrom: k.signsFrom,
  signsUntil: k.signsUntil,
  retiredAt: k.retiredAt,
});

/** Whether a published key is sealed under another than the first encryption key; an error names the key. */
function needsReseal(box: SealedBox, k: StoredSigningKey): boolean {
  try {
    return box.needsReseal(k.privateJwkSealed, sealContext(k.kid));
  } catch (err) {
    throw keyError(k.kid, err);
  }
}

export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  /** when an unknown kid last made the ring read the keys (the service clock) */
  private lastLookup = 0;
  /** the change signal's generation and the monotonic time of the last read */
  private readGeneration = -1;
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | undefined;
  /** published keys a reload could not load, each logged once (until it loads) */
  private readonly unloadable = new Set<string>();

  private constructor(
    private readonly store: Transactional<KeyStores>,
    private readonly box: SealedBox,
    private readonly clock: Clock,
    private readonly log: KeyRingLog,
    private readonly options: KeyRingOptions,
  ) {}

  /**
   * Loads the keys, making sure one signs now (the first key of an empty database: once, across
   * processes). Every published key must load: one that cannot fails the start, naming the key.
   */
  static async open(store: Transactional<KeyStores>, box: SealedBox, clock: Clock, log: KeyRingLog, options: KeyRingOptions): Promise<KeyRing> {
    const ring = new KeyRing(store, box, clock, log, options);
    const generation = options.changes?.generation ?? -1;
    let stored = await store.keys.listKeys();
    if (!planIsEmpty(planSigner(stored, clock.now()))) {
      stored = await store.transaction(async (tx) => {
        await tx.keys.lockKeys();
        const now = clock.now();
        await applyKeyPlan(tx.keys, box, planSigner(await tx.keys.listKeys(), now), now);
        return tx.keys.listKeys();
      });
    }
    if (stored.some((k) => ring.published(k) && needsReseal(box, k))) {
      stored = await ring.resealKeys();
    }
    await ring.load(stored, 'strict');
    ring.readGeneration = generation;
    ring.readAt = performance.now();
    return ring;
  }

  private published(k: KeyTimes): boolean {
    return isPublished(k, this.clock.now(), this.options.tokenLifetimeMs);
  }

  /**
   * Seals again, under the first encryption key, every published key sealed under another one, so
   * that after a rotation the old encryption key can be dropped. Under the key lock, and checked
   * again inside it: of several processes starting together, the first re-seals and the others
   * find nothing left to do. Keys no longer published are never unsealed, so they are left as
   * they are.
   */
  private async resealKeys(): Promise<StoredSigningKey[]> {
    return await this.store.transaction(async (tx) => {
      await tx.keys.lockKeys();
      for (const k of await tx.keys.listKeys()) {
        if (!this.published(k)) continue;
        const resealed = this.box.reseal(k.privateJwkSealed, sealContext(k.kid));
        if (resealed !== undefined) await tx.keys.updateSealedKey(k.kid, resealed);
      }
      return tx.keys.listKeys();
    });
  }

  /**
   * Takes the stored keys' times, adds the published keys not loaded yet and drops the retired
   * ones. `strict` (at start): a key that cannot be loaded fails the whole load. `tolerant` (a
   * reload while serving): it is left out, logged once at error level with its id, and tried again
   * at the next reload; every other key still loads, and its tokens are refused as signed by an
   * unknown key.
   */
  private async load(stored: StoredSigningKey[], mode: 'strict' | 'tolerant'): Promise<void> {
    for (const k of stored) {
      const loaded = this.keys.get(k.kid);
      if (k.retiredAt !== null || !this.published(k)) {
        this.keys.delete(k.kid);
        this.unloadable.delete(k.kid);
        continue;
      }
      if (loaded) {
        loaded.times = timesOf(k);
        continue;
      }
      let fresh: LoadedKey;
      try {
        fresh = await loadKey(this.box, k);
      } catch (err) {
        if (mode === 'strict') throw err;
        if (!this.unloadable.has(k.kid)) {
          this.unloadable.add(k.kid);
          this.log.error(
            { kid: k.kid, reason: (err as Error).message },
            `signing key ${k.kid} cannot be used and is left out: tokens signed with it are refused, every other key keeps working. ` +
              'Give this process the encryption key it was sealed under (GATEHOUSE_ENCRYPTION_KEY) and restart it; a corrupt key must be retired (gatehouse keys retire KID)',
          );
        }
        continue;
      }
      this.unloadable.delete(k.kid);
      this.keys.set(k.kid, fresh);
    }
    const known = new Set(stored.map((k) => k.kid));
    for (const kid of this.keys.keys()) if (!known.has(kid)) this.keys.delete(kid);
    if (mode === 'strict' && !signerAt(this.loadedTimes(), this.clock.now())) throw new Error('no signing key');
  }

  private loadedTimes(): KeyTimes[] {
    return [...this.keys.values()].map((k) => k.times);
  }

  /** Reads the keys again, once for every caller waiting, tolerating a key that cannot load. */
  private async read(): Promise<void> {
    this.reading ??= (async () => {
      const generation = this.options.changes?.generation ?? -1;
      // the keys read are as fresh as the read's start, not its end: a caller that joins a read
      // begun a while ago must not take it for a newer one (refresh, while changes go unheard)
      const startedAt = performance.now();
      try {
        await this.load(await this.store.keys.listKeys(), 'tolerant');
        this.readGeneration = generation;
      } finally {
        this.readAt = startedAt;
        this.reading = undefined;
      }
    })();
    await this.reading;
  }

  /**
   * Reads the keys again when the change signal moved since the last read, or, while other
   * processes' changes could go unheard, when the last read is half a second old. A comparison
   * of two numbers otherwise: every token issued and verified calls it.
   */
  async refresh(): Promise<void> {
    const changes = this.options.changes;
    if (!changes) return;
    // A read already under way is joined; it may have begun before the change this caller heard
    // of (a key retired a moment ago), so once it is done the check is made again. Bounded: keys
    // that change faster than they can be read are served from the newest read.
    for (let round = 0; round < MAX_READ_ROUNDS; round++) {
      if (changes.reliable ? changes.generation === this.readGeneration : performance.now() - this.readAt < UNHEARD_RELOAD_MS) return;
      await this.read();
    }
  }

  /** the key that signs now, by the stored times and the clock, and a signer holding it */
  async signingKey(): Promise<{ kid: string; signer: Es256Signer }> {
    await this.refresh();
    const times = signerAt(this.loadedTimes(), this.clock.now());
    const current = times && this.keys.get(times.kid);
    if (!current) throw new Error('no signing key signs now');
    return { kid: current.kid, signer: current.signer };
  }

  /** whether the key is published now (a token verified with it earlier may still be trusted); call refresh() first */
  holds(kid: string): boolean {
    const k = this.keys.get(kid);
    return k !== undefined && this.published(k.times);
  }

  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    await this.refresh();
    if (this.holds(kid)) return this.keys.get(kid)!.verifyKey;
    const now = this.clock.now().getTime();
    if (now - this.lastLookup < 1000) return undefined;
    this.lastLookup = now;
    await this.read();
    return this.holds(kid) ? this.keys.get(kid)!.verifyKey : undefined;
  }

  /** whether the key is published in the database but could not be loaded by this process */
  cannotLoad(kid: string): boolean {
    return this.unloadable.has(kid);
  }

  /** the published keys: the one signing, the one that will (pre-published), those whose tokens may still live */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.refresh();
    return { keys: [...this.keys.values()].filter((k) => this.published(k.times)).map((k) => k.publicJwk) };
  }
}

const planIsEmpty = (plan: { updates: unknown[]; newKeySignsFrom?: Date }) => plan.updates.length === 0 && plan.newKeySignsFrom === undefined;
