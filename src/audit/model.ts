// Audit events: who did what to which object in which tenant, with what outcome, in which request
// and from which address. A change's event is written in the same transaction as the change, so a
// rolled-back change leaves no event; a failure or a refusal (a failed sign-in, a refused token
// request) is written on its own (docs/operations.md "Audit trail"). Never holds a secret (hints only).
import { badInput } from '../errors.js';

/** What the transport knows of a request, handed to the use cases with the principal. */
export interface RequestInfo {
  /** the request id (Fastify's, also in the logs and on error pages) */
  id: string;
  /** the client's address as the transport saw it (behind a proxy: per `trustProxy`) */
  address: string;
}

export type AuditOutcome = 'success' | 'failure' | 'refused';
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ['success', 'failure', 'refused'];

export interface AuditEvent {
  occurredAt: Date;
  /** the acting tenant: the tenant the event belongs to (who may read it) */
  tenantId: string;
  /** operator: someone at the machine, through the `gatehouse` command line; anonymous: whoever
   *  sent a request that did not authenticate (a refused client secret) */
  actor: { kind: 'client' | 'user' | 'system' | 'operator' | 'anonymous'; id: string; tenantId?: string | null };
  action: string;
  target: { kind: string; id: string };
  details?: Record<string, unknown>;
  /** default success */
  outcome?: AuditOutcome;
  request?: RequestInfo | null;
}

/** An event done by a principal (the common case of every use case). */
export function principalEvent(
  principal: { kind: 'client' | 'user'; id: string; tenantId?: string; request?: RequestInfo },
  occurredAt: Date,
  tenantId: string,
  action: string,
  target: { kind: string; id: string },
  details: Record<string, unknown> = {},
  outcome: AuditOutcome = 'success',
): AuditEvent {
  return {
    occurredAt,
    tenantId,
    actor: { kind: principal.kind, id: principal.id, tenantId: principal.tenantId ?? null },
    action,
    target,
    details,
    outcome,
    request: principal.request ?? null,
  };
}

/** Someone at the machine, through the `gatehouse` command line: the OS user's name. */
export interface OperatorActor {
  kind: 'operator';
  id: string;
}

/** An event done at the command line (`gatehouse sso disable`, …): the operator is the OS user. */
export function operatorEvent(
  operator: OperatorActor,
  occurredAt: Date,
  tenantId: string,
  action: string,
  target: { kind: string; id: string },
  details: Record<string, unknown> = {},
): AuditEvent {
  return { occurredAt, tenantId, actor: { kind: 'operator', id: operator.id, tenantId: null }, action, target, details };
}

/** One event as read back. */
export interface StoredAuditEvent extends Required<Omit<AuditEvent, 'request' | 'details'>> {
  id: string;
  details: Record<string, unknown>;
  requestId: string | null;
  address: string | null;
}

/** Filters of a read of the trail; every one combines with every other (AND). */
export interface AuditFilter {
  from?: Date | null;
  to?: Date | null;
  /** the actor's id (a client's or user's UUID, or an operator's name) */
  actorId?: string | null;
  action?: string | null;
  outcome?: AuditOutcome | null;
}

/** A position in the trail, newest first: the last event of a page. */
export interface AuditPosition {
  occurredAt: Date;
  id: string;
}

const CURSOR_PREFIX = 'a1:';

/** The cursor of a position: opaque to callers, checked when it comes back. */
export function auditCursor(p: AuditPosition): string {
  return CURSOR_PREFIX + Buffer.from(JSON.stringify([p.occurredAt.toISOString(), p.id])).toString('base64url');
}

export function parseAuditCursor(cursor: string, field: string): AuditPosition {
  const refuse = () => badInput(`${field} is not a cursor of this list: pass the cursor of an earlier page of auditEvents, unchanged`, { field });
  if (!cursor.startsWith(CURSOR_PREFIX) || cursor.length > 200) throw refuse();
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8')) as unknown[];
    if (typeof at !== 'string' || typeof id !== 'string' || !/^[0-9a-f-]{36}$/.test(id)) throw refuse();
    const occurredAt = new Date(at);
    if (Number.isNaN(occurredAt.getTime())) throw refuse();
    return { occurredAt, id };
  } catch {
    throw refuse();
  }
}

export function checkOutcome(value: string | null | undefined, field: string): AuditOutcome | null {
  if (value === null || value === undefined) return null;
  if ((AUDIT_OUTCOMES as readonly string[]).includes(value)) return value as AuditOutcome;
  throw badInput(`${field} must be one of ${AUDIT_OUTCOMES.join(', ')}`, { field });
}
