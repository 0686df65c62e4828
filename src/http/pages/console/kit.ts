// What every family of console pages shares (credentials.ts, and the others in this folder): who
// the signed-in person is and the principal they act as, the tenant a page acts in (refused alike
// whether it does not exist or is out of reach), the page shell with the console's header, the
// one error page, and the two shapes of a handler in one tenant: page() (GET, the tenant named in
// the query) and form() (POST, named in the form). The signed-in user acts as the principal its
// token would be, through the same services as the GraphQL resolvers: the same authorization, the
// same rules. The rights a page checks itself only decide which links and forms to show.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { can } from '../../../access/policy.js';
import type { Caller, Principal } from '../../../access/principal.js';
import { AppError, ForbiddenError } from '../../../errors.js';
import { checkTenantId, TENANT_ID_PATTERN } from '../../../ids.js';
import type { Session } from '../../../sessions/model.js';
import type { Tenant } from '../../../tenants/model.js';
import type { PageOptions } from '../html.js';
import type { Form, PageKit } from '../page-kit.js';
import { consoleNav, problemPage, type Place, type Section, type View } from './layout.js';
import { CONSOLE_PATH, SECTIONS, tenantHomePath, query } from './paths.js';
import { type Problem, type ProblemContext, problemOf, tenantNotVisible } from './problems.js';

/** rows on one page of a console list */
export const PER_PAGE = 50;

/** The signed-in person: its session, its address, and the principal it acts as. */
export interface Viewer {
  session: Session;
  email: string;
  principal: Principal;
}

/** A viewer acting in one tenant. */
export interface InTenant extends Viewer {
  caller: Caller;
  tenant: Tenant;
  now: Date;
  /** the tenants above it the viewer may see, the top first (the header's breadcrumbs) */
  ancestors: Tenant[];
}

/** What a console request is known to be for, as far as it got. */
interface Known {
  who: Viewer;
  tenant?: Tenant;
  /** once the tenant it acts in is known to be one the viewer may act in */
  caller?: Caller;
}

/** A tenant the viewer does not see: left out (any other failure is one). */
const unseen = (err: unknown): undefined => {
  if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
  throw err;
};

export const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const queryOf = (req: FastifyRequest) => req.query as Record<string, unknown>;
export const formOf = (req: FastifyRequest) => (req.body ?? {}) as Form;
const loginPath = (returnTo: string) => `/login${query({ return_to: returnTo })}`;
/** Page numbers as the services check them: absent is 1, anything else must be a whole number. */
export const pageNumber = (raw: unknown) => (raw === undefined ? 1 : Number(text(raw) ?? Number.NaN));
/** Only the errors a form is shown again for; the rest get a page of their own. */
const FORM_ERRORS = new Set(['BAD_USER_INPUT', 'CONFLICT']);

export type ConsoleKit = ReturnType<typeof consoleKit>;

/** A route's handler, as page() and form() make them. */
export type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

