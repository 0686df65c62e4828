// User use cases (docs/users.md). Each checks authorization first, then the rules, then writes all
// it changes in one transaction with its audit event. Operators at the CLI act as the system
// (actor: the operator, the OS user) and skip the role checks: they already hold the database.
import { tenantNameOf } from '../tenants/display-name.js';
import { randomUUID } from 'node:crypto';
import { checkGrantableRoles, checkRoleHere, mayGrant } from '../access/grants.js';
import { assertCan, can } from '../access/policy.js';
import { ancestorsOrSelf, type Caller, type Principal, type TenantScope } from '../access/principal.js';
import { isRoleId, ROLE_IDS, roleLabel } from '../access/roles.js';
import type { AuditEvent, OperatorActor } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import { accountCounts, attemptKey } from '../attempts/model.js';
import type { AttemptStore } from '../attempts/store.js';
import type { Clock } from '../clock.js';
import { digestOpaqueToken, newOpaqueToken } from '../crypto/opaque-token.js';
import { badInput, forbidden, notFound } from '../errors.js';
import type { TenantStore } from '../tenants/store.js';
import type { MailSender } from '../mail/model.js';
import type { MailOutboxStore } from '../mail/store.js';
import { TENANT_ID_PATTERN, UUID_PATTERN } from '../ids.js';
import { characterCount } from '../text.js';
import { checkPage } from '../paging.js';
import { parseTimeInput } from '../time.js';
import type { Transactional } from '../transaction.js';
import { addUser } from './creation.js';
import { checkDisplayName, checkEmail, emailKey, type User } from './model.js';
import { setupUrl } from './setup-link.js';
import type { LastSignInFilter, UserStatusFilter, UserStore } from './store.js';

const USER_STATUSES: readonly string[] = ['active', 'pending', 'disabled'] satisfies UserStatusFilter[];

export interface UserStores {
  users: UserStore;
  /** the account's sign-in failure counts, cleared by a reset or an unlock of the sign-in */
  attempts: Pick<AttemptStore, 'findAttempts' | 'clearAttemptsUnder'>;
  tenants: Pick<TenantStore, 'findScopes' | 'findTenant'>;
  audit: AuditStore;
  mail: Pick<MailOutboxStore, 'insertMail'>;
}

export interface UserSettings {
  baseUrl: string;
  /** how long a set-up link works */
  setupTtlSeconds: number;
}

export interface UserWithSetupLink {
  user: User;
  /** the one-time link, shown only in this result; null when it was mailed to the person (an SMTP
   *  server is configured): the administrator never holds it, and using it proves the address */
  setupUrl: string | null;
  setupExpiresAt: Date;
  /** the link was mailed through GATEHOUSE_SMTP_URL's server (without one it goes to the outbox
   *  folder too, and is shown here) */
  mailed: boolean;
}

export interface NewUserInput {
  email: string;
  displayName?: string | null;
  /** role ids given in the acting tenant; omitted means Analyst */
  roles?: string[] | null;
}

export interface UserQuery {
  email?: string | null;
  /** the filters the console's list has (the GraphQL `users` query has none of these) */
  status?: UserStatusFilter | null;
  sso?: boolean | null;
  roleId?: string | null;
  lastSignIn?: LastSignInFilter | null;
  page?: number | null;
  perPage?: number | null;
}

/** Who does a change: a principal through the API, or an operator at the CLI. */
type Actor = { kind: 'client' | 'user'; id: string } | OperatorActor;

/** `updated_by`: the principal's id; null for an operator (no row of ours is the OS user) */
const updatedBy = (actor: Actor): string | null => (actor.kind === 'operator' ? null : actor.id);

/** Who a caller is (`me`). */
export interface Identity {
  principal: Principal;
  user: User | undefined;
  /** the instant the roles in force are judged at */
  now: Date;
}

export class UserService {
  constructor(
    private readonly store: Transactional<UserStores>,
    private readonly clock: Clock,
    private readonly settings: UserSettings,
    private readonly mailer: MailSender,
  ) {}

