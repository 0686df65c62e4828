// GET/POST /login (one form per step: e-mail, password, code, enrolment), GET /login/setup (a
// set-up link), POST /logout, the stylesheet; and the page families registered with this scope's
// kit: the device pages (device-pages.ts) and the credentials console at /console, where a
// signed-in person lands (console-pages.ts).
// The step comes from the session, never from the form; every form carries the session's CSRF
// token; every page is no-store and framed by nobody (docs/users.md, "Sign-in").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { Session } from '../../sessions/model.js';
import { csrfMatches, safeReturnPath } from '../../sessions/model.js';
import type { Services } from '../../services.js';
import type { Outcome } from '../../signin/service.js';
import { html, type Html, page, type PageOptions, STYLESHEET, STYLESHEET_PATH, trusted } from './html.js';
import { registerConsolePages } from './console-pages.js';
import { registerDevicePages } from './device-pages.js';
import { registerSsoPages } from './sso-pages.js';
import { clearSessionCookie, cookieSettings, readCookie, setSessionCookie } from './session-cookie.js';

export interface SignInPageDeps {
  services: Services;
  baseUrl: string;
  vendor: string;
}

const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The CSP of a page that loads this service's scripts (only the pages that show a secret, for
 *  their copy button): scripts from this origin as files (nosniff: only as JavaScript), nothing
 *  inline, and no string ever reaching a DOM sink that would run it. */
const CSP_WITH_SCRIPTS = `${CSP}; script-src 'self'; require-trusted-types-for 'script'`;
const FORM_LIMIT = 16 * 1024;

type Form = Record<string, string>;