export function consoleKit(kit: PageKit) {
  const { services } = kit;

  /** Who each request's page is for, and the tenant it acts in, once known: an error page keeps
   *  the header (where, who, sign out) and names the tenant. */
  const known = new WeakMap<FastifyRequest, Known>();

  /** The tabs of a tenant's pages the viewer's roles there open. */
  function sections(t: InTenant): Section[] {
    return SECTIONS.filter((s) => can(t.principal, t.caller.tenant, s.permission, t.now)).map((s) => ({
      id: s.id,
      label: s.label,
      href: `${s.path}${query({ tenant: t.tenant.id })}`,
    }));
  }

  /** Sends a console page: under the header, in the tenant (and section) it acts in; with the
   *  page options of the shell (html.ts) beyond the console's own (its wide column, its header):
   *  the scripts it loads, the address the browser goes on to by itself. */
  function show(
    reply: FastifyReply,
    status: number,
    view: View,
    where: { who: Viewer; in?: InTenant | undefined; section?: string } & Pick<PageOptions, 'scripts' | 'refreshTo'>,
  ): FastifyReply {
    const { who, in: t, section, ...options } = where;
    const place: Place = t ? { tenant: t.tenant, ancestors: t.ancestors, sections: sections(t), current: section } : {};
    return kit.send(reply, status, view.title, view.body, { wide: true, nav: consoleNav(who.session, who.email, place), ...options });
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
    // vendor staff acting through Support access: every page and form is in the tenant's trail
    await services.audit.staffAccess(caller, [`${req.method} ${req.routeOptions.url ?? req.url}`], 'console');
    // the line above it (TenantScope.path: '1.5.23.'), as far as the viewer sees it
    const above = tenant.path.split('.').filter((a) => a !== '' && a !== tenant.id);
    const ancestors = await Promise.all(above.map((a) => services.tenants.visibleTenant(who.principal, a).catch(unseen)));
    return { ...who, caller, tenant, now: services.clock.now(), ancestors: ancestors.filter((a) => a !== undefined) };
  }

  /** A GET page of the tenant its query names (`tenant`): `handler` runs once the viewer is signed
   *  in (else they were sent to sign in) and may act in that tenant (else it is refused). */
  function page(handler: (t: InTenant, req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>): Handler {
    return async (req, reply) => {
      const who = await viewer(req, reply);
      if (!who) return reply;
      return handler(await inTenant(req, who, queryOf(req).tenant), req, reply);
    };
  }

  /** A section's first page (a tenant's overview, its lists): as page(), but an address without
   *  `tenant` at all leads to the viewer's tenants (303), where one is picked. */
  function section(handler: (t: InTenant, req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>): Handler {
    return async (req, reply) => {
      const who = await viewer(req, reply);
      if (!who) return reply;
      const { tenant } = queryOf(req);
      if (tenant === undefined) return reply.redirect(CONSOLE_PATH, 303);
      return handler(await inTenant(req, who, tenant), req, reply);
    };
  }

  /** A POST form of the tenant it names (`tenant`): `handler` runs once the form came with the
   *  session's CSRF token from a signed-in viewer (else the refusal was sent) who may act in that
   *  tenant (else it is refused). */
  function form(handler: (t: InTenant, form: Form, req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>): Handler {
    return async (req, reply) => {
      const who = await poster(req, reply);
      if (!who) return reply;
      const posted = formOf(req);
      return handler(await inTenant(req, who, posted.tenant), posted, req, reply);
    };
  }

  return {
    services,
    show,
    sections,
    /** who makes a guess (a password on the account page), counted as sign-in's are */
    attemptOf: kit.attemptOf,
    noteRefusal: kit.noteRefusal,
    vendor: kit.vendor,
    /** a page outside the console's shell (for a visitor not signed in) */
    sendBare: kit.send,

    // Every failure a handler throws: one page, in a person's words (problems.ts), under the
    // console's header when the person is known.
    async failed(err: unknown, req: FastifyRequest, reply: FastifyReply) {
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
          ? { href: tenantHomePath(tenant), label: 'Back to the tenant' }
          : { href: CONSOLE_PATH, label: 'Back to your tenants' };
      const view = problemPage(problem, back, req.id);
      return kit.send(reply.headers(problem.headers), problem.status, view.title, view.body, {
        wide: true,
        ...(seen ? { nav: consoleNav(seen.who.session, seen.who.email, seen.tenant ? { tenant: seen.tenant } : {}) } : {}),
      });
    },

    viewer,
    /** the signed-in viewer, or undefined (nothing is sent) */
    viewerIfAny: async (req: FastifyRequest): Promise<Viewer | undefined> => (await viewerIfAny(req))?.who,
    poster,
    inTenant,
    page,
    section,
    form,

    /** The notice the last action left in the session (shown once), taken out of it. Taken in
     *  the database, not from the copy this request read: of two tabs loading at once, one shows
     *  it, and whatever else the session holds (a sign-in step, a pending authenticator) stays. */
    async takeNotice(who: Viewer): Promise<string | undefined> {
      if (who.session.state.notice === undefined) return undefined;
      return await services.sessions.takeState(who.session, 'notice');
    },

    /** Leaves a notice for the next page (after a redirect): that key only, the rest of the session's state as it is now. */
    async leaveNotice(who: Viewer, notice: string): Promise<void> {
      await services.sessions.patchState(who.session, { set: { notice } });
    },

    /** A failure the form is shown again for (with what went wrong); any other goes to the error page. */
    formProblem(err: unknown, req: FastifyRequest, reply: FastifyReply, tenant: ProblemContext['tenant']): Problem {
      if (!(err instanceof AppError && FORM_ERRORS.has(err.code))) throw err;
      return problemOf(err, req, reply, { tenant });
    },

    /** A change's answer: to `path` (303), with a notice for the page there. A method (`this`),
     *  so that it leaves the notice as leaveNotice does, whatever that becomes. */
    async done(reply: FastifyReply, who: Viewer, notice: string, path: string): Promise<FastifyReply> {
      await this.leaveNotice(who, notice);
      return reply.redirect(path, 303);
    },
  };
}
