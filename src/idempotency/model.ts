// Safe retries (docs/graphql.md "Safe retries: Idempotency-Key"): a client names a mutation
// request with an `Idempotency-Key` header, and the same key from the same caller with the same
// request replays the first answer instead of running it again. The pure rules: what a key may
// be, what makes two requests "the same", how long a key is kept and a running one is held.
// The protocol is IETF draft-ietf-httpapi-idempotency-key-header, as Stripe runs it.
import { createHash } from 'node:crypto';

/** how long a key is remembered after its first use (Stripe: 24 hours) */
export const KEPT_HOURS = 24;
/**
 * How long a key whose request is running is held against others. Longer than any mutation can
 * run (a statement times out after 30 s; an IdP's metadata is fetched within 10 s), so a request
 * still running is never taken over; a key held by a process that died is free again after it.
 */
export const LEASE_SECONDS = 120;
/** what a client is told to wait before it asks again about a key in use */
export const IN_USE_RETRY_AFTER_SECONDS = 1;
export const MAX_KEY_LENGTH = 255;

/**
 * What a header holds: 1-255 visible ASCII characters but the comma (a UUID, as clients send,
 * fits). HTTP joins a header sent twice with commas, so a comma would make two keys look like one.
 */
export function keyProblem(value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_KEY_LENGTH || !/^[\x21-\x2b\x2d-\x7e]+$/.test(value)) {
    return `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters, without spaces or commas (a UUID is a good key), sent once`;
  }
  return undefined;
}

/** Whose keys: each caller has its own (one client's key never answers another's request). */
export function callerKey(principal: { kind: 'client' | 'user'; id: string }): string {
  return `${principal.kind}:${principal.id}`;
}

/** What makes a request "the same" for a key: everything that decides what it does. */
export interface RequestShape {
  /** the interface's path */
  path: string;
  /** X-Tenant-Context as sent (undefined: none) */
  tenantContext: string | undefined;
  query: string;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
}

/** SHA-256 of the request's shape, variables in a canonical order (their key order does not count). */
export function fingerprint(shape: RequestShape): Buffer {
  const canonical = JSON.stringify([
    shape.path,
    shape.tenantContext ?? null,
    shape.query,
    shape.operationName ?? null,
    sortKeys(shape.variables ?? {}),
  ]);
  return createHash('sha256').update(canonical).digest();
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/**
 * A key's row. `running`: its request is under way (held until `lockedUntil`); `committed`: its
 * request's change is committed (written in the change's own transaction) and its answer not yet
 * stored; `done`: the answer is stored, sealed.
 */
export type KeyState = 'running' | 'committed' | 'done';

export interface StoredKey {
  state: KeyState;
  fingerprint: Buffer;
  /** the answer sealed (crypto/sealed-box.ts) with `answerContext`; null until done */
  answerSealed: string | null;
  lockedUntil: Date;
}

/** The sealing context of a stored answer: an answer cannot be moved to another caller's key. */
export function answerContext(caller: string, key: string): string {
  return `idempotency-answer ${caller} ${key}`;
}

/** The key of a request: the caller's, the client's value and the request's fingerprint. */
export interface KeyClaim {
  caller: string;
  key: string;
  fingerprint: Buffer;
}
