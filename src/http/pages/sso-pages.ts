// The SAML service-provider endpoints of each SSO connection (docs/sso.md, "Sign-in"):
//   GET  /sso/saml/:id/metadata  this service's SP metadata for the connection
//   GET  /sso/saml/:id/login     begins a sign-in: the browser goes to the IdP (HTTP-Redirect)
//   POST /sso/saml/:id/acs       the IdP's response (HTTP-POST), verified; the browser is sent on
//   GET  /sso/saml/finish        the browser that began the sign-in comes back with its cookie
// A refusal is a page that says what happened and what to do; it never echoes the IdP's XML.
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { addressPrefix } from '../../oauth/address-prefix.js';
import { safeReturnPath } from '../../sessions/model.js';
import { AcsThrottle } from '../../sso/acs-throttle.js';
import { MAX_SAML_RESPONSE_BASE64 } from '../../sso/assertion-checks.js';
import { SsoRefusal, tooLargeMessage } from '../../sso/sign-in.js';
import { html } from './html.js';
import { csrfField, type PageKit } from './page-kit.js';
import { setSessionCookie, type CookieSettings } from './session-cookie.js';

/** The ACS body, refused (413) beyond this before it is read: the SAMLResponse field holds at most
 *  MAX_SAML_RESPONSE_BASE64 (128 KiB) of base64, which form encoding grows by about 6% (its '+'
 *  and '/' become three characters each), and RelayState is at most 80 bytes. */
export const ACS_BODY_LIMIT = MAX_SAML_RESPONSE_BASE64 + 64 * 1024;

export function registerSsoPages(scope: FastifyInstance, kit: PageKit, cookie: CookieSettings): void {
  const { services, send } = kit;
  // per process, in memory: the cost it bounds is this process's CPU (acs-throttle.ts)
  const acsThrottle = new AcsThrottle(() => services.clock.now().getTime());

  const refused = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof SsoRefusal)) throw err;
    if (err.reason) reply.log.warn({ reason: err.reason }, 'SAML sign-in refused');
    return send(
      reply,
      err.status,
      'Single sign-on did not work',
      html`<p class="error" role="alert">${err.message}</p>
<p><a href="/login">Back to sign-in</a></p>`,
    );
  };

  scope.get('/sso/saml/:id/metadata', async (req, reply) => {
    try {
      const xml = await services.ssoSignIn.metadata((req.params as { id: string }).id);
      return reply.type('application/samlmetadata+xml; charset=utf-8').header('cache-control', 'public, max-age=300').send(xml);
    } catch (err) {
      return refused(reply, err);
    }
  });

  // Begins a sign-in at the IdP only for the browser that asked for it at /login or /device (its
  // session is at the 'sso' step of this connection). Anyone else, e.g. sent here by a link or an
  // IdP's app tile, first confirms with a button (a form with the session's CSRF token): otherwise
  // a page elsewhere could start a sign-in through its own connection in a visitor's browser and
  // have them signed in as someone else (login CSRF).
  scope.get('/sso/saml/:id/login', async (req, reply) => {
    const id = (req.params as { id: string }).id;
    const found = await kit.sessionOf(req);
    const returnTo = safeReturnPath((req.query as Record<string, unknown>).return_to);
    if (found?.userId) return reply.redirect(returnTo ?? '/console', 303);
    const session = await kit.anonymous(req, reply, returnTo);
    const step = session.state.signIn;
    try {
      if (step?.step !== 'sso' || step.connectionId !== id) {
        const name = await services.ssoSignIn.usableName(id);
        return send(
          reply,
          200,
          'Sign in with your organisation',
          html`<p>Sign in through <strong>${name}</strong>, your organisation's identity provider.</p>
<form method="post" action="/sso/saml/${id}/login">${csrfField(session)}<button type="submit">Continue</button></form>
<p><a href="/login">Sign in another way</a></p>`,
        );
      }
      const idp = await services.ssoSignIn.start(id, session, step.email === '' ? null : step.email);
      // back at /login later (the IdP failed, the person changed their mind), the address is asked again
      await services.sessions.setState(session, { ...session.state, signIn: { step: 'email' } });
      return reply.redirect(idp, 303);
    } catch (err) {
      return refused(reply, err);
    }
  });

  scope.post('/sso/saml/:id/login', async (req, reply) => {
    const session = await kit.formSession(req, reply);
    if (!session) return reply;
    if (session.userId) return reply.redirect('/console', 303);
    const id = (req.params as { id: string }).id;
    try {
      await services.ssoSignIn.usableName(id);
    } catch (err) {
      return refused(reply, err);
    }
    await services.sessions.setState(session, { ...session.state, signIn: { step: 'sso', connectionId: id, email: '' } });
    // on to the IdP through GET /login (see its 'sso' step: a redirect from this POST to another
    // site would break form-action 'self')
    return reply.redirect('/login', 303);
  });

  scope.post(
    '/sso/saml/:id/acs',
    {
      bodyLimit: ACS_BODY_LIMIT,
      // a body over the limit is a page that names it; anything else goes to the scope's handler
      errorHandler: (err: FastifyError, _req, reply) => {
        if (err.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw err;
        return refused(reply, new SsoRefusal(tooLargeMessage(ACS_BODY_LIMIT / 1024), 413, `request body over ${ACS_BODY_LIMIT} bytes`));
      },
    },
    async (req, reply) => {
      const slot = acsThrottle.admit(addressPrefix(req.ip));
      if ('retryAfter' in slot) {
        reply.header('retry-after', String(slot.retryAfter));
        return send(
          reply,
          429,
          'Single sign-on did not work',
          html`<p class="error" role="alert">Too many sign-ins arrived from your network just now. Wait ${String(slot.retryAfter)} seconds, then start again.</p>
<p><a href="/login">Back to sign-in</a></p>`,
        );
      }
      try {
        const form = (req.body ?? {}) as Record<string, unknown>;
        const ticket = await services.ssoSignIn.acs((req.params as { id: string }).id, form);
        // a top-level GET: the browser's SameSite=Lax session cookie comes with it
        return reply.redirect(`/sso/saml/finish?ticket=${ticket}`, 303);
      } catch (err) {
        return refused(reply, err);
      } finally {
        slot.release();
      }
    },
  );

  scope.get('/sso/saml/finish', async (req, reply) => {
    try {
      const session = await kit.sessionOf(req);
      const issued = await services.ssoSignIn.finish((req.query as Record<string, unknown>).ticket, session);
      setSessionCookie(reply, cookie, issued.secret);
      return reply.redirect(session?.state.returnTo ?? '/console', 303);
    } catch (err) {
      return refused(reply, err);
    }
  });
}
