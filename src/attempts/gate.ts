// Reserves an attempt under several counts at once (attempts/model.ts): all of them, or none.
// Each count is reserved by one conditional statement; when one refuses, those already reserved
// are given back, and the answer is how long to wait for the one that refused.
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
    const reserved: string[] = [];
    const counts: Partial<Record<AttemptKind, number>> = {};
    for (const [kind, value] of keys) {
      const key = attemptKey(kind, value);
      const rule = ATTEMPT_RULES[kind];
      const count = await this.store.attempts.reserveAttempt(key, rule, now);
      if (count !== undefined) {
        reserved.push(key);
        counts[kind] = count;
        continue;
      }
      for (const k of reserved) await this.store.attempts.releaseAttempt(k);
      // refused: the count is past its allowance; at least a second (it may have ended meanwhile)
      const seconds = Math.max(1, waitSeconds(rule, await this.store.attempts.findAttempts(key), now));
      return { kind: 'wait', seconds, refusedBy: kind };
    }
    return { kind: 'reserved', keys: reserved, counts };
  }

  /** The attempt succeeded: it no longer counts. */
  async release(reservation: { keys: string[] }): Promise<void> {
    for (const k of reservation.keys) await this.store.attempts.releaseAttempt(k);
  }

  async clear(keys: AttemptKeys): Promise<void> {
    await this.store.attempts.clearAttempts(keys.map(([kind, value]) => attemptKey(kind, value)));
  }
}