export async function registerSignInPages(app: FastifyInstance, deps: SignInPageDeps): Promise<void> {
  const { services } = deps;
  const cookie = cookieSettings(deps.baseUrl);

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => {
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
        .send(page(title, body, { vendor: deps.vendor, ...opts }));
    };

    // A failure the routes did not answer themselves (a body too large, a bug): a page, not JSON.
    // The console's own handler (console-pages.ts) answers its routes.
    scope.setErrorHandler(async (err, req, reply) => {
      const status = typeof (err as { statusCode?: unknown }).statusCode === 'number' ? (err as { statusCode: number }).statusCode : 500;
      if (status >= 500) {
        req.log.error({ err }, 'page failed');
        return send(
          reply,
          500,
          'Something went wrong',
          html`<p>This is our fault, not yours. Try again; if it keeps happening, tell your administrator this reference: <code>${req.id}</code>.</p>
<p><a href="/login">Back to sign-in</a></p>`,
        );
      }
      return send(
        reply,
        status,
        'This request could not be read',
        html`<p>${(err as Error).message}.</p><p><a href="/login">Back to sign-in</a></p>`,
      );
    });

    const sessionOf = (req: FastifyRequest) => services.sessions.find(readCookie(req, cookie.name));

    /** The anonymous session of a sign-in: the current one, or a new one (its cookie set). */
    async function anonymous(req: FastifyRequest, reply: FastifyReply, returnTo?: string): Promise<Session> {
      const found = await sessionOf(req);
      if (found && found.userId === null) {
        if (!returnTo || found.state.returnTo === returnTo) return found;
        const state = { ...found.state, returnTo };
        await services.sessions.setState(found, state);
        return { ...found, state };
      }
      const { secret, session } = await services.sessions.start({ signIn: { step: 'email' }, ...(returnTo ? { returnTo } : {}) });
      setSessionCookie(reply, cookie, secret);
      return session;
    }

    async function showStep(reply: FastifyReply, session: Session, status = 200, error?: string): Promise<FastifyReply> {
      const step = session.state.signIn ?? { step: 'email' as const };
      const csrf = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
      const problem = error ? html`<p class="error" role="alert">${error}</p>` : '';
      switch (step.step) {
        case 'password':
          return send(
            reply,
            status,
            'Enter your password',
            html`${problem}
<p>Signing in as <strong>${step.email}</strong>.</p>
<form method="post" action="/login">${csrf}
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Continue</button>
</form>
<form method="post" action="/login/restart">${csrf}<button class="link" type="submit">Use another e-mail address</button></form>`,
          );
        case 'totp':
          return send(
            reply,
            status,
            'Enter your code',
            html`${problem}
<form method="post" action="/login">${csrf}
<label for="code">Code from your authenticator app</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus>
<p class="hint">Lost your authenticator? Enter one of your recovery codes instead.</p>
<button type="submit">Sign in</button>
</form>`,
          );
        case 'enrol': {
          const secret = await services.signIn.enrolment(session);
          if (!secret) return restart(reply, session);
          const svg = await QRCode.toString(secret.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
          return send(
            reply,
            status,
            'Set up your authenticator',
            html`${problem}
<p>Scan this code with an authenticator app (such as Google Authenticator, Microsoft Authenticator or 1Password), or type the key below into it.</p>
<div class="qr" role="img" aria-label="QR code of your authenticator key">${trusted(svg)}</div>
<p>Key: <code>${secret.base32.replace(/(.{4})/g, '$1 ').trim()}</code></p>
<form method="post" action="/login">${csrf}
<label for="code">Code the app now shows</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus>
<button type="submit">Confirm</button>
</form>`,
          );
        }
        case 'sso':
          // Reached by a redirect from a form (the address typed, a device code confirmed); the
          // browser goes on to the IdP from here, by itself: a redirect straight from the form's
          // POST to another site would break the pages' CSP (form-action 'self' covers redirects)
          return send(
            reply,
            status,
            'Sign in with your organisation',
            html`${problem}
<p>${step.email ? html`<strong>${step.email}</strong> signs in` : 'You sign in'} through your organisation's identity provider.</p>
<p><a class="button" href="/sso/saml/${step.connectionId}/login">Continue to your organisation's sign-in</a></p>
<form method="post" action="/login/restart">${csrf}<button class="link" type="submit">Use another e-mail address</button></form>`,
            error ? {} : { refreshTo: `/sso/saml/${step.connectionId}/login` },
          );
        case 'setup':
          return send(
            reply,
            status,
            'Choose your password',
            html`${problem}
<form method="post" action="/login">${csrf}
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required autofocus aria-describedby="pw-hint">
<p id="pw-hint" class="hint">At least 12 characters. A few unrelated words make a good one.</p>
<label for="confirmation">The same password again</label>
<input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required>
<button type="submit">Continue</button>
</form>`,
          );
        default:
          return send(
            reply,
            status,
            'Sign in',
            html`${problem}
<form method="post" action="/login">${csrf}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus>
<button type="submit">Continue</button>
</form>`,
          );
      }
    }

    async function restart(reply: FastifyReply, session: Session): Promise<FastifyReply> {
      await services.sessions.setState(session, { ...session.state, signIn: { step: 'email' } });
      return reply.redirect('/login', 303);
    }

    /** The session a form was posted in, if its CSRF token is the session's; else the refusal was sent. */
    async function formSession(req: FastifyRequest, reply: FastifyReply): Promise<Session | undefined> {
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
    }

    scope.get(STYLESHEET_PATH, async (_req, reply) =>
      reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET),
    );

    scope.get('/login', async (req, reply) => {
      const found = await sessionOf(req);
      const returnTo = safeReturnPath((req.query as Record<string, unknown>).return_to);
      // signed in already: where this link asks to go, never where an earlier sign-in was going
      if (found?.userId) return reply.redirect(returnTo ?? '/console', 303);
      const session = await anonymous(req, reply, returnTo);
      return showStep(reply, session);
    });

    scope.post('/login', async (req, reply) => {
      const session = await formSession(req, reply);
      if (!session) return reply;
      const form = req.body as Form;
      const step = session.state.signIn?.step ?? 'email';
      let outcome: Outcome;
      if (step === 'email' || step === 'sso') outcome = await services.signIn.email(session, form.email ?? '');
      else if (step === 'password') outcome = await services.signIn.password(session, form.password ?? '', req.ip);
      else if (step === 'totp') outcome = await services.signIn.secondFactor(session, form.code ?? '', req.ip);
      else if (step === 'enrol') outcome = await services.signIn.confirmEnrolment(session, form.code ?? '', req.ip);
      else outcome = await services.signIn.setPassword(session, form.password ?? '', form.confirmation ?? '');
      switch (outcome.kind) {
        case 'next':
          return reply.redirect('/login', 303);
        case 'sso':
          // on to the IdP through GET /login (see its 'sso' step)
          return reply.redirect('/login', 303);
        case 'restart':
          return restart(reply, session);
        case 'failed':
          return showStep(reply, (await sessionOf(req)) ?? session, 400, outcome.message);
        case 'wait':
          reply.header('retry-after', String(outcome.seconds));
          return showStep(reply, session, 429, `Too many attempts. Try again in ${outcome.seconds} seconds.`);
        case 'signedIn':
          setSessionCookie(reply, cookie, outcome.issued.secret);
          if (!outcome.recoveryCodes) return reply.redirect(outcome.returnTo, 303);
          return send(
            reply,
            200,
            'Save your recovery codes',
            html`
<p>If you lose your authenticator, each of these codes signs you in once. Keep them somewhere safe: they are shown only now.</p>
<ol class="codes">${outcome.recoveryCodes.map((c) => html`<li>${c}</li>`)}</ol>
<p><a href="${outcome.returnTo}">I have saved them: continue</a></p>`,
          );
      }
    });

    scope.post('/login/restart', async (req, reply) => {
      const session = await formSession(req, reply);
      if (!session) return reply;
      return restart(reply, session);
    });

    scope.get('/login/setup', async (req, reply) => {
      const token = (req.query as Record<string, unknown>).token;
      const { secret, session } = await services.sessions.start({ signIn: { step: 'email' } });
      const opened = typeof token === 'string' ? await services.signIn.openSetup(session, token) : undefined;
      if (!opened) {
        await services.sessions.end(session);
        return send(
          reply,
          400,
          'This link does not work',
          html`<p>The set-up link is not valid: it was already used, it expired, or it was copied incompletely. Ask your administrator for a new one.</p>`,
        );
      }
      setSessionCookie(reply, cookie, secret);
      // the token leaves the address bar (and any later Referer) at once
      return reply.redirect('/login', 303);
    });

    scope.post('/logout', async (req, reply) => {
      // a session that already ended (idle, expired): signing out just clears the cookie
      if (!(await sessionOf(req))) {
        clearSessionCookie(reply, cookie);
        return reply.redirect('/login', 303);
      }
      const session = await formSession(req, reply);
      if (!session) return reply;
      await services.sessions.end(session);
      clearSessionCookie(reply, cookie);
      return reply.redirect('/login', 303);
    });

    const kit = { services, send, sessionOf, anonymous, formSession };
    registerDevicePages(scope, kit);
    registerSsoPages(scope, kit, cookie);
    await registerConsolePages(scope, kit);
  });
}
