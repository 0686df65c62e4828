// The scope of the browser pages (docs/users.md, "Sign-in"): what every page shares, set up once
// before routes.ts registers the page families in it. Forms are form-encoded, at most 16 KiB
// unless a route says otherwise (the SAML ACS); every page is no-store, framed by nobody, under a
// CSP without scripts unless the page loads this service's own; a failure no route answered (a
// body Fastify refused, a bug) is a page, not JSON. The kit it returns (page-kit.ts) is what the
// families use: the page shell, the sessions of forms and their CSRF check, refusals.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../../errors.js';
import { type Session, csrfMatches } from '../../sessions/model.js';
import type { Services } from '../../services.js';
import { bodyRefusal, sizeInWords } from '../body-refusal.js';
import { html, type Html, page, type PageOptions } from './html.js';
import type { Form, PageKit } from './page-kit.js';
import { browserCookieSettings, cookieSettings, readCookie, setSessionCookie } from './session-cookie.js';

export interface PageScopeDeps {
  services: Services;
  baseUrl: string;
  vendor: string;
  /** shown beside the vendor on every page: a session is good only in its region's deployment */
  region?: string;
}

const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The CSP of a page that loads this service's scripts (only the pages that show a secret, a
 *  client's or the recovery codes, for their copy and download buttons): scripts from this origin as files (nosniff: only as JavaScript), nothing
 *  inline, and no string ever reaching a DOM sink that would run it. */
const CSP_WITH_SCRIPTS = `${CSP}; script-src 'self'; require-trusted-types-for 'script'`;
/** A form of these pages is a few fields: 16 KiB is plenty. */
export const FORM_LIMIT = 16 * 1024;

/** Sets up `scope` for the pages (before any of its routes) and returns their kit. */
export function pageScope(scope: FastifyInstance, deps: PageScopeDeps): PageKit {
  const { services, vendor } = deps;
  const cookie = cookieSettings(deps.baseUrl);
  const browserCookie = browserCookieSettings(deps.baseUrl);

  // every route of the scope reads at most this much, unless it says otherwise (the ACS)
  scope.addHook('onRoute', (route) => {
    route.bodyLimit ??= FORM_LIMIT;
  });
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const form: Form = {};
    for (const [k, v] of new URLSearchParams(body as string)) if (!(k in form)) form[k] = v;
    done(null, form);
  });
  // Defaults for every answer of this scope: a route that set its own (a page with scripts, the
  // stylesheet's caching) keeps it.
  scope.addHook('onSend', async (_req, reply) => {
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', CSP);
    reply.header('x-frame-options', 'DENY');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });

  const send = (reply: FastifyReply, status: number, title: string, body: Html, opts: PageOptions = {}) => {
    if (opts.scripts?.length) reply.header('content-security-policy', CSP_WITH_SCRIPTS);
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(page(title, body, { vendor, ...(deps.region ? { region: deps.region } : {}), ...opts }));
  };

  // A failure the routes did not answer themselves (a body Fastify refused, a bug): a page, not
  // JSON. The console's own handler (console-pages.ts) answers its routes.
  scope.setErrorHandler(async (err, req, reply) => {
    const refused = bodyRefusal(err);
    if (err instanceof DatabaseUnavailableError) {
      req.log.warn({ err }, 'database unavailable');
      reply.header('retry-after', String(err.retryAfter));
      return send(
        reply,
        503,
        'Unavailable for a moment',
        html`<p>The service cannot reach its database just now. Wait a few seconds, then try again.</p>
<p><a href="/login">Back to sign-in</a></p>`,
      );
    }
    if (!refused) {
      req.log.error({ err }, 'page failed');
      return send(
        reply,
        500,
        'Something went wrong',
        html`<p>This is our fault, not yours. Try again; if it keeps happening, tell your administrator this reference: <code>${req.id}</code>.</p>
<p><a href="/login">Back to sign-in</a></p>`,
      );
    }
    const what =
      refused.kind === 'too_large'
        ? `What was sent is larger than the ${sizeInWords(req.routeOptions.bodyLimit)} this page accepts`
        : refused.kind === 'media_type'
          ? 'This page reads forms only (application/x-www-form-urlencoded)'
          : refused.detail;
    return send(reply, refused.status, 'This request could not be read', html`<p>${what}.</p><p><a href="/login">Back to sign-in</a></p>`);
  });

  const sessionOf = (req: FastifyRequest) => services.sessions.find(readCookie(req, cookie.name));

  const kit: PageKit = {
    services,
    vendor,
    cookie,
    browserCookie,
    send,
    sessionOf,
    async anonymous(reply, found, returnTo) {
      const { session, issued } = await services.signIn.anonymous(found, returnTo);
      if (issued) setSessionCookie(reply, cookie, issued.secret);
      return session;
    },
    async formSession(req, reply): Promise<Session | undefined> {
      const session = await sessionOf(req);
      const form = (req.body ?? {}) as Form;
      if (!session || !csrfMatches(session, form._csrf)) {
        await send(
          reply,
          403,
          'This form has expired',
          html`<p>For your safety this form can no longer be sent. <a href="/login">Start again</a>.</p>`,
        );
        return undefined;
      }
      return session;
    },
    attemptOf: (req) => ({ address: req.ip, browser: readCookie(req, browserCookie.name), requestId: req.id, userAgent: req.headers['user-agent'] }),
    noteRefusal(reply, refused, flow = 'sign-in') {
      if (refused.retryAfter !== undefined) reply.header('retry-after', String(refused.retryAfter));
      if (refused.reason) reply.log.warn({ reason: refused.reason }, `${flow} refused`);
    },
    refusalPage(reply, refused, { title, more, flow }) {
      kit.noteRefusal(reply, refused, flow);
      return send(reply, refused.status, title, html`<p class="error" role="alert">${refused.message}</p>${more ?? ''}`);
    },
  };
  return kit;
}
