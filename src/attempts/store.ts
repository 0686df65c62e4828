// What the attempt counts need from storage (attempts/model.ts). The counts live in the database,
// so every process sees the same ones.
import type { AttemptCount, AttemptRule } from './model.js';

/** A count to reserve an attempt under: its key and the rule of its kind. */
export interface AttemptKeyRule {
  key: string;
  rule: AttemptRule;
}

export interface AttemptStore {
  /**
   * Counts one attempt under each of `keys` (distinct) whose rule allows another at `now`, in one
   * statement, each key by its own condition on its newest count: of attempts made at once, in
   * any number of processes, no more are counted under a key than its rule allows. The counts
   * of the keys counted, with this attempt; a key not counted is absent.
   */
  reserveAttempts(keys: readonly AttemptKeyRule[], now: Date): Promise<Map<string, number>>;
  /** The counts under these keys, in one statement; a key without one is absent. */
  findAttempts(keys: readonly string[]): Promise<Map<string, AttemptCount>>;
  /** Takes back one attempt counted under each key (it succeeded, or another key refused it):
   *  the count, and its time as it was before. */
  releaseAttempts(keys: readonly string[]): Promise<void>;
  clearAttempts(keys: readonly string[]): Promise<void>;
  /**
   * Deletes the counts under `keys`, and those whose key is one of `prefixes` followed by one
   * last part (text without `|`: a key's value is parts joined by `|`, model.ts accountCounts), in
   * one statement; how many. A prefix is compared as text, never as a pattern: an address may hold
   * `_` or `%`.
   */
  clearAttemptsUnder(keys: readonly string[], prefixes: readonly string[]): Promise<number>;
  /**
   * Deletes counts whose last attempt is before `before` (they no longer count); how many. The
   * counts of the `longer` kinds (their keys' `kind:` prefix) are deleted by their own cut instead.
   */
  deleteStaleAttempts(before: Date, longer?: readonly { kind: string; before: Date }[]): Promise<number>;
}
