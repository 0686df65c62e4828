// The credentials console (docs/users.md, "Console"): GET /console picks a tenant, then
// /console/credentials?tenant=ID lists its API clients, and /new, /rotate and /delete create,
// rotate and delete them. The signed-in user acts as the principal its token would be, in the
// tenant TenantService.actingTenant allows, through the same CredentialService calls as the
// GraphQL resolvers: the same authorization, the same rules. The rights checked here only decide
// which links and forms to show.
//
// Forms are POST with the session's CSRF token; a deletion redirects (303) to the list with a
// notice in the session; a new secret is in the answer to the POST that made it, and nowhere else
// (never a URL, never the session).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mayGrant } from '../../access/grants.js';
import { assertCan, can } from '../../access/policy.js';
import type { Caller, Principal } from '../../access/principal.js';
import { heldRoleNames } from '../../access/scope.js';
import { ROOT_TENANT_ID, roleName, TENANT_ROLES, VENDOR_ROLES } from '../../access/roles.js';
import type { Client } from '../../credentials/model.js';
import { AppError, badInput, ForbiddenError, notFound } from '../../errors.js';
import { checkTenantId, TENANT_ID_PATTERN } from '../../ids.js';
import type { Session } from '../../sessions/model.js';
import type { Tenant } from '../../tenants/model.js';
import { COPY_SCRIPT_PATH } from './copy-script.js';
import { type Problem, type ProblemContext, problemOf, tenantNotVisible } from './console-problems.js';
import {
  CONSOLE_PATH,
  consoleNav,
  createForm,
  credentialList,
  deleteConfirmation,
  listPath,
  problemPage,
  ROLE_FIELD_PREFIX,
  rotateForm,
  secretShown,
  tenantPicker,
  type View,
} from './console-views.js';
import type { Form, PageKit } from './page-kit.js';
import { html } from './html.js';

/** tenants on one page of the picker, clients on one page of the list */
const PER_PAGE = 50;

/** The signed-in person: its session, its address, and the principal it acts as. */
interface Viewer {
  session: Session;
  email: string;
  principal: Principal;
}

/** What a console request is known to be for, as far as it got. */
interface Known {
  who: Viewer;
  tenant?: Tenant;
  /** once the tenant it acts in is known to be one the viewer may act in */
  caller?: Caller;
}