  /** Creates a user in the acting tenant with roles there, and a set-up link. */
  async create(caller: Caller, input: NewUserInput): Promise<UserWithSetupLink> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'users.manage', now);
    const roleIds = checkGrantableRoles(caller, input.roles, now, 'user');
    return await this.insert(caller.principal, caller.tenant.id, input, roleIds, this.mailer.delivers);
  }

  /** The CLI's `users create`: any tenant, any role that exists there. */
  async createAsOperator(operator: OperatorActor, tenantId: string, input: NewUserInput): Promise<UserWithSetupLink> {
    const scope = await this.scopeOf(tenantId);
    const roleIds = (input.roles ?? [ROLE_IDS.Analyst]).map((r) => r.toLowerCase());
    if (roleIds.length === 0) throw badInput('name at least one role', { field: 'roles' });
    for (const id of roleIds) checkRoleHere(id, scope.id, 'roles', 'create the user in tenant 1 to give it');
    // the operator's break-glass: the link is printed, never mailed (it proves nothing)
    return this.insert(operator, scope.id, input, [...new Set(roleIds)], false);
  }

  /**
   * The user, its set-up link, and the invitation mail, in one transaction. `mailed`: the link goes
   * only to the address (an SMTP server delivers it) and is not returned; else it is returned, and
   * still queued for the outbox folder unless an operator asked (docs/users.md).
   */
  private async insert(actor: Actor, tenantId: string, input: NewUserInput, roleIds: string[], mailed: boolean): Promise<UserWithSetupLink> {
    const { email, key } = checkEmail(input.email);
    const displayName = checkDisplayName(input.displayName);
    const token = newOpaqueToken();
    const link = setupUrl(this.settings.baseUrl, token);
    const user = await this.store.transaction(async (tx) => {
      const now = this.clock.now();
      const expiresAt = new Date(now.getTime() + this.settings.setupTtlSeconds * 1000);
      const id = await addUser(tx, {
        tenantId,
        email: { email, key },
        displayName,
        passwordHash: null,
        setup: { tokenHash: digestOpaqueToken(token), expiresAt, mailed },
        roleIds,
        createdAt: now,
        actor: { kind: actor.kind, id: actor.id },
        event: { setup_link_mailed: mailed },
      });
      if (actor.kind !== 'operator') {
        await this.mailer.send(tx, {
          to: email,
          tenantId,
          tenantName: await this.tenantName(tx, tenantId),
          mail: { template: 'invitation', displayName, setupUrl: link, expiresAt },
        });
      }
      return tx.users.findUser(id);
    });
    if (!user?.setupExpiresAt) throw new Error('created user not found');
    return { user, setupUrl: mailed ? null : link, setupExpiresAt: user.setupExpiresAt, mailed };
  }

  private tenantName(tx: UserStores, tenantId: string): Promise<string> {
    return tenantNameOf(tx.tenants, tenantId);
  }

  /** Users whose home is the acting tenant, oldest first. */
  async list(caller: Caller, query: UserQuery): Promise<User[]> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'users.read', now);
    const { offset, perPage } = checkPage(query);
    if (query.status != null && !USER_STATUSES.includes(query.status))
      throw badInput('status must be active, pending or disabled', { field: 'status' });
    if (query.roleId != null && !isRoleId(query.roleId)) throw badInput(`unknown role id ${JSON.stringify(query.roleId)}`, { field: 'role' });
    return await this.store.users.listUsers({
      tenantId: caller.tenant.id,
      ...(query.email != null ? { email: emailFilter(query.email) } : {}),
      ...(query.status != null ? { status: query.status } : {}),
      ...(query.sso != null ? { sso: query.sso } : {}),
      ...(query.roleId != null ? { role: { roleId: query.roleId, now } } : {}),
      ...(query.lastSignIn != null ? { lastSignIn: query.lastSignIn } : {}),
      offset,
      limit: perPage,
    });
  }

  /** The CLI's `users list`. */
  async listAsOperator(tenantId: string): Promise<User[]> {
    const scope = await this.scopeOf(tenantId);
    return this.store.users.listUsers({ tenantId: scope.id, offset: 0, limit: 10_000 });
  }

  /** The caller itself, for `me`: its principal (roles as this token holds them) and, for a user,
   *  the account. Needs no permission: everyone may know who they are. */
  async identity(caller: Caller): Promise<Identity> {
    const { principal } = caller;
    const user = principal.kind === 'user' ? await this.store.users.findUser(principal.id) : undefined;
    return { principal, user, now: this.clock.now() };
  }

  /** A user the caller may read (its home tenant is within the caller's reach), else NOT_FOUND. */
  async get(caller: Caller, id: string): Promise<User> {
    assertCan(caller.principal, caller.tenant, 'users.read', this.clock.now());
    const user = await this.store.users.findUser(checkUserId(id));
    if (!user || !(await this.mayRead(caller, user))) throw notFound('User');
    return user;
  }

  /**
   * Gives the user a role in the acting tenant (which must be the user's home tenant or below it),
   * optionally until `expiresAt`. Giving a role the user holds there already replaces its expiry.
   */
  async assignRole(caller: Caller, input: { userId: string; roleId: string; expiresAt?: string | Date | null }): Promise<User> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'users.manage', now);
    const [roleId] = checkGrantableRoles(caller, [input.roleId], now, 'user');
    const expiresAt = input.expiresAt == null ? null : parseTimeInput(input.expiresAt, 'expires_at');
    if (expiresAt !== null && expiresAt <= now) throw badInput('expires_at must be in the future', { field: 'expires_at' });
    return await this.store.transaction(async (tx) => {
      const user = await this.lockManaged(tx, caller, input.userId);
      refuseSelf(caller, user, 'change your own roles', 'user_id');
      if (!ancestorsOrSelf(caller.tenant).includes(user.tenantId)) {
        throw badInput('a user can hold roles only in its home tenant and the tenants below it; send X-Tenant-Context of such a tenant', {
          field: 'user_id',
        });
      }
      const existing = user.roleAssignments.find((a) => a.tenantId === caller.tenant.id && a.roleId === roleId);
      if (existing) await tx.users.deleteRoleAssignment(user.id, existing.id);
      const now = this.clock.now();
      await tx.users.insertRoleAssignments([
        { id: randomUUID(), tenantId: caller.tenant.id, roleId: roleId!, expiresAt, principalId: user.id, createdAt: now },
      ]);
      await tx.audit.insertEvent(
        event(caller.principal, now, caller.tenant.id, 'user.role_assigned', user.id, {
          role_id: roleId,
          expires_at: expiresAt?.toISOString() ?? null,
        }),
      );
      return this.reread(tx, user.id);
    });
  }

  /** Removes one role assignment held in the acting tenant. */
  async removeRole(caller: Caller, input: { userId: string; assignmentId: string }): Promise<User> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'users.manage', now);
    if (!UUID_PATTERN.test(input.assignmentId)) throw badInput('assignment_id must be a role assignment id (a UUID)', { field: 'assignment_id' });
    return await this.store.transaction(async (tx) => {
      const user = await this.lockManaged(tx, caller, input.userId);
      refuseSelf(caller, user, 'change your own roles', 'user_id');
      const assignment = user.roleAssignments.find((a) => a.id === input.assignmentId.toLowerCase() && a.tenantId === caller.tenant.id);
      if (!assignment) throw notFound('Role assignment in this tenant');
      if (!mayGrant(caller, assignment.roleId, now)) throw forbidden(`You cannot remove a role you could not give: ${roleLabel(assignment.roleId)}`);
      await tx.users.deleteRoleAssignment(user.id, assignment.id);
      await tx.audit.insertEvent(event(caller.principal, now, caller.tenant.id, 'user.role_removed', user.id, { role_id: assignment.roleId }));
      return this.reread(tx, user.id);
    });
  }

  /** Disables (or enables) a user: its sessions and tokens stop working at once and stay dead. */
  async setDisabled(caller: Caller, id: string, disabled: boolean): Promise<User> {
    assertCan(caller.principal, caller.tenant, 'users.manage', this.clock.now());
    return await this.store.transaction(async (tx) => {
      const user = await this.lockManaged(tx, caller, id);
      if (disabled) refuseSelf(caller, user, 'disable your own account', 'id');
      return this.applyDisabled(tx, caller.principal, user, disabled);
    });
  }

  /** The CLI's `users disable|enable`, by e-mail address. */
  async setDisabledAsOperator(operator: OperatorActor, email: string, disabled: boolean): Promise<User> {
    return await this.store.transaction(async (tx) => {
      const user = await lockByEmail(tx, email);
      return this.applyDisabled(tx, operator, user, disabled);
    });
  }

  private async applyDisabled(tx: UserStores, actor: Actor, user: User, disabled: boolean): Promise<User> {
    if ((user.status === 'disabled') === disabled) return user;
    const now = this.clock.now();
    await tx.users.setDisabled(user.id, disabled ? now : null, now, updatedBy(actor));
    await tx.audit.insertEvent(event(actor, now, user.tenantId, disabled ? 'user.disabled' : 'user.enabled', user.id));
    return this.reread(tx, user.id);
  }

  /** Clears the user's password, TOTP and recovery codes and issues a new set-up link (a lost authenticator). */
  async resetSignIn(caller: Caller, id: string): Promise<UserWithSetupLink> {
    assertCan(caller.principal, caller.tenant, 'users.manage', this.clock.now());
    return await this.store.transaction(async (tx) => {
      const user = await this.lockManaged(tx, caller, id);
      refuseSelf(caller, user, 'reset your own sign-in', 'id');
      return this.applyReset(tx, caller.principal, user, this.mailer.delivers);
    });
  }

  /** The CLI's `users reset`, by e-mail address (also how an operator recovers a locked-out administrator). */
  async resetSignInAsOperator(operator: OperatorActor, email: string): Promise<UserWithSetupLink> {
    return await this.store.transaction(async (tx) => {
      const user = await lockByEmail(tx, email);
      return this.applyReset(tx, operator, user, false);
    });
  }

  private async applyReset(tx: UserStores, actor: Actor, user: User, mailed: boolean): Promise<UserWithSetupLink> {
    const now = this.clock.now();
    const token = newOpaqueToken();
    const link = setupUrl(this.settings.baseUrl, token);
    const setupExpiresAt = new Date(now.getTime() + this.settings.setupTtlSeconds * 1000);
    await tx.users.resetSignIn(user.id, digestOpaqueToken(token), setupExpiresAt, now, updatedBy(actor), mailed);
    // the account's failure counts from everywhere start again: the person sets new factors, and
    // what was tried against the old ones no longer holds them back (docs/users.md "Throttles")
    const { keys, prefixes } = accountCounts(emailKey(user.email));
    await tx.attempts.clearAttemptsUnder(keys, prefixes);
    await tx.audit.insertEvent(event(actor, now, user.tenantId, 'user.sign_in_reset', user.id, { setup_link_mailed: mailed }));
    await this.mailer.send(tx, {
      to: user.email,
      tenantId: user.tenantId,
      tenantName: await this.tenantName(tx, user.tenantId),
      // the operator's link is printed, never mailed; the person is told all the same: a reset
      // they did not ask for is how a takeover by someone at the command line would show
      mail:
        actor.kind === 'operator'
          ? { template: 'sign_in_reset_by_operator', at: now, by: 'operator' }
          : { template: 'sign_in_reset', setupUrl: link, expiresAt: setupExpiresAt },
    });
    return { user: await this.reread(tx, user.id), setupUrl: mailed ? null : link, setupExpiresAt, mailed };
  }

  /**
   * Clears the account's sign-in failure counts, account-wide and from every address, and keeps
   * its factors (password, authenticator, recovery codes, passkeys), its browsers and its tokens:
   * the owner held back by someone else's failures signs in at once with what they have.
   * Refused for one's own account as a reset is: whoever holds one of its sessions or tokens
   * could otherwise lift the bound on guesses at its own second factor, and the owner needs no
   * unlock where they are signed in already (the recognised browser has its own allowance).
   */
  async unlockSignIn(caller: Caller, id: string): Promise<User> {
    assertCan(caller.principal, caller.tenant, 'users.manage', this.clock.now());
    return await this.store.transaction(async (tx) => {
      const user = await this.lockManaged(tx, caller, id);
      refuseSelf(caller, user, 'unlock your own sign-in', 'id');
      return this.applyUnlock(tx, caller.principal, user);
    });
  }

  /** The CLI's `users unlock`, by e-mail address. */
  async unlockSignInAsOperator(operator: OperatorActor, email: string): Promise<User> {
    return await this.store.transaction(async (tx) => {
      const user = await lockByEmail(tx, email);
      return this.applyUnlock(tx, operator, user);
    });
  }

  private async applyUnlock(tx: UserStores, actor: Actor, user: User): Promise<User> {
    const now = this.clock.now();
    const { keys, prefixes } = accountCounts(emailKey(user.email));
    // what the account-wide counts held, for the trail: wrong codes after a correct password mean
    // the password is known, and the sign-in wants a reset rather than an unlock (docs/users.md)
    const found = await tx.attempts.findAttempts(keys);
    const held = (kind: 'accountAll' | 'secondFactorMonth') => found.get(attemptKey(kind, emailKey(user.email)))?.attempts ?? 0;
    const cleared = await tx.attempts.clearAttemptsUnder(keys, prefixes);
    await tx.audit.insertEvent(
      event(actor, now, user.tenantId, 'user.sign_in_unlocked', user.id, {
        counts_cleared: cleared,
        password_failures: held('accountAll'),
        second_factor_failures: held('secondFactorMonth'),
      }),
    );
    // the row is not changed (no updated_at): nothing of the account is, only the counts
    return this.reread(tx, user.id);
  }

  /** Deletes the user; returns it as it was. */
  async delete(caller: Caller, id: string): Promise<User> {
    assertCan(caller.principal, caller.tenant, 'users.manage', this.clock.now());
    return await this.store.transaction(async (tx) => {
      const user = await this.lockManaged(tx, caller, id);
      refuseSelf(caller, user, 'delete your own account', 'id');
      const now = this.clock.now();
      await tx.users.deleteUser(user.id);
      await tx.audit.insertEvent(event(caller.principal, now, user.tenantId, 'user.deleted', user.id, { email: user.email }));
      return user;
    });
  }

  /**
   * The user, locked, if the caller may manage users in its home tenant; NOT_FOUND if it may not
   * even see it. Changes to one tenant's users are serialized, and a calling user is checked again
   * inside the transaction (still active, with the roles it holds now): of two administrators
   * disabling each other at once, the second is refused.
   */
  private async lockManaged(tx: UserStores, caller: Caller, rawId: string): Promise<User> {
    const id = checkUserId(rawId);
    const seen = await tx.users.findUser(id);
    if (!seen || !(await this.mayRead(caller, seen, tx))) throw notFound('User');
    await tx.users.lockTenantUsers(seen.tenantId);
    const user = await tx.users.lockUser(id);
    if (!user) throw notFound('User');
    let principal = caller.principal;
    if (principal.kind === 'user') {
      const me = await tx.users.findUser(principal.id);
      if (me?.status !== 'active') throw forbidden('Your account was disabled or deleted meanwhile');
      principal = { ...principal, assignments: me.roleAssignments };
    }
    assertCan(principal, await this.scopeOf(user.tenantId, tx), 'users.manage', this.clock.now());
    return user;
  }

  private async mayRead(caller: Caller, user: User, tx: UserStores = this.store): Promise<boolean> {
    const [home] = await tx.tenants.findScopes([user.tenantId]);
    return home !== undefined && can(caller.principal, home, 'users.read', this.clock.now());
  }

  private async scopeOf(tenantId: string, tx: UserStores = this.store): Promise<TenantScope> {
    if (!TENANT_ID_PATTERN.test(tenantId)) throw badInput(`tenant id ${JSON.stringify(tenantId)} is not a tenant id (digits)`, { field: 'tenant' });
    const [scope] = await tx.tenants.findScopes([tenantId]);
    if (!scope) throw notFound(`Tenant ${tenantId}`);
    return scope;
  }

  private async reread(tx: UserStores, id: string): Promise<User> {
    const user = await tx.users.findUser(id);
    if (!user) throw notFound('User');
    return user;
  }
}

