// What the token endpoint's guessing throttle (failure-throttle.ts) needs from storage: failure
// counts that every process of one database shares and increments atomically, and the record of
// which client authenticated from which address.

/** A key's failures in its current window, and when that window began (its first failure). */
export interface FailureWindow {
  failures: number;
  since: Date;
}

export interface TokenThrottleStore {
  /**
   * Counts one failure under `key` for every process at once and returns its window after it. A
   * window that began at or before `windowStart` is over: the count starts again at 1 from `at`.
   */
  addTokenFailure(key: string, at: Date, windowStart: Date): Promise<FailureWindow>;
  /**
   * Counts one attempt under `key` only if its window (as addTokenFailure) holds fewer than
   * `limit`, in one conditional statement: of attempts at once in any number of processes, at
   * most `limit` are counted. Whether it was, and the window (after it, or as it stands).
   */
  reserveTokenAttempt(key: string, limit: number, at: Date, windowStart: Date): Promise<{ counted: boolean; window: FailureWindow }>;
  /** Takes back one attempt counted under `key` (it authenticated, or ended in a fault). */
  releaseTokenAttempt(key: string): Promise<void>;
  /** The keys' live windows (begun after `windowStart`); keys without one are absent. */
  findTokenFailures(keys: string[], windowStart: Date): Promise<Map<string, FailureWindow>>;
  clearTokenFailures(key: string): Promise<void>;
  /** Records that the client authenticated from the address at `at`. */
  trustTokenClient(address: string, clientId: string, at: Date): Promise<void>;
  /** The clients that authenticated from the address after `since`, and when last. */
  trustedTokenClients(address: string, since: Date): Promise<{ clientId: string; at: Date }[]>;
  /** Deletes the counts and records whose window ended before `windowStart`; how many. */
  deleteStaleTokenThrottle(windowStart: Date): Promise<number>;
}
