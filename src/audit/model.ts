// Audit events: who did what to which object in which tenant. Written in the same transaction as
// the change, so a rolled-back change leaves no event. Never holds a secret (hints only).
export interface AuditEvent {
  occurredAt: Date;
  tenantId: string;
  actor: { kind: 'client' | 'user' | 'system'; id: string };
  action: string;
  target: { kind: string; id: string };
  details?: Record<string, unknown>;
}

/** An event done by a principal (the common case of every use case). */
export function principalEvent(
  principal: { kind: 'client' | 'user'; id: string },
  occurredAt: Date,
  tenantId: string,
  action: string,
  target: { kind: string; id: string },
  details: Record<string, unknown> = {},
): AuditEvent {
  return { occurredAt, tenantId, actor: { kind: principal.kind, id: principal.id }, action, target, details };
}
