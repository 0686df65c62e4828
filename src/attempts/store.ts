// What the attempt counts need from storage (attempts/model.ts). The counts live in the database,
// so every process sees the same ones.
import type { AttemptCount, AttemptRule } from './model.js';

export interface AttemptStore {
  /**
   * Counts one attempt under `key` if `rule` allows another at `now`, in one conditional
   * statement: of attempts made at once, in any number of processes, no more are counted than
   * the rule allows. The count with it, or undefined when it was not counted.
   */
  reserveAttempt(key: string, rule: AttemptRule, now: Date): Promise<number | undefined>;
  findAttempts(key: string): Promise<AttemptCount | undefined>;
  /** Takes back one attempt counted under `key` (it succeeded): the count, and its time as it was before. */
  releaseAttempt(key: string): Promise<void>;
  clearAttempts(keys: string[]): Promise<void>;
  /** Deletes counts whose last attempt is before `before` (they no longer count); how many. */
  deleteStaleAttempts(before: Date): Promise<number>;
}
