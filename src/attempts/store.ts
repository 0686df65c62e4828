// What the attempt counts need from storage (attempts/model.ts). The counts live in the database,
// so every process sees the same ones.
import type { AttemptCount, AttemptRule } from './model.js';

export interface AttemptStore {
  /**
   * Counts one attempt under `key` if `rule` allows another at `now`, in one conditional
   * statement: of attempts made at once, in any number of processes, no more are counted than
   * the rule allows. Whether it was counted.
   */
  reserveAttempt(key: string, rule: AttemptRule, now: Date): Promise<boolean>;
  findAttempts(key: string): Promise<AttemptCount | undefined>;
  /** Takes back one attempt counted under `key` (it succeeded). */
  releaseAttempt(key: string): Promise<void>;
  clearAttempts(keys: string[]): Promise<void>;
  /** Deletes counts whose last attempt is before `before` (they no longer count); how many. */
  deleteStaleAttempts(before: Date): Promise<number>;
}
