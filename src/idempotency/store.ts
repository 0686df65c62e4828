// What safe retries need from storage (implemented by store/idempotency.ts).
import type { KeyClaim, StoredKey } from './model.js';

export interface IdempotencyStore {
  /**
   * Takes the key for a request: a new row `running` until `lockedUntil`, or the row of a key
   * expired (past `expiresAt`) or abandoned (`running` past its lease) taken over. One statement,
   * so two requests racing for a key cannot both take it. Undefined: taken; else the row found.
   */
  claim(claim: KeyClaim, times: { now: Date; lockedUntil: Date; expiresAt: Date }): Promise<StoredKey | undefined>;
  /** `running` -> `committed`, in the transaction of the request's change (store/index.ts). */
  markCommitted(caller: string, key: string): Promise<void>;
  /** The answer stored, sealed: `done`. */
  complete(caller: string, key: string, answerSealed: string): Promise<void>;
  /** Frees a key whose request changed nothing (still `running`) so that a retry runs it. */
  release(caller: string, key: string): Promise<void>;
  /** Forgets keys past their time; how many. */
  deleteExpiredKeys(now: Date): Promise<number>;
}
