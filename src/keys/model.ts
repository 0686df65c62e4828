// The rules of signing-key rotation (docs/tokens.md, "Signing keys"), pure: from the keys' stored
// times and the clock, every process derives the same answers, so no process leads.
//
// A key is published (in the JWKS) from its creation; it signs from signs_from until signs_until
// (its successor's signs_from, set when the successor is planned); after that it stays published,
// and trusted, for the longest life of a token it signed, then leaves the JWKS. A retired key is
// neither published nor trusted from the instant it is retired.
import { AppError, conflict } from '../errors.js';

/** The times of one key, as stored. */
export interface KeyTimes {
  kid: string;
  createdAt: Date;
  signsFrom: Date;
  signsUntil: Date | null;
  retiredAt: Date | null;
}

/**
 * pending: published, signs later (pre-publication); signing: signs now; previous: signs no more,
 * published until its last token has expired; expired: left the JWKS; retired: refused at once.
 */
export type KeyState = 'pending' | 'signing' | 'previous' | 'expired' | 'retired';

export interface RotationSettings {
  /** how long a new key is published before it signs */
  prepublishMs: number;
  /** how long a key signs before its successor takes over; 0: no automatic rotation */
  rotateMs: number;
  /** the longest a token lives after it was signed (its lifetime and the clock skew tolerated) */
  tokenLifetimeMs: number;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export function rotationSettings(opts: {
  rotateDays: number;
  prepublishHours: number;
  tokenTtlSeconds: number;
  clockSkewSeconds: number;
}): RotationSettings {
  return {
    rotateMs: opts.rotateDays * DAY_MS,
    prepublishMs: opts.prepublishHours * HOUR_MS,
    tokenLifetimeMs: (opts.tokenTtlSeconds + opts.clockSkewSeconds) * 1000,
  };
}

/** When a key stops being published (and trusted): undefined while it signs or may sign. */
export function unpublishedAt(k: KeyTimes, tokenLifetimeMs: number): Date | undefined {
  if (k.retiredAt) return k.retiredAt;
  return k.signsUntil ? new Date(k.signsUntil.getTime() + tokenLifetimeMs) : undefined;
}

export function keyState(k: KeyTimes, now: Date, tokenLifetimeMs: number): KeyState {
  if (k.retiredAt && k.retiredAt <= now) return 'retired';
  const t = now.getTime();
  if (t < k.signsFrom.getTime()) return 'pending';
  if (k.signsUntil === null || t < k.signsUntil.getTime()) return 'signing';
  return t < k.signsUntil.getTime() + tokenLifetimeMs ? 'previous' : 'expired';
}

/** Whether the key is in the JWKS now, and tokens it signed are trusted. */
export function isPublished(k: KeyTimes, now: Date, tokenLifetimeMs: number): boolean {
  const state = keyState(k, now, tokenLifetimeMs);
  return state === 'pending' || state === 'signing' || state === 'previous';
}

/**
 * The key that signs now: not retired, signs_from <= now < signs_until. The times form a chain
 * (each successor signs from its predecessor's signs_until), so there is one; should there be
 * none (times edited by hand), the newest key not retired that signs from before now.
 */
export function signerAt<K extends KeyTimes>(keys: readonly K[], now: Date): K | undefined {
  const t = now.getTime();
  const live = keys.filter((k) => k.retiredAt === null && k.signsFrom.getTime() <= t);
  const byStart = live.sort((a, b) => b.signsFrom.getTime() - a.signsFrom.getTime() || b.createdAt.getTime() - a.createdAt.getTime());
  return byStart.find((k) => k.signsUntil === null || t < k.signsUntil.getTime()) ?? byStart[0];
}

/** The planned successor of a signer: the key not retired that signs from its signs_until. */
export function successorOf<K extends KeyTimes>(keys: readonly K[], signer: KeyTimes): K | undefined {
  if (signer.signsUntil === null) return undefined;
  const until = signer.signsUntil.getTime();
  return keys.find((k) => k.retiredAt === null && k.kid !== signer.kid && k.signsFrom.getTime() === until);
}

/** The key whose successor `k` is (it signs until k's signs_from). */
function predecessorOf<K extends KeyTimes>(keys: readonly K[], k: KeyTimes): K | undefined {
  const from = k.signsFrom.getTime();
  return keys.find((p) => p.retiredAt === null && p.kid !== k.kid && p.signsUntil?.getTime() === from);
}

/**
 * When an automatic rotation's successor should sign, if one is due now: the signer has no
 * successor and will have signed for rotateMs within the pre-publication period. The successor
 * signs when the signer has signed for rotateMs, and never less than prepublishMs from now.
 */
export function dueRotation(keys: readonly KeyTimes[], now: Date, s: RotationSettings): Date | undefined {
  if (s.rotateMs <= 0) return undefined;
  const signer = signerAt(keys, now);
  if (!signer || signer.signsUntil !== null) return undefined;
  const turn = signer.signsFrom.getTime() + s.rotateMs;
  if (now.getTime() < turn - s.prepublishMs) return undefined;
  return new Date(Math.max(turn, now.getTime() + s.prepublishMs));
}

/** What a change to the keys does, in order: updates (retirements first), then at most one new key. */
export interface KeyPlan {
  updates: { kid: string; signsFrom?: Date; signsUntil?: Date | null; retiredAt?: Date }[];
  /** a new key to make, signing from this instant */
  newKeySignsFrom?: Date;
}

/**
 * A rotation: a successor signing from `signsFrom`, the signer signing until then. Refused when
 * a successor is planned already (exactly one successor at a time).
 */
export function planRotation(keys: readonly KeyTimes[], now: Date, signsFrom: Date): KeyPlan {
  const signer = signerAt(keys, now);
  if (!signer) return { updates: [], newKeySignsFrom: now };
  const next = successorOf(keys, signer);
  if (next) {
    throw conflict(
      `a rotation is under way already: key ${next.kid} is published and signs from ${next.signsFrom.toISOString()}; ` +
        `to end the current key ${signer.kid} sooner, retire it (gatehouse keys retire ${signer.kid} --yes)`,
    );
  }
  return { updates: [{ kid: signer.kid, signsUntil: signsFrom }], newKeySignsFrom: signsFrom };
}

/**
 * An emergency retirement of `kid`, at `now`. The key leaves the JWKS and its tokens are refused
 * at once. If it was signing, the planned successor (already published) signs at once, else a new
 * key does. If it was the planned successor, the signer goes on signing with no successor (the
 * next automatic rotation, or `keys rotate`, plans another).
 */
export function planRetirement(keys: readonly KeyTimes[], kid: string, now: Date, tokenLifetimeMs: number): KeyPlan {
  const k = keys.find((x) => x.kid === kid);
  if (!k) throw new AppError('NOT_FOUND', `no signing key has the id ${kid}: gatehouse keys list shows them`);
  if (k.retiredAt) throw conflict(`key ${kid} was retired already, at ${k.retiredAt.toISOString()}`);
  const state = keyState(k, now, tokenLifetimeMs);
  const retire = { kid, retiredAt: now };
  if (state === 'signing') {
    const next = successorOf(keys, k);
    if (next)
      return {
        updates: [
          { ...retire, signsUntil: now },
          { kid: next.kid, signsFrom: now },
        ],
      };
    return { updates: [{ ...retire, signsUntil: now }], newKeySignsFrom: now };
  }
  if (state === 'pending') {
    const before = predecessorOf(keys, k);
    return { updates: before ? [retire, { kid: before.kid, signsUntil: null }] : [retire] };
  }
  return { updates: [retire] };
}

/**
 * What makes sure a key signs now: nothing when one does; else the open-ended key not retired
 * (a pending one) signs at once, or a new key is made.
 */
export function planSigner(keys: readonly KeyTimes[], now: Date): KeyPlan {
  const t = now.getTime();
  const signing = keys.find((k) => k.retiredAt === null && k.signsFrom.getTime() <= t && (k.signsUntil === null || t < k.signsUntil.getTime()));
  if (signing) return { updates: [] };
  const open = keys.find((k) => k.retiredAt === null && k.signsUntil === null);
  if (open) return { updates: [{ kid: open.kid, signsFrom: now }] };
  return { updates: [], newKeySignsFrom: now };
}
