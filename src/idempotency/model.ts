// Safe retries (docs/graphql.md "Safe retries: Idempotency-Key"): a client names a mutation
// request with an `Idempotency-Key` header, and the same key from the same caller with the same
// request replays the first answer instead of running it again. The pure rules: what a key may
// be, what makes two requests "the same", how long a key is kept and a running one is held.
// The protocol is IETF draft-ietf-httpapi-idempotency-key-header, as Stripe runs it.
import { createHash } from 'node:crypto';
import type { Principal, TenantScope } from '../access/principal.js';
import { ROLE_IDS } from '../access/roles.js';

/** how long a key is remembered after its first use (Stripe: 24 hours) */
export const KEPT_HOURS = 24;
/**
 * How long a key whose request is running is held against others. The request extends it while it
 * runs (every LEASE_SECONDS / 4), so only a key held by a process that died is taken over once it
 * ends; and a request that lost its key all the same (a process paused for minutes) cannot commit
 * its change: the change's transaction checks that its claim still holds the key.
 */
export const LEASE_SECONDS = 120;
/** How long a key whose change has committed is still "running" while its answer is stored: a
 *  retry meanwhile is told to wait, not that the answer was lost. */
export const COMMITTED_GRACE_SECONDS = 30;
/** what a client is told to wait before it asks again about a key in use */
export const IN_USE_RETRY_AFTER_SECONDS = 1;
export const MAX_KEY_LENGTH = 255;
/** The largest answer kept for replays, in characters of its JSON: mutations answer a few KB. */
export const MAX_STORED_ANSWER = 256 * 1024;

/**
 * The key a header holds: 1-255 visible ASCII characters but the comma (a UUID, as clients send,
 * fits), bare or as the IETF draft's quoted string (`"…"`, the same key). HTTP joins a header sent
 * twice with commas, so a comma would make two keys look like one. Undefined: not a key.
 */
export function keyOf(header: string): string | undefined {
  const quoted = /^"([^"\\]*)"$/.exec(header);
  const value = quoted ? quoted[1]! : header;
  return keyProblem(value) === undefined ? value : undefined;
}

export const KEY_PROBLEM = `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters, without spaces or commas (a UUID is a good key; quoted or not), sent once`;

function keyProblem(value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_KEY_LENGTH || !/^[\x21-\x2b\x2d-\x7e]+$/.test(value)) {
    return KEY_PROBLEM;
  }
  return undefined;
}

/** Whose keys: each caller has its own (one client's key never answers another's request). */
export function callerKey(principal: { kind: 'client' | 'user'; id: string }): string {
  return `${principal.kind}:${principal.id}`;
}

/** What makes a request "the same" for a key: everything that decides what it does, and what the
 *  caller may see (a replay is refused once the caller's roles or the tenant's support access
 *  have changed: it would show what the caller may no longer see). */
export interface RequestShape {
  /** the interface's path */
  path: string;
  /** X-Tenant-Context as sent (undefined: none) */
  tenantContext: string | undefined;
  query: string;
  operationName: string | undefined;
  variables: Record<string, unknown> | undefined;
  /** the caller's live role assignments and the acting tenant's support access, as a text */
  access: string;
}

/** What the caller may see in the tenant it acts in, as a text: its live role assignments, and the
 *  tenant's support access when the caller holds Support. */
export function accessOf(principal: Pick<Principal, 'assignments'>, tenant: TenantScope, now: Date): string {
  const live = principal.assignments.filter((a) => a.expiresAt === null || a.expiresAt > now);
  const roles = live.map((a) => `${a.tenantId}:${a.roleId}`).sort();
  const support = live.some((a) => a.roleId === ROLE_IDS.Support)
    ? `support:${tenant.supportEnabled}:${tenant.supportExpiresAt?.toISOString() ?? ''}`
    : '';
  return `${tenant.id}|${roles.join(',')}|${support}`;
}

/** SHA-256 of the request's shape, variables in a canonical order (their key order does not count). */
export function fingerprint(shape: RequestShape): Buffer {
  const canonical = JSON.stringify([
    shape.path,
    shape.tenantContext ?? null,
    shape.query,
    shape.operationName ?? null,
    sortKeys(shape.variables ?? {}),
    shape.access,
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

/** The key of a request: the caller's, the client's value, the request's fingerprint, and this
 *  claim's own id (a new one for every request that takes the key). */
export interface KeyClaim {
  caller: string;
  key: string;
  fingerprint: Buffer;
  claimId: string;
}
