// The users of a tenant (docs/users.md, "Console"): /console/users?tenant=ID lists them (with
// filters), /invite creates one with a set-up link, /user shows one with its roles, and /roles,
// /roles/remove, /disable, /enable, /reset, /unlock and /delete change it, through the same
// UserService calls as the GraphQL resolvers (users, user, createUser, assignUserRole,
// removeUserRole, disableUser, enableUser, resetUserSignIn, unlockUserSignIn, deleteUser).
//
// A user holds roles in its home tenant and the tenants below it (the MSSP flow: a partner's own
// analyst is given Analyst in a customer's tenant). Its page, in its home tenant, lists them all;
// the role forms take `in`, the tenant a role is given in or removed from, and then act there as
// GraphQL does with X-Tenant-Context: that tenant (inTenant), the viewer's roles there.
//
// The list's filters (address, role, status, way of signing in, last sign-in) are the users use
// case's (UserQuery); the GraphQL users query has only the address of them.
//
// A set-up link is in the answer to the POST that made it (invite, reset), and nowhere else.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mayGrant } from '../../../access/grants.js';
import { assertCan, can } from '../../../access/policy.js';
import { heldRoleNames } from '../../../access/scope.js';
import { ROOT_TENANT_ID, roleName, TENANT_ROLES, VENDOR_ROLES } from '../../../access/roles.js';
import { AppError } from '../../../errors.js';
import { checkTenantId } from '../../../ids.js';
import type { Tenant } from '../../../tenants/model.js';
import type { User } from '../../../users/model.js';
import type { UserQuery } from '../../../users/service.js';
import type { UserStatusFilter } from '../../../users/store.js';
import { COPY_SCRIPT_PATH } from '../copy-script.js';
import { type ConsoleKit, type InTenant, PER_PAGE, pageNumber, queryOf, text } from './kit.js';
import { USER_PATH, type UserFilters, userPath, usersPath } from './paths.js';
import {
  deleteUserConfirmation,
  inviteForm,
  LAST_CHOICES,
  type RoleFormValues,
  SIGNIN_CHOICES,
  STATUS_CHOICES,
  setupLinkShown,
  userList,
  userPage,
} from './users-views.js';
import { notInThisTenant, type Problem } from './problems.js';

const DAY_MS = 86_400_000;

/** The filters of the query string, each kept only if it is one of its choices. */
function filtersOf(q: Record<string, unknown>): UserFilters {
  const pick = (raw: unknown, choices: readonly { value: string }[]) => {
    const v = text(raw);
    return choices.some((c) => c.value === v) ? v : undefined;
  };
  const email = text(q.email)?.trim();
  const role = text(q.role);
  return {
    email: email || undefined,
    role: role && roleName(role) ? role : undefined,
    status: pick(q.status, STATUS_CHOICES),
    signin: pick(q.signin, SIGNIN_CHOICES),
    last: pick(q.last, LAST_CHOICES),
  };
}

/** The filters as the users use case takes them (the last sign-in's periods counted from `now`). */
function filterQuery(f: UserFilters, now: Date): Omit<UserQuery, 'page' | 'perPage'> {
  const daysAgo = (days: number) => new Date(now.getTime() - days * DAY_MS);
  return {
    email: f.email ?? null,
    status: (f.status as UserStatusFilter | undefined) ?? null,
    sso: f.signin === undefined ? null : f.signin === 'sso',
    roleId: f.role ?? null,
    lastSignIn:
      f.last === 'never' ? { never: true } : f.last === '30d' ? { after: daysAgo(30) } : f.last === 'stale90' ? { notAfter: daysAgo(90) } : null,
  };
}

