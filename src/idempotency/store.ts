// What safe retries need from storage (implemented by store/idempotency.ts). A request changes
// only the row of its own claim (claimId): one that lost its key to another claim changes nothing.
import type { KeyClaim, StoredKey } from './model.js';

export interface IdempotencyStore {
  /**
   * Takes the key for a request: a new row `running` until `lockedUntil` under this claim, or
   * takes over the row of a key past its time (`expiresAt`), or one `running` past its lease for
   * the same request (its process died before any change committed). One statement, so two
   * requests racing for a key cannot both take it. Undefined: taken; else the row found.
   */
  claim(claim: KeyClaim, times: { now: Date; lockedUntil: Date; expiresAt: Date }): Promise<StoredKey | undefined>;
  /** The claim's lease extended, while its request runs; whether the claim still holds the key. */
  extend(claim: Pick<KeyClaim, 'caller' | 'key' | 'claimId'>, lockedUntil: Date): Promise<boolean>;
  /**
   * `running` -> `committed`, in the transaction of the request's change (store/index.ts), its
   * lease at least until `graceUntil`; whether the claim still held the key (if not, the caller
   * rolls its change back).
   */
  markCommitted(claim: Pick<KeyClaim, 'caller' | 'key' | 'claimId'>, graceUntil: Date): Promise<boolean>;
  /** The answer stored, sealed: `done` (if the claim still holds the key). */
  complete(claim: Pick<KeyClaim, 'caller' | 'key' | 'claimId'>, answerSealed: string): Promise<void>;
  /** Frees a key whose request changed nothing (still `running` under this claim) so that a retry runs it. */
  release(claim: Pick<KeyClaim, 'caller' | 'key' | 'claimId'>): Promise<void>;
  /** Forgets keys past their time; how many. */
  deleteExpiredKeys(now: Date): Promise<number>;
}
