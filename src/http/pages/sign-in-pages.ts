// GET/POST /login (one form per step: e-mail, password, code, enrolment), GET /login/setup (a
// set-up link), POST /logout, the stylesheet and the copy script; and the page families
// registered with this scope's kit: the device pages (device-pages.ts) and the credentials
// console at /console, where a signed-in person lands (console-pages.ts).
// The step comes from the session, never from the form; every form carries the session's CSRF
// token; every page is no-store and framed by nobody (docs/users.md, "Sign-in").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { Session } from '../../sessions/model.js';
import { csrfMatches, safeReturnPath } from '../../sessions/model.js';
import type { Services } from '../../services.js';
import { RECOGNISED_DAYS } from '../../signin/recognised-browser.js';
import type { Attempt, Outcome } from '../../signin/service.js';
import { html, type Html, page, type PageOptions, STYLESHEET, STYLESHEET_PATH, trusted } from './html.js';
import { registerConsolePages } from './console-pages.js';
import { COPY_SCRIPT, COPY_SCRIPT_PATH } from './copy-script.js';
import { registerDevicePages } from './device-pages.js';
import { csrfField } from './page-kit.js';
import { registerSsoPages } from './sso-pages.js';
import { browserCookieSettings, clearSessionCookie, cookieSettings, readCookie, setBrowserCookie, setSessionCookie } from './session-cookie.js';

export interface SignInPageDeps {
  services: Services;
  baseUrl: string;
  vendor: string;
}

const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
/** The CSP of a page that loads this service's scripts (only the pages that show a secret, a
 *  client's or the recovery codes, for their copy and download buttons): scripts from this origin as files (nosniff: only as JavaScript), nothing
 *  inline, and no string ever reaching a DOM sink that would run it. */
const CSP_WITH_SCRIPTS = `${CSP}; script-src 'self'; require-trusted-types-for 'script'`;
const FORM_LIMIT = 16 * 1024;

/** The file the recovery codes download as: named after the vendor, in characters any file system takes. */
const recoveryCodesFile = (vendor: string) =>
  `${
    vendor
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'gatehouse'
  }-recovery-codes.txt`;

type Form = Record<string, string>;