/** Nobody changes their own account or roles: a tenant must not lock out its last administrator by mistake. */
function refuseSelf(caller: Caller, user: User, what: string, field: 'id' | 'user_id'): void {
  if (user.id === caller.principal.id) throw badInput(`You cannot ${what}; ask another Administrator`, { field });
}

function checkUserId(id: string): string {
  if (!UUID_PATTERN.test(id)) throw badInput('id must be a user id (a UUID)', { field: 'id' });
  return id.toLowerCase();
}

/** An e-mail filter: the address's key, or with `%` a LIKE pattern over keys. */
function emailFilter(raw: string): { pattern: string; wildcard: boolean } {
  const key = emailKey(raw);
  if (key.includes('\u0000')) throw badInput('email must not contain a NUL character', { field: 'email' });
  if (key === '') throw badInput('email must not be empty (send at least one character, or % for any)', { field: 'email' });
  if (characterCount(raw) > 254) throw badInput('email must be at most 254 characters', { field: 'email' });
  const wildcard = key.includes('%');
  return { pattern: wildcard ? key.replace(/[\\_]/g, (c) => '\\' + c) : key, wildcard };
}

function event(actor: Actor, occurredAt: Date, tenantId: string, action: string, userId: string, details: Record<string, unknown> = {}): AuditEvent {
  return { occurredAt, tenantId, actor: { kind: actor.kind, id: actor.id }, action, target: { kind: 'user', id: userId }, details };
}

/** The CLI's user by e-mail address (any case), locked until the transaction ends; NOT_FOUND when there is none. */
async function lockByEmail(tx: UserStores, email: string): Promise<User> {
  const found = await tx.users.findUserByEmail(emailKey(email));
  const user = found && (await tx.users.lockUser(found.id));
  if (!user) throw notFound(`User ${JSON.stringify(email)}`);
  return user;
}
