// Reserves an attempt under several counts at once (attempts/model.ts): all of them, or none.
// One statement counts the attempt under every key whose rule allows it (store.ts,
// reserveAttempts); when one refuses, the others are given back in one more, and the answer is
// how long to wait for the first that refused (the keys' order is the caller's).
import type { Clock } from '../clock.js';
import { ATTEMPT_RULES, type AttemptKind, attemptKey, waitSeconds } from './model.js';
import type { AttemptStore } from './store.js';

export interface AttemptStores {
  attempts: AttemptStore;
}

/** The counts one attempt is made under: kind and value (an address prefix, an account, ...). */
export type AttemptKeys = readonly (readonly [AttemptKind, string])[];

export type Reservation =
  /** `counts`: each count with this attempt, by kind */
  { kind: 'reserved'; keys: string[]; counts: Partial<Record<AttemptKind, number>> } | { kind: 'wait'; seconds: number; refusedBy: AttemptKind };

export class AttemptGate {
  constructor(
    private readonly store: AttemptStores,
    private readonly clock: Clock,
  ) {}

  async reserve(keys: AttemptKeys): Promise<Reservation> {
    const now = this.clock.now();
    const wanted = keys.map(([kind, value]) => ({ kind, key: attemptKey(kind, value), rule: ATTEMPT_RULES[kind] }));
    const counted = await this.store.attempts.reserveAttempts(wanted, now);
    const refused = wanted.find((w) => !counted.has(w.key));
    if (!refused) {
      const counts: Partial<Record<AttemptKind, number>> = {};
      for (const w of wanted) counts[w.kind] = counted.get(w.key);
      return { kind: 'reserved', keys: wanted.map((w) => w.key), counts };
    }
    // all or none: what the other keys counted is given back
    await this.store.attempts.releaseAttempts(wanted.filter((w) => counted.has(w.key)).map((w) => w.key));
    // refused: the count is past its allowance; at least a second (it may have ended meanwhile)
    const seconds = Math.max(1, waitSeconds(refused.rule, (await this.store.attempts.findAttempts([refused.key])).get(refused.key), now));
    return { kind: 'wait', seconds, refusedBy: refused.kind };
  }

  /** The attempt succeeded: it no longer counts. */
  async release(reservation: { keys: string[] }): Promise<void> {
    await this.store.attempts.releaseAttempts(reservation.keys);
  }

  async clear(keys: AttemptKeys): Promise<void> {
    await this.store.attempts.clearAttempts(keys.map(([kind, value]) => attemptKey(kind, value)));
  }
}