/** A viewer acting in one tenant. */
interface InTenant extends Viewer {
  caller: Caller;
  tenant: Tenant;
  now: Date;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const queryOf = (req: FastifyRequest) => req.query as Record<string, unknown>;
const formOf = (req: FastifyRequest) => (req.body ?? {}) as Form;
const loginPath = (returnTo: string) => `/login?return_to=${encodeURIComponent(returnTo)}`;
/** Page numbers as the services check them: absent is 1, anything else must be a whole number. */
const pageNumber = (raw: unknown) => (raw === undefined ? 1 : Number(text(raw) ?? Number.NaN));
/** Only the errors a form is shown again for; the rest get a page of their own. */
const FORM_ERRORS = new Set(['BAD_USER_INPUT', 'CONFLICT']);

/** The handlers of the console (routes.ts registers them, in a scope of their own under the
 *  pages' scope, with `failed` as its error handler). */
export function consolePages(kit: PageKit) {
  const { services } = kit;
  const show = (reply: FastifyReply, status: number, view: View, who: Viewer, tenant?: Tenant, scripts?: string[]) =>
    kit.send(reply, status, view.title, view.body, {
      wide: true,
      nav: consoleNav(who.session, who.email, tenant),
      ...(scripts ? { scripts } : {}),
    });

  /** Who each request's page is for, and the tenant it acts in, once known: an error page keeps
   *  the header (where, who, sign out) and names the tenant. */
  const known = new WeakMap<FastifyRequest, Known>();

  // Every failure a handler throws: one page, in a person's words (console-problems.ts), under
  // the console's header when the person is known.
  async function failed(err: unknown, req: FastifyRequest, reply: FastifyReply) {
    const seen = known.get(req) ?? (await viewerIfAny(req));
    const problem = problemOf(err, req, reply, { tenant: seen?.tenant });
    if (problem.code === 'UNAUTHENTICATED') return reply.redirect(loginPath(CONSOLE_PATH), 303);
    // a change the viewer's roles in the tenant do not allow: an audit event of that tenant, as
    // the GraphQL interfaces write (audit/service.ts); a tenant out of reach is refused before
    if (problem.code === 'FORBIDDEN' && req.method === 'POST' && seen?.caller) {
      await services.audit
        .refused(
          seen.caller,
          [
            {
              operation: `POST ${req.routeOptions.url ?? req.url.split('?')[0]}`,
              reason: problem.message,
              tenantId: err instanceof ForbiddenError ? err.decidedIn : undefined,
            },
          ],
          'console',
        )
        .catch((writeErr: unknown) => req.log.error({ err: writeErr }, 'the audit event of a refused console change was not written'));
    }
    const tenant = seen?.tenant?.id ?? text(queryOf(req).tenant) ?? text(formOf(req).tenant);
    const back =
      tenant && TENANT_ID_PATTERN.test(tenant) && problem.code !== 'FORBIDDEN'
        ? { href: listPath(tenant), label: 'Back to the credentials' }
        : { href: CONSOLE_PATH, label: 'Back to your tenants' };
    const view = problemPage(problem, back, req.id);
    return kit.send(reply.headers(problem.headers), problem.status, view.title, view.body, {
      wide: true,
      ...(seen ? { nav: consoleNav(seen.who.session, seen.who.email, seen.tenant) } : {}),
    });
  }

  /** For an error page: the signed-in person, if the failure left them readable (a failing
   *  database does not: the page then goes without the header). */
  async function viewerIfAny(req: FastifyRequest): Promise<Known | undefined> {
    try {
      const session = await kit.sessionOf(req);
      const who = session && (await identify(session, req));
      return who ? { who } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Who a signed-in session acts as, in this request (its id and address go into the audit
   *  events of what it does, as a bearer token's do); undefined for an anonymous session, or a
   *  user gone meanwhile. */
  async function identify(session: Session, req: FastifyRequest): Promise<Viewer | undefined> {
    if (!session.userId) return undefined;
    const [user, principal] = await Promise.all([services.signIn.signedInUser(session), services.signIn.signedInPrincipal(session)]);
    return user && principal ? { session, email: user.email, principal: { ...principal, request: { id: req.id, address: req.ip } } } : undefined;
  }

  /** The viewer of a page; else the way to sign in (and back here) was sent. */
  async function viewer(req: FastifyRequest, reply: FastifyReply): Promise<Viewer | undefined> {
    const session = await kit.sessionOf(req);
    const who = session && (await identify(session, req));
    if (!who) reply.redirect(loginPath(req.url), 303);
    else known.set(req, { who });
    return who;
  }

  /** The viewer who posted a form with the session's CSRF token; else the refusal was sent. */
  async function poster(req: FastifyRequest, reply: FastifyReply): Promise<Viewer | undefined> {
    const session = await kit.formSession(req, reply);
    if (!session) return undefined;
    const who = await identify(session, req);
    if (!who) reply.redirect(loginPath(CONSOLE_PATH), 303);
    else known.set(req, { who });
    return who;
  }

  /** The tenant a page acts in: refused (403) alike whether it does not exist or the viewer's roles do not reach it. */
  async function inTenant(req: FastifyRequest, who: Viewer, raw: unknown): Promise<InTenant> {
    const id = checkTenantId(text(raw) ?? '', 'tenant');
    let caller: Caller;
    let tenant: Tenant;
    try {
      caller = { principal: who.principal, tenant: await services.tenants.actingTenant(who.principal, id) };
      tenant = await services.tenants.visibleTenant(who.principal, id);
    } catch (err) {
      if (err instanceof AppError && (err.code === 'FORBIDDEN' || err.code === 'NOT_FOUND')) throw tenantNotVisible(id);
      throw err;
    }
    known.set(req, { who, tenant, caller });
    return { ...who, caller, tenant, now: services.clock.now() };
  }

  /** One live client of the acting tenant, read as `clients(clientIDs: [id])` reads it. */
  async function clientOf(t: InTenant, raw: unknown): Promise<Client> {
    const [client] = await services.credentials.listClients(t.caller, { clientIDs: [text(raw) ?? ''], perPage: 1 });
    if (!client) throw notFound('Client');
    return client;
  }

  /** The names of the roles a client holds now, in the order of the role table. */
  const roleNames = (c: Client, now: Date) => heldRoleNames(c.roleAssignments, now);

  /** The roles the viewer may give a new client here (the service checks them again). */
  const grantable = (t: InTenant) =>
    [...TENANT_ROLES, ...(t.tenant.id === ROOT_TENANT_ID ? VENDOR_ROLES : [])]
      .filter((id) => mayGrant(t.caller, id, t.now))
      .map((id) => ({ id, name: roleName(id)! }));

  return {
    failed,

    /** GET /console: the tenants the person acts in */
    async tenants(req: FastifyRequest, reply: FastifyReply) {
      const who = await viewer(req, reply);
      if (!who) return reply;
      const name = text(queryOf(req).name)?.trim() || undefined;
      const page = pageNumber(queryOf(req).page);
      const found = await services.tenants.withRoles(who.principal, { name, page, perPage: PER_PAGE });
      // where a person lands after signing in: a notice of the sign-in (recovery codes left,
      // failed attempts on the account) is shown here, once
      const { notice, ...state } = who.session.state;
      if (notice !== undefined) await services.sessions.setState(who.session, state);
      const view = tenantPicker({ ...found, page, perPage: PER_PAGE, name });
      return show(reply, 200, notice ? { ...view, body: html`<p class="notice" role="status">${notice}</p>${view.body}` } : view, who);
    },

    /** GET /console/credentials?tenant=…: the clients of a tenant */
    async credentials(req: FastifyRequest, reply: FastifyReply) {
      const who = await viewer(req, reply);
      if (!who) return reply;
      const q = queryOf(req);
      if (q.tenant === undefined) return reply.redirect(CONSOLE_PATH, 303);
      const t = await inTenant(req, who, q.tenant);
      const page = pageNumber(q.page);
      // one more than shown: whether there is a next page
      const clients = await services.credentials.listClients(t.caller, { page, perPage: PER_PAGE + 1 });
      const { notice, ...state } = who.session.state;
      if (notice !== undefined) await services.sessions.setState(who.session, state);
      const view = credentialList({
        tenant: t.tenant,
        clients: clients.slice(0, PER_PAGE),
        page,
        hasMore: clients.length > PER_PAGE,
        rights: {
          create: can(t.principal, t.caller.tenant, 'clients.create', t.now),
          rotate: can(t.principal, t.caller.tenant, 'clients.rotate', t.now),
          delete: can(t.principal, t.caller.tenant, 'clients.delete', t.now),
        },
        roleNames: (c) => roleNames(c, t.now),
        notice,
      });
      return show(reply, 200, view, who, t.tenant);
    },

    /** GET /console/credentials/new?tenant=… */
    async newForm(req: FastifyRequest, reply: FastifyReply) {
      const who = await viewer(req, reply);
      if (!who) return reply;
      const t = await inTenant(req, who, queryOf(req).tenant);
      assertCan(t.principal, t.caller.tenant, 'clients.create', t.now);
      return show(reply, 200, createForm({ session: t.session, tenant: t.tenant, grantable: grantable(t) }), who, t.tenant);
    },

    /** POST /console/credentials/new */
    async create(req: FastifyRequest, reply: FastifyReply) {
      const who = await poster(req, reply);
      if (!who) return reply;
      const form = formOf(req);
      const t = await inTenant(req, who, form.tenant);
      const name = text(form.name) ?? '';
      const roles = Object.entries(form)
        .filter(([k, v]) => k.startsWith(ROLE_FIELD_PREFIX) && typeof v === 'string')
        .map(([, v]) => v);
      try {
        if (roles.length === 0) throw badInput('Choose at least one role for the credential.', { field: 'roles' });
        const made = await services.credentials.createClient(t.caller, { name, roles });
        const view = secretShown({ tenant: t.tenant, client: made.client, secret: made.clientSecret, heading: 'Credential created', rotated: false });
        return show(reply, 200, view, who, t.tenant, [COPY_SCRIPT_PATH]);
      } catch (err) {
        const problem = formProblem(err, req, reply, t.tenant);
        const view = createForm({ session: t.session, tenant: t.tenant, grantable: grantable(t), values: { name, roles }, problem });
        return show(reply, problem.status, view, who, t.tenant);
      }
    },

    /** GET /console/credentials/rotate?tenant=…&client=… */
    async rotateForm(req: FastifyRequest, reply: FastifyReply) {
      const who = await viewer(req, reply);
      if (!who) return reply;
      const t = await inTenant(req, who, queryOf(req).tenant);
      assertCan(t.principal, t.caller.tenant, 'clients.rotate', t.now);
      const client = await clientOf(t, queryOf(req).client);
      return show(reply, 200, rotateForm({ session: t.session, tenant: t.tenant, client }), who, t.tenant);
    },

    /** POST /console/credentials/rotate */
    async rotate(req: FastifyRequest, reply: FastifyReply) {
      const who = await poster(req, reply);
      if (!who) return reply;
      const form = formOf(req);
      const t = await inTenant(req, who, form.tenant);
      const grace = text(form.grace);
      try {
        const rotated = await services.credentials.rotateClientSecret(t.caller, {
          id: text(form.client) ?? '',
          secret: text(form.secret) ?? '',
          gracePeriodSeconds: grace === undefined || grace === '' ? null : Number(grace),
        });
        const oldSecretUntil = rotated.client.secrets.find((s) => s.expiresAt !== null)?.expiresAt ?? undefined;
        const view = secretShown({
          tenant: t.tenant,
          client: rotated.client,
          secret: rotated.clientSecret,
          heading: 'New secret',
          rotated: true,
          oldSecretUntil,
        });
        return show(reply, 200, view, who, t.tenant, [COPY_SCRIPT_PATH]);
      } catch (err) {
        const problem = formProblem(err, req, reply, t.tenant);
        const client = await clientOf(t, form.client);
        return show(reply, problem.status, rotateForm({ session: t.session, tenant: t.tenant, client, problem, grace }), who, t.tenant);
      }
    },

    /** GET /console/credentials/delete?tenant=…&client=… */
    async deleteForm(req: FastifyRequest, reply: FastifyReply) {
      const who = await viewer(req, reply);
      if (!who) return reply;
      const t = await inTenant(req, who, queryOf(req).tenant);
      assertCan(t.principal, t.caller.tenant, 'clients.delete', t.now);
      const client = await clientOf(t, queryOf(req).client);
      const view = deleteConfirmation({ session: t.session, tenant: t.tenant, client, roleNames: roleNames(client, t.now) });
      return show(reply, 200, view, who, t.tenant);
    },

    /** POST /console/credentials/delete */
    async delete(req: FastifyRequest, reply: FastifyReply) {
      const who = await poster(req, reply);
      if (!who) return reply;
      const form = formOf(req);
      const t = await inTenant(req, who, form.tenant);
      const deleted = await services.credentials.deleteClient(t.caller, { id: text(form.client) ?? '' });
      const notice = `Client ${deleted.name} (${deleted.clientId}) was deleted. Its secrets no longer work.`;
      await services.sessions.setState(t.session, { ...t.session.state, notice });
      return reply.redirect(listPath(t.tenant.id), 303);
    },

    /** any other address under /console: a page that says so, not the API's JSON 404 */
    async unknownPage(): Promise<never> {
      throw notFound('Page');
    },
  };
}

/** A failure the form is shown again for (with what went wrong); any other goes to the error page. */
function formProblem(err: unknown, req: FastifyRequest, reply: FastifyReply, tenant: ProblemContext['tenant']): Problem {
  if (!(err instanceof AppError && FORM_ERRORS.has(err.code))) throw err;
  return problemOf(err, req, reply, { tenant });
}
