// Errors that a caller may see. A use case throws an AppError with a stable code and a public
// message; each transport maps it once (GraphQL: extensions.code; HTTP: status). A browser flow
// returns a Refusal instead (below). Any other Error is a bug: logged with the request id and
// answered as INTERNAL with no detail.

export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'RESTRICTED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** extra public fields, e.g. retryAfter for RATE_LIMITED */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** FORBIDDEN: the caller's roles do not allow it. `decidedIn`: the tenant whose roles were judged,
 *  one the caller may see (the refusal's audit event goes to its trail); not part of the answer. */
export class ForbiddenError extends AppError {
  constructor(
    message: string,
    readonly decidedIn?: string,
  ) {
    super('FORBIDDEN', message);
  }
}

export const forbidden = (message = 'Not permitted', decidedIn?: string) => new ForbiddenError(message, decidedIn);
export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);
export const badInput = (message: string, details: Record<string, unknown> = {}) => new AppError('BAD_USER_INPUT', message, details);
export const conflict = (message: string) => new AppError('CONFLICT', message);
export const rateLimited = (message: string, retryAfterSeconds: number) => new AppError('RATE_LIMITED', message, { retryAfter: retryAfterSeconds });

/** HTTP status for a request that fails as a whole with this code (before or instead of execution). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  BAD_USER_INPUT: 400,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  RESTRICTED: 403,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/**
 * A browser flow's refusal (a sign-in step, single sign-on, a device login): returned as a value
 * by its use case, beside the flow's other outcomes, never thrown. It holds the words for the
 * person (what went wrong and what to do), the status of the page that shows them, and, for the
 * log only, why. The pages show it as it is (http/pages/page-kit.ts, `refusalPage`).
 */
export interface Refusal {
  kind: 'refused';
  status: 400 | 403 | 404 | 413 | 429;
  message: string;
  /** seconds until another attempt may go ahead (with 429) */
  retryAfter?: number;
  /** what was wrong, for the log only: never shown (it may describe an identity provider's XML) */
  reason?: string;
}

export function refusal(status: Refusal['status'], message: string, more: Pick<Refusal, 'retryAfter' | 'reason'> = {}): Refusal {
  return { kind: 'refused', status, message, ...more };
}

/** Seconds a caller is told to wait (Retry-After) when the database cannot be reached; /readyz says the same. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * The database cannot be reached just now: a connection refused, lost in the middle of a
 * statement, or not made within the pool's connect timeout. The persister raises it (whatever pg
 * said: store/connection-error.ts) so that each edge answers 503 with Retry-After in its own shape
 * (GraphQL and JSON: INTERNAL with retryAfter, the contract having eight codes; OAuth
 * temporarily_unavailable; the pages: their UNAVAILABLE words) instead of a 500. A write that failed this
 * way was not acknowledged; it may or may not have been committed (the connection died before the
 * answer), so a caller retries a create by reading first or by its own idempotence.
 */
export class DatabaseUnavailableError extends Error {
  readonly retryAfter = UNAVAILABLE_RETRY_AFTER_SECONDS;
  constructor(options?: { cause?: unknown }) {
    super(`the database is unavailable; retry in ${UNAVAILABLE_RETRY_AFTER_SECONDS} seconds`, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * A write met a row that already holds the same unique key. The persister raises it (whatever
 * the engine's error looked like) and names the rule by its domain name, never by an index; each
 * use case turns it into the CONFLICT (or BAD_USER_INPUT) its callers should read.
 */
export class DuplicateKeyError extends Error {
  constructor(
    readonly key: UniqueKey,
    options?: { cause?: unknown },
  ) {
    super(`duplicate ${key}`, options);
    this.name = 'DuplicateKeyError';
  }
}

/** The unique rules a use case may meet: `<object>.<what is unique>`. */
export type UniqueKey =
  | 'client.name'
  | 'client.clientId'
  | 'label.name'
  | 'service.name'
  | 'subscription.name'
  | 'user.email'
  | 'user.provenEmail'
  | 'device.userCode'
  | 'sso.domain'
  | 'sso.domainProven';
