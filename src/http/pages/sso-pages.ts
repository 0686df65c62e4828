// The SAML service-provider endpoints of each SSO connection (docs/sso.md, "Sign-in"):
//   GET  /sso/saml/:id/metadata  this service's SP metadata for the connection
//   GET  /sso/saml/:id/login     begins a sign-in: the browser goes to the IdP (HTTP-Redirect)
//   POST /sso/saml/:id/login     the person chose the connection (the confirmation's button)
//   POST /sso/saml/:id/acs       the IdP's response (HTTP-POST), verified; the browser is sent on
//   GET  /sso/saml/finish        the browser that began the sign-in comes back with its cookie
// A test sign-in begun from the console (console/sso.ts) ends at the ACS: a page of what the IdP
// sent, and nobody signed in.
// routes.ts registers them, in the pages' scope. When a browser goes to an IdP is the sign-in
// service's decision (signin/service.ts: chooseSso, continueSso); the SAML work is
// sso/sign-in.ts's. A refusal is a page that says what happened and what to do; it never echoes
// the IdP's XML.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type Refusal, refusal } from '../../errors.js';
import { addressPrefix } from '../../oauth/address-prefix.js';
import { safeReturnPath } from '../../sessions/model.js';
import { AcsThrottle } from '../../sso/acs-throttle.js';
import { MAX_SAML_RESPONSE_BASE64 } from '../../sso/assertion-checks.js';
import { tooLargeMessage } from '../../sso/model.js';
import type { SignInDecision, TestSignInResult } from '../../sso/sign-in.js';
import { html } from './html.js';
import { csrfField, type PageKit } from './page-kit.js';
import { setSessionCookie } from './session-cookie.js';

/** The ACS body, refused (413) beyond this before it is read: the SAMLResponse field holds at most
 *  MAX_SAML_RESPONSE_BASE64 (128 KiB) of base64, which form encoding grows by about 6% (its '+'
 *  and '/' become three characters each), and RelayState is at most 80 bytes. */
export const ACS_BODY_LIMIT = MAX_SAML_RESPONSE_BASE64 + 64 * 1024;

