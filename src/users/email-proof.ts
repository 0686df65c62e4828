// An address proven (docs/users.md "Proven addresses"), whichever way: a set-up link that was
// mailed to it and used (signin/service.ts), a new address of one's own confirmed through a link
// mailed to it (signin/email-change.ts), a sign-in through SSO in a domain proven by DNS
// (sso/sign-in.ts). The account becomes the address's owner; every other account with the
// address that nobody proved gives way (UserStore.proveEmail), and each of those is told to its
// own tenant's administrators by an audit event. In the caller's transaction.
import type { AuditEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { UserStore } from './store.js';

export interface EmailProofStores {
  users: Pick<UserStore, 'proveEmail'>;
  audit: Pick<AuditStore, 'insertEvent'>;
}

/** How the address was proven, as the `user.email_verified` event says it. */
export type ProvenBy = 'setup_link' | 'email_change' | 'sso';

/** Proves `user`'s address (its current one); the number of accounts that gave way.
 *  DuplicateKeyError 'user.provenEmail' when another account proved it first. */
export async function proveEmail(
  tx: EmailProofStores,
  user: { id: string; tenantId: string; email: string; emailNormalized: string },
  by: ProvenBy,
  actor: AuditEvent['actor'],
  now: Date,
): Promise<number> {
  const superseded = await tx.users.proveEmail(user.id, user.emailNormalized, now);
  await tx.audit.insertEvent({
    occurredAt: now,
    tenantId: user.tenantId,
    actor,
    action: 'user.email_verified',
    target: { kind: 'user', id: user.id },
    details: { email: user.email, by, superseded: superseded.length },
  });
  for (const other of superseded) {
    await tx.audit.insertEvent({
      occurredAt: now,
      tenantId: other.tenantId,
      actor: { kind: 'system', id: 'email-proof' },
      action: 'user.email_claimed_elsewhere',
      target: { kind: 'user', id: other.id },
      details: { email: user.email },
    });
  }
  return superseded.length;
}