/** The handlers of a tenant's users (routes.ts registers them). */
export function userPages(c: ConsoleKit) {
  const { services } = c;
  const section = 'users';

  /** The roles the viewer may give here (the service checks them again). */
  const grantable = (t: InTenant) =>
    [...TENANT_ROLES, ...(t.tenant.id === ROOT_TENANT_ID ? VENDOR_ROLES : [])]
      .filter((id) => mayGrant(t.caller, id, t.now))
      .map((id) => ({ id, name: roleName(id)! }));

  const manage = (t: InTenant) => can(t.principal, t.caller.tenant, 'users.manage', t.now);

  /** A tenant the viewer does not see: left out (any other failure is one). */
  const unseen = (err: unknown): undefined => {
    if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
    throw err;
  };

  /** A user's page, with a notice or a form's failure. */
  async function showUser(
    reply: FastifyReply,
    t: InTenant,
    user: User,
    extra: { problem?: Problem; values?: RoleFormValues; notice?: string | undefined } = {},
  ) {
    const self = user.id === t.principal.id;
    const canChange = manage(t) && !self;
    // the tenants the user holds roles in (its home and below), as far as the viewer sees them
    const known = new Map<string, Tenant>([...t.ancestors, t.tenant].map((a) => [a.id, a]));
    const others = [...new Set(user.roleAssignments.map((a) => a.tenantId))].filter((id) => !known.has(id));
    const [seen, children] = await Promise.all([
      Promise.all(others.map((id) => services.tenants.visibleTenant(t.principal, id).catch(unseen))),
      // the tenants right below, offered for `in` (a partner's customers; the first page of them)
      canChange && t.tenant.isPartner
        ? services.tenants.search(t.caller, { partnership: { parent: t.tenant.id }, maxResults: PER_PAGE, orderBy: 'Name' })
        : undefined,
    ]);
    for (const s of seen) if (s) known.set(s.id, s);
    const view = userPage({
      session: t.session,
      tenant: t.tenant,
      user,
      now: t.now,
      tenantName: (id) => known.get(id)?.name ?? `tenant ${id}`,
      manage: manage(t),
      self,
      grantable: grantable(t),
      // the service's checks, acting in the assignment's tenant (a tenant out of sight: none)
      removable: (a) => {
        const there = known.get(a.tenantId);
        if (!there) return false;
        return can(t.principal, there, 'users.manage', t.now) && mayGrant({ principal: t.principal, tenant: there }, a.roleId, t.now);
      },
      below: children?.results.map((k) => ({ id: k.id, name: k.name })) ?? [],
      ...extra,
    });
    return c.show(reply, extra.problem?.status ?? 200, view, { who: t, in: t, section });
  }

  /** A change's answer: back to the user's page with a notice (303). */
  const done = (reply: FastifyReply, t: InTenant, user: User, notice: string) => c.done(reply, t, notice, userPath(USER_PATH, t.tenant.id, user.id));

  /**
   * The user a page was given, if its home is the page's tenant. The services accept any user
   * whose home the viewer's roles reach, a tenant below included; a page acts in its one tenant,
   * so a user of another (below, out of reach, or none) is refused alike (notInThisTenant), and
   * before anything is changed. A user never changes its home tenant: reading it first and
   * changing it after is no race (deleted meanwhile, the change is refused as not found).
   */
  async function ownUser(t: InTenant, raw: unknown): Promise<User> {
    let user: User;
    try {
      user = await services.users.get(t.caller, text(raw) ?? '');
    } catch (err) {
      if (err instanceof AppError && err.code === 'NOT_FOUND') throw notInThisTenant('user', t.tenant);
      throw err;
    }
    if (user.tenantId !== t.tenant.id) throw notInThisTenant('user', t.tenant);
    return user;
  }

  /** The user a form changes (ownUser), after the right to change users here, which the service
   *  checks again: a viewer without it is refused (and audited) as the service would refuse them. */
  async function managedUser(t: InTenant, raw: unknown): Promise<User> {
    assertCan(t.principal, t.caller.tenant, 'users.manage', t.now);
    return ownUser(t, raw);
  }

  /**
   * The tenant a role form acts in: the page's (`in` empty or the page's own), else `in`, which the
   * viewer's roles must reach (inTenant: refused as tenantNotVisible otherwise, audited in the
   * page's tenant as any refused change of a page is). The service then checks, acting there, as
   * with X-Tenant-Context: the right to manage users and to give the role there, and that it is
   * the user's home tenant or below it.
   */
  async function actingIn(req: FastifyRequest, t: InTenant, raw: string): Promise<InTenant> {
    if (raw === '' || raw === t.tenant.id) return t;
    return c.inTenant(req, t, checkTenantId(raw, 'in'));
  }

  return {
    /** GET /console/users?tenant=…: the users of a tenant → users */
    users: c.section(async (t, req, reply) => {
      const q = queryOf(req);
      const page = pageNumber(q.page);
      const filters = filtersOf(q);
      // one more than shown: whether there is a next page
      const found = await services.users.list(t.caller, { ...filterQuery(filters, t.now), page, perPage: PER_PAGE + 1 });
      const notice = await c.takeNotice(t);
      const view = userList({
        tenant: t.tenant,
        users: found.slice(0, PER_PAGE),
        filters,
        roles: [...TENANT_ROLES, ...VENDOR_ROLES].map((id) => ({ id, name: roleName(id)! })),
        page,
        hasMore: found.length > PER_PAGE,
        manage: manage(t),
        roleNames: (u) => heldRoleNames(u.roleAssignments, t.now),
        notice,
      });
      return c.show(reply, 200, view, { who: t, in: t, section });
    }),

    /** GET /console/users/invite?tenant=… → createUser (its form) */
    inviteForm: c.page(async (t, req, reply) => {
      assertCan(t.principal, t.caller.tenant, 'users.manage', t.now);
      return c.show(reply, 200, inviteForm({ session: t.session, tenant: t.tenant, grantable: grantable(t) }), { who: t, in: t, section });
    }),

    /** POST /console/users/invite → createUser */
    invite: c.form(async (t, form, req, reply) => {
      const values = { email: text(form.email) ?? '', displayName: text(form.display_name) ?? '', role: text(form.role) ?? '' };
      try {
        const made = await services.users.create(t.caller, {
          email: values.email,
          displayName: values.displayName,
          roles: values.role ? [values.role] : null,
        });
        const view = setupLinkShown({
          tenant: t.tenant,
          user: made.user,
          url: made.setupUrl,
          expiresAt: made.setupExpiresAt,
          heading: 'User invited',
          reset: false,
        });
        return c.show(reply, 200, view, { who: t, in: t, section, scripts: [COPY_SCRIPT_PATH] });
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        const view = inviteForm({ session: t.session, tenant: t.tenant, grantable: grantable(t), values, problem });
        return c.show(reply, problem.status, view, { who: t, in: t, section });
      }
    }),

    /** GET /console/users/user?tenant=…&user=… → user */
    user: c.page(async (t, req, reply) => {
      const user = await ownUser(t, queryOf(req).user);
      return showUser(reply, t, user, { notice: await c.takeNotice(t) });
    }),

    /** POST /console/users/roles → assignUserRole */
    assignRole: c.form(async (t, form, req, reply) => {
      const values = { role: text(form.role) ?? '', expires: text(form.expires)?.trim() ?? '', in: text(form.in)?.trim() ?? '' };
      const target = await managedUser(t, form.user);
      try {
        const at = await actingIn(req, t, values.in);
        const user = await services.users.assignRole(at.caller, {
          userId: target.id,
          roleId: values.role,
          expiresAt: values.expires === '' ? null : values.expires,
        });
        const name = roleName(values.role) ?? values.role;
        return await done(reply, t, user, `${user.email} now holds ${name} in ${at.tenant.name}${values.expires ? ' until the time given' : ''}.`);
      } catch (err) {
        // the words name the user's home tenant (the page's), where "and the tenants below it" starts
        const problem = c.formProblem(err, req, reply, t.tenant);
        // a refused change wrote nothing: the user is as read before it
        return showUser(reply, t, target, { problem, values });
      }
    }),

    /** POST /console/users/roles/remove → removeUserRole */
    removeRole: c.form(async (t, form, req, reply) => {
      const target = await managedUser(t, form.user);
      // acting in the assignment's tenant (`in`), as removeUserRole does in X-Tenant-Context's
      const at = await actingIn(req, t, text(form.in)?.trim() ?? '');
      const user = await services.users.removeRole(at.caller, { userId: target.id, assignmentId: text(form.assignment) ?? '' });
      return done(reply, t, user, `The role was removed from ${user.email} in ${at.tenant.name}.`);
    }),

    /** POST /console/users/disable → disableUser */
    disable: c.form(async (t, form, req, reply) => {
      const target = await managedUser(t, form.user);
      const user = await services.users.setDisabled(t.caller, target.id, true);
      return done(reply, t, user, `${user.email} is disabled: their sessions and tokens stopped working.`);
    }),

    /** POST /console/users/enable → enableUser */
    enable: c.form(async (t, form, req, reply) => {
      const target = await managedUser(t, form.user);
      const user = await services.users.setDisabled(t.caller, target.id, false);
      return done(reply, t, user, `${user.email} is enabled: they can sign in again.`);
    }),

    /** POST /console/users/reset → resetUserSignIn (the new set-up link shown once) */
    reset: c.form(async (t, form, req, reply) => {
      const target = await managedUser(t, form.user);
      const made = await services.users.resetSignIn(t.caller, target.id);
      const view = setupLinkShown({
        tenant: t.tenant,
        user: made.user,
        url: made.setupUrl,
        expiresAt: made.setupExpiresAt,
        heading: 'Sign-in reset',
        reset: true,
      });
      return c.show(reply, 200, view, { who: t, in: t, section, scripts: [COPY_SCRIPT_PATH] });
    }),

    /** POST /console/users/unlock → unlockUserSignIn (no confirmation: it takes nothing away) */
    unlock: c.form(async (t, form, req, reply) => {
      const target = await managedUser(t, form.user);
      const user = await services.users.unlockSignIn(t.caller, target.id);
      return done(
        reply,
        t,
        user,
        `${user.email} can sign in again at once with their password and authenticator: the failed attempts that held them back are cleared.`,
      );
    }),

    /** GET /console/users/delete?tenant=…&user=… → deleteUser (its confirmation) */
    deleteForm: c.page(async (t, req, reply) => {
      const user = await managedUser(t, queryOf(req).user);
      const view = deleteUserConfirmation({ session: t.session, tenant: t.tenant, user, roleNames: heldRoleNames(user.roleAssignments, t.now) });
      return c.show(reply, 200, view, { who: t, in: t, section });
    }),

    /** POST /console/users/delete → deleteUser */
    delete: c.form(async (t, form, req, reply) => {
      const target = await managedUser(t, form.user);
      const deleted = await services.users.delete(t.caller, target.id);
      return c.done(reply, t, `${deleted.email} was deleted. They can no longer sign in.`, usersPath(t.tenant.id));
    }),
  };
}