/** The handlers of the SSO pages (routes.ts registers them). */
export function ssoPages(kit: PageKit) {
  const { services, send } = kit;
  // per process, in memory: the cost it bounds is this process's CPU (acs-throttle.ts)
  const acsThrottle = new AcsThrottle(() => services.clock.now().getTime());
  const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

  const refused = (reply: FastifyReply, r: Refusal) =>
    kit.refusalPage(reply, r, {
      title: 'Single sign-on did not work',
      more: html`<p><a href="/login">Back to sign-in</a></p>`,
      flow: 'SAML sign-in',
    });

  /** Which account a test's person would sign in as: the sign-in's own decision, in words. */
  const wouldBe = (d: SignInDecision) =>
    d.kind === 'linked'
      ? html`as <strong>${d.email}</strong>, the account they signed in as before`
      : d.kind === 'link'
        ? html`as the existing account <strong>${d.email}</strong>, linked to this connection at their first sign-in`
        : html`with a new account, created at their first sign-in (role Analyst)`;

  /** A test sign-in's result (begun from the console): who the IdP signed in and what it sent;
   *  nobody was signed in. */
  const testResult = (reply: FastifyReply, r: TestSignInResult) => {
    const names = Object.keys(r.attributes).sort();
    return send(
      reply,
      200,
      r.problems.length === 0 ? 'Test sign-in worked' : 'Test sign-in: not yet',
      html`${
        r.problems.length === 0
          ? html`<p class="notice" role="status">The identity provider signed in <strong>${r.nameId}</strong> through ${r.connectionName}, and this person would be signed in ${wouldBe(r.decision)}. Nobody was signed in by this test.</p>`
          : html`<div class="error" role="alert"><p>The identity provider signed in <strong>${r.nameId}</strong>, but this person would not be signed in:</p><ul>${r.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
      }
<h2>Attributes received</h2>
${
  names.length === 0
    ? html`<p>The identity provider sent no attributes besides the NameID.</p>`
    : html`<dl class="facts attributes">${names.map((n) => html`<dt>${n}</dt><dd>${r.attributes[n]!.join(', ')}</dd>`)}</dl>`
}
<p class="hint">You can close this tab.</p>`,
    );
  };

  return {
    /** GET /sso/saml/:id/metadata */
    async metadata(req: FastifyRequest, reply: FastifyReply) {
      const found = await services.ssoSignIn.metadata(idOf(req));
      if (found.kind === 'refused') return refused(reply, found);
      return reply.type('application/samlmetadata+xml; charset=utf-8').header('cache-control', 'public, max-age=300').send(found.xml);
    },

    /** GET /sso/saml/:id/login: on to the IdP if this browser asked for it, else a confirmation */
    async begin(req: FastifyRequest, reply: FastifyReply) {
      const id = idOf(req);
      const found = await kit.sessionOf(req);
      const returnTo = safeReturnPath((req.query as Record<string, unknown>).return_to);
      if (found?.userId) return reply.redirect(returnTo ?? '/console', 303);
      const session = await kit.anonymous(reply, found, returnTo);
      const next = await services.signIn.continueSso(session, id);
      if (next.kind === 'refused') return refused(reply, next);
      if (next.kind === 'idp') return reply.redirect(next.url, 303);
      return send(
        reply,
        200,
        'Sign in with your organisation',
        html`<p>Sign in through <strong>${next.name}</strong>, your organisation's identity provider.</p>
<form method="post" action="/sso/saml/${id}/login">${csrfField(session)}<button type="submit">Continue</button></form>
<p><a href="/login">Sign in another way</a></p>`,
      );
    },

    /** POST /sso/saml/:id/login: the person confirmed; on to the IdP through GET /login */
    async choose(req: FastifyRequest, reply: FastifyReply) {
      const session = await kit.formSession(req, reply);
      if (!session) return reply;
      if (session.userId) return reply.redirect('/console', 303);
      const chosen = await services.signIn.chooseSso(session, idOf(req));
      if (chosen.kind === 'refused') return refused(reply, chosen);
      // on to the IdP through GET /login (see its 'sso' step: a redirect from this POST to another
      // site would break form-action 'self')
      return reply.redirect('/login', 303);
    },

    /** The ACS route's own error handler: a body over its limit is a page that names the limit;
     *  anything else goes on to the scope's handler. */
    acsBodyTooLarge(err: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
      if (err.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw err;
      return refused(reply, refusal(413, tooLargeMessage(ACS_BODY_LIMIT / 1024), { reason: `request body over ${ACS_BODY_LIMIT} bytes` }));
    },

    /** POST /sso/saml/:id/acs: the IdP's response, verified; the browser goes on to finish */
    async acs(req: FastifyRequest, reply: FastifyReply) {
      const slot = acsThrottle.admit(addressPrefix(req.ip));
      if ('retryAfter' in slot) {
        return refused(
          reply,
          refusal(429, `Too many sign-ins arrived from your network just now. Wait ${slot.retryAfter} seconds, then start again.`, {
            retryAfter: slot.retryAfter,
          }),
        );
      }
      try {
        const accepted = await services.ssoSignIn.acs(idOf(req), (req.body ?? {}) as Record<string, unknown>, { id: req.id, address: req.ip });
        if (accepted.kind === 'refused') return refused(reply, accepted);
        if (accepted.kind === 'tested') return testResult(reply, accepted);
        // a top-level GET: the browser's SameSite=Lax session cookie comes with it
        return reply.redirect(`/sso/saml/finish?ticket=${accepted.ticket}`, 303);
      } finally {
        slot.release();
      }
    },

    /** GET /sso/saml/finish?ticket=…: the browser that began the sign-in is signed in */
    async finish(req: FastifyRequest, reply: FastifyReply) {
      const session = await kit.sessionOf(req);
      const done = await services.ssoSignIn.finish((req.query as Record<string, unknown>).ticket, session, { id: req.id, address: req.ip });
      if (done.kind === 'refused') return refused(reply, done);
      setSessionCookie(reply, kit.cookie, done.issued.secret);
      return reply.redirect(session?.state.returnTo ?? '/console', 303);
    },
  };
}
