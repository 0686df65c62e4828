// Safe retries of mutations (docs/graphql.md "Safe retries: Idempotency-Key"): before a keyed
// request runs, `begin` takes its key or says what the key already holds; after, `finish` stores
// the answer, sealed, or frees the key when nothing was changed and a retry should run again.
// The transport (http/graphql-route.ts) runs the request inside `runKeyed` (context.ts), so that
// the change's own transaction marks the key committed.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import { AppError } from '../errors.js';
import type { KeyedRequest } from './context.js';
import { answerContext, IN_USE_RETRY_AFTER_SECONDS, KEPT_HOURS, LEASE_SECONDS, MAX_STORED_ANSWER, type KeyClaim } from './model.js';
import type { IdempotencyStore } from './store.js';

export interface IdempotencyStores {
  idempotency: IdempotencyStore;
}

/** What a key says before its request runs. */
export type Begun =
  /** the key is this request's: run it (inside runKeyed) and `finish` */
  | { kind: 'run'; request: KeyedRequest }
  /** the same request ran before: its answer, as it was */
  | { kind: 'replay'; answer: unknown }
  /** the key cannot serve this request: the refusal and its HTTP status */
  | { kind: 'refused'; status: 409 | 422; error: AppError };

export class IdempotencyService {
  constructor(
    private readonly stores: IdempotencyStores,
    private readonly box: SealedBox,
    private readonly clock: Clock,
  ) {}

  async begin(request: Omit<KeyClaim, 'claimId'>): Promise<Begun> {
    const now = this.clock.now();
    const claim: KeyClaim = { ...request, claimId: randomUUID() };
    const found = await this.stores.idempotency.claim(claim, {
      now,
      lockedUntil: new Date(now.getTime() + LEASE_SECONDS * 1000),
      expiresAt: new Date(now.getTime() + KEPT_HOURS * 3_600_000),
    });
    if (!found) return { kind: 'run', request: { caller: claim.caller, key: claim.key, claimId: claim.claimId, committed: false } };
    if (!found.fingerprint.equals(claim.fingerprint)) {
      return {
        kind: 'refused',
        status: 422,
        error: new AppError(
          'BAD_USER_INPUT',
          `This Idempotency-Key was sent with a different request in the last ${KEPT_HOURS} hours (another document, variables, interface or X-Tenant-Context, or your roles or the tenant's support access have changed since); use a new key for a new request`,
          { idempotencyKey: 'reused' },
        ),
      };
    }
    // committed and its answer not stored yet: still running too, until its lease is over (the
    // answer is stored right after the commit; a process that stopped in between never will)
    if (found.state === 'running' || (found.state === 'committed' && found.lockedUntil > now)) {
      return {
        kind: 'refused',
        status: 409,
        error: new AppError('CONFLICT', 'A request with this Idempotency-Key is still running; retry in a moment to get its answer', {
          idempotencyKey: 'in_use',
          retryAfter: IN_USE_RETRY_AFTER_SECONDS,
        }),
      };
    }
    const answer = found.state === 'done' && found.answerSealed !== null ? this.open(claim, found.answerSealed) : undefined;
    if (answer === undefined) {
      // committed, and the answer never stored (the process stopped in between: its lease is
      // over), or sealed under a key this service no longer has: the change is made, so it is
      // not run again
      return {
        kind: 'refused',
        status: 409,
        error: new AppError(
          'CONFLICT',
          'The request with this Idempotency-Key made its change, but its answer was lost; read the current state instead of retrying',
          { idempotencyKey: 'answer_lost' },
        ),
      };
    }
    return { kind: 'replay', answer };
  }

  /**
   * After the request ran: its answer stored for replays, or, when none of its transactions
   * committed and the answer says to try again (rate-limited, the database unreachable, a fault),
   * the key freed so that a retry runs. A key whose change committed is never freed.
   */
  async finish(request: KeyedRequest, answer: unknown, retryable: boolean): Promise<void> {
    const text = JSON.stringify(answer);
    // an answer too large to keep is not kept: a retry then hears that it was lost (or runs
    // again, if nothing was committed)
    if (!request.committed && (retryable || text.length > MAX_STORED_ANSWER)) {
      await this.stores.idempotency.release(request);
      return;
    }
    if (text.length > MAX_STORED_ANSWER) return;
    await this.stores.idempotency.complete(request, this.box.seal(text, answerContext(request.caller, request.key)));
  }

  /** A request that ended without an answer to store (it threw): its key freed unless it committed. */
  async abandon(request: KeyedRequest): Promise<void> {
    if (!request.committed) await this.stores.idempotency.release(request);
  }

  /** The request's lease extended while it runs (every LEASE_SECONDS / 4, by the transport). */
  async extend(request: KeyedRequest): Promise<void> {
    await this.stores.idempotency.extend(request, new Date(this.clock.now().getTime() + LEASE_SECONDS * 1000));
  }

  private open(claim: KeyClaim, sealed: string): unknown {
    try {
      return JSON.parse(this.box.open(sealed, answerContext(claim.caller, claim.key)));
    } catch {
      return undefined;
    }
  }
}