export async function registerSignInPages(app: FastifyInstance, deps: SignInPageDeps): Promise<void> {
  const { services } = deps;
  const cookie = cookieSettings(deps.baseUrl);
  const browserCookie = browserCookieSettings(deps.baseUrl);
  const codesFile = recoveryCodesFile(deps.vendor);
  /** who makes a sign-in attempt: the address, and the browser's recognition cookie */
  const attemptOf = (req: FastifyRequest): Attempt => ({ address: req.ip, browser: readCookie(req, browserCookie.name) });

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

    async function showStep(reply: FastifyReply, session: Session, status = 200, error?: string, notice?: string): Promise<FastifyReply> {
      const step = session.state.signIn ?? { step: 'email' as const };
      const csrf = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
      const problem = error ? html`<p class="error" role="alert">${error}</p>` : '';
      switch (step.step) {
        case 'password': {
          const device = session.state.signInFor?.deviceUserCode;
          return send(
            reply,
            status,
            'Enter your password',
            html`${problem}
<p>${device ? html`Sign in as <strong>${step.email}</strong> to approve <strong class="usercode-inline">${device}</strong>.` : html`Signing in as <strong>${step.email}</strong>.`}</p>
<form method="post" action="/login">${csrf}
<input type="email" name="username" value="${step.email}" autocomplete="username" hidden readonly>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Continue</button>
</form>
${
  session.state.signInFor
    ? html`<form method="post" action="/login/restart">${csrf}<input type="hidden" name="forget" value="1"><button class="link" type="submit">Not ${step.email}? Sign in with another account instead</button></form>`
    : html`<form method="post" action="/login/restart">${csrf}<button class="link" type="submit">Use another e-mail address</button></form>`
}`,
          );
        }
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
        case 'setup': {
          const email = (await services.signIn.setupEmail(session)) ?? '';
          return send(
            reply,
            status,
            'Choose your password',
            html`${problem}
<p>Setting up <strong>${email}</strong>.</p>
<form method="post" action="/login">${csrf}
<label for="username">Account</label>
<input id="username" name="username" type="email" autocomplete="username" value="${email}" readonly>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required autofocus aria-describedby="pw-hint">
<p id="pw-hint" class="hint">At least 12 characters. A few unrelated words make a good one.</p>
<label for="confirmation">The same password again</label>
<input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required>
<button type="submit">Continue</button>
</form>`,
          );
        }
        default:
          return send(
            reply,
            status,
            'Sign in',
            html`${problem}${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<form method="post" action="/login">${csrf}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" value="${session.state.signInFor?.email ?? ''}" required autofocus>
<button type="submit">Continue</button>
</form>${
              session.state.signInFor
                ? html`
<form method="post" action="/login/restart">${csrf}<input type="hidden" name="forget" value="1"><button class="link" type="submit">Sign in with another account instead</button></form>`
                : ''
            }`,
          );
      }
    }

    async function restart(reply: FastifyReply, session: Session, forgetAccount = false): Promise<FastifyReply> {
      await services.signIn.restart(session, forgetAccount);
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
    scope.get(COPY_SCRIPT_PATH, async (_req, reply) =>
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(COPY_SCRIPT),
    );

    scope.get('/login', async (req, reply) => {
      const found = await sessionOf(req);
      const returnTo = safeReturnPath((req.query as Record<string, unknown>).return_to);
      // signed in already: where this link asks to go, never where an earlier sign-in was going
      if (found?.userId) return reply.redirect(returnTo ?? '/console', 303);
      const session = await anonymous(req, reply, returnTo);
      const signedOut = (req.query as Record<string, unknown>).signed_out !== undefined;
      return showStep(reply, session, 200, undefined, signedOut ? 'You have signed out.' : undefined);
    });

    scope.post('/login', async (req, reply) => {
      const session = await formSession(req, reply);
      if (!session) return reply;
      const form = req.body as Form;
      const step = session.state.signIn?.step ?? 'email';
      let outcome: Outcome;
      if (step === 'email' || step === 'sso') outcome = await services.signIn.email(session, form.email ?? '');
      else if (step === 'password') outcome = await services.signIn.password(session, form.password ?? '', attemptOf(req));
      else if (step === 'totp') outcome = await services.signIn.secondFactor(session, form.code ?? '', attemptOf(req));
      else if (step === 'enrol') outcome = await services.signIn.confirmEnrolment(session, form.code ?? '', attemptOf(req));
      else outcome = await services.signIn.setPassword(session, form.password ?? '', form.confirmation ?? '');
      switch (outcome.kind) {
        case 'next':
          // a step that raised trust goes on under a new session id
          if (outcome.issued) setSessionCookie(reply, cookie, outcome.issued.secret);
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
          return showStep(reply, session, 429, outcome.message);
        case 'signedIn':
          setSessionCookie(reply, cookie, outcome.issued.secret);
          setBrowserCookie(reply, browserCookie, outcome.browser, RECOGNISED_DAYS * 86_400);
          if (!outcome.recoveryCodes) return reply.redirect(outcome.returnTo, 303);
          // shown once, in this answer: copy and download are done in the browser (copy-script.ts)
          return send(
            reply,
            200,
            'Save your recovery codes',
            html`
<p>If you lose your authenticator, each of these codes signs you in once, in place of a code from the app. Keep them somewhere safe, such as your password manager: they are shown only now.</p>
<ol class="codes" id="recovery-codes">${outcome.recoveryCodes.map((c) => html`<li>${c}</li>`)}</ol>
<div class="actions"><button type="button" class="secondary" data-copy="recovery-codes" hidden>Copy codes</button><button type="button" class="secondary" data-download="recovery-codes" data-filename="${codesFile}" data-heading="${`${deps.vendor} recovery codes. Each one signs you in once, in place of a code from your authenticator app.`}" hidden>Download as .txt</button></div>
<p id="recovery-codes-status" class="hint" role="status"></p>
<p><a class="button" href="${outcome.returnTo}">I have saved them: continue</a></p>`,
            { scripts: [COPY_SCRIPT_PATH] },
          );
      }
    });

    scope.post('/login/restart', async (req, reply) => {
      const session = await formSession(req, reply);
      if (!session) return reply;
      return restart(reply, session, (req.body as Form).forget === '1');
    });

    const linkDoesNotWork = (reply: FastifyReply) =>
      send(
        reply,
        400,
        'This link does not work',
        html`<p>The set-up link is not valid: it was already used, it expired, or it was copied incompletely. Ask your administrator for a new one.</p>`,
      );

    /** Signed in as someone while a set-up link for someone else was opened: ask first. */
    const confirmSetup = (reply: FastifyReply, session: Session, who: { signedInAs: string; setupFor: string }) =>
      send(
        reply,
        200,
        'Set up another account?',
        html`<p>You are signed in as <strong>${who.signedInAs}</strong>. This link sets up <strong>${who.setupFor}</strong>.</p>
<p>Continuing signs <strong>${who.signedInAs}</strong> out of this browser.</p>
<form method="post" action="/login/setup">${csrfField(session)}
<button type="submit">Sign out and set up ${who.setupFor}</button>
</form>
<form method="post" action="/login/setup/cancel">${csrfField(session)}
<button class="link" type="submit">Stay signed in as ${who.signedInAs}</button>
</form>`,
      );

    scope.get('/login/setup', async (req, reply) => {
      const token = (req.query as Record<string, unknown>).token;
      const current = await sessionOf(req);
      if (typeof token !== 'string') {
        // back here after the redirect below: a link waiting for the signed-in person's answer
        const pending = current ? await services.signIn.pendingSetup(current) : undefined;
        if (current && pending) return confirmSetup(reply, current, pending);
        return linkDoesNotWork(reply);
      }
      const opened = await services.signIn.openSetup(current, token);
      if (opened.kind === 'invalid') return linkDoesNotWork(reply);
      if (opened.kind === 'next') setSessionCookie(reply, cookie, opened.issued.secret);
      // the token leaves the address bar (and any later Referer) at once
      return reply.redirect(opened.kind === 'confirm' ? '/login/setup' : '/login', 303);
    });

    scope.post('/login/setup', async (req, reply) => {
      const session = await formSession(req, reply);
      if (!session) return reply;
      const opened = await services.signIn.confirmSetup(session);
      if (opened.kind !== 'next') {
        clearSessionCookie(reply, cookie);
        return linkDoesNotWork(reply);
      }
      setSessionCookie(reply, cookie, opened.issued.secret);
      return reply.redirect('/login', 303);
    });

    scope.post('/login/setup/cancel', async (req, reply) => {
      const session = await formSession(req, reply);
      if (!session) return reply;
      await services.signIn.cancelSetup(session);
      return reply.redirect('/console', 303);
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
      return reply.redirect('/login?signed_out=1', 303);
    });

    const kit = { services, send, sessionOf, anonymous, formSession };
    registerDevicePages(scope, kit);
    registerSsoPages(scope, kit, cookie);
    await registerConsolePages(scope, kit);
  });
}
