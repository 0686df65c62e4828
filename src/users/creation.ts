// How a user comes to be, for each of the three ways one does: an Administrator or an operator
// (users/service.ts), first start (bootstrap/bootstrap.ts), a first sign-in through an SSO
// connection (sso/sign-in.ts). Written in the caller's transaction: the row, its role
// assignments, and the `user.created` audit event. An address is unique within a tenant, and
// among the accounts that proved it (docs/users.md): either is CONFLICT for all of them.
import { randomUUID } from 'node:crypto';
import type { AuditEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import { conflict, DuplicateKeyError } from '../errors.js';
import type { Email } from './model.js';
import type { UserStore } from './store.js';

export interface UserCreationStores {
  users: Pick<UserStore, 'insertUser' | 'insertRoleAssignments' | 'findProvenUser'>;
  audit: Pick<AuditStore, 'insertEvent'>;
}

export interface UserCreation {
  tenantId: string;
  /** checked by the caller (checkEmail names its own field) */
  email: Email;
  displayName: string;
  /** null until the person sets one (through the set-up link), or for good (SSO) */
  passwordHash: string | null;
  /** the set-up link's digest and end, if the person sets their password through one, and
   *  whether it is mailed to the address (then using it proves the address) */
  setup: { tokenHash: Buffer; expiresAt: Date; mailed?: boolean } | null;
  /** role ids given in the home tenant */
  roleIds: readonly string[];
  createdAt: Date;
  /** who creates it: recorded as `created_by` when a principal, and as the event's actor */
  actor: AuditEvent['actor'];
  /** added to the `user.created` event's details (email and roles); null: no event, the
   *  caller's own records the creation (first start: `service.bootstrapped`) */
  event: Record<string, unknown> | null;
}

/** the refusal of an address a user of the same tenant has */
export const EMAIL_TAKEN = 'A user with this e-mail address exists';
/** the refusal of an address an account proved (which tenant is not said) */
export const EMAIL_PROVEN = 'A user with this e-mail address exists: its owner proved the address, so it cannot be given to another account';

/** Inserts the user with its roles and audit event; returns its id. An address nobody proved
 *  does not block a user of another tenant (docs/users.md, the squatting rule). */
export async function addUser(tx: UserCreationStores, c: UserCreation): Promise<string> {
  const id = randomUUID();
  if (await tx.users.findProvenUser(c.email.key)) throw conflict(EMAIL_PROVEN);
  try {
    await tx.users.insertUser({
      id,
      tenantId: c.tenantId,
      email: c.email.email,
      emailNormalized: c.email.key,
      displayName: c.displayName,
      passwordHash: c.passwordHash,
      setupTokenHash: c.setup?.tokenHash ?? null,
      setupExpiresAt: c.setup?.expiresAt ?? null,
      setupLinkMailed: c.setup?.mailed ?? false,
      createdAt: c.createdAt,
      createdBy: c.actor.kind === 'client' || c.actor.kind === 'user' ? c.actor.id : null,
    });
  } catch (err) {
    if (err instanceof DuplicateKeyError && err.key === 'user.email') throw conflict(EMAIL_TAKEN);
    throw err;
  }
  await tx.users.insertRoleAssignments(
    c.roleIds.map((roleId) => ({ id: randomUUID(), tenantId: c.tenantId, roleId, expiresAt: null, principalId: id, createdAt: c.createdAt })),
  );
  if (c.event !== null) {
    await tx.audit.insertEvent({
      occurredAt: c.createdAt,
      tenantId: c.tenantId,
      actor: c.actor,
      action: 'user.created',
      target: { kind: 'user', id },
      details: { email: c.email.email, roles: [...c.roleIds], ...c.event },
    });
  }
  return id;
}
