// The sign-in pages (docs/users.md, "Sign-in"): GET/POST /login (one form per step: e-mail,
// password, code, enrolment, new password, reset password; the SSO step sends the browser on to
// its IdP), POST /login/restart, GET/POST /login/setup (a set-up link) and its cancel, GET/POST
// /login/forgot (a reset link asked for), GET /login/reset (a reset link opened), POST /logout.
// routes.ts registers them, in the pages' scope (page-scope.ts).
// The step comes from the session, never from the form, and only the sign-in service
// (signin/service.ts) writes it: a page shows the step, posts the form to `submit` and shows what
// it answers. Every form carries the session's CSRF token. The e-mail, password and code steps
// carry a passkey button too (passkey-script.ts; POST /login/passkey), when the service gives
// options for it: without the script it stays hidden and nothing else changes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { Session } from '../../sessions/model.js';
import { safeReturnPath } from '../../sessions/model.js';
import { RECOGNISED_DAYS } from '../../signin/recognised-browser.js';
import { CLAIMED_ELSEWHERE } from '../../signin/model.js';
import { COPY_SCRIPT_PATH } from './copy-script.js';
import type { Outcome } from '../../signin/service.js';
import { type Html, html, type PageOptions, trusted } from './html.js';
import { csrfField, type Form, type PageKit } from './page-kit.js';
import { PASSKEY_SCRIPT_PATH } from './passkey-script.js';
import { clearSessionCookie, setBrowserCookie, setSessionCookie } from './session-cookie.js';

/** The file the recovery codes download as: named after the vendor, in characters any file system takes. */
export const recoveryCodesFile = (vendor: string) =>
  `${
    vendor
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'gatehouse'
  }-recovery-codes.txt`;

/** The handlers of the sign-in pages (routes.ts registers them). */
export function signInPages(kit: PageKit) {
  const { services, send, sessionOf, formSession } = kit;
  const codesFile = recoveryCodesFile(kit.vendor);

  /** The passkey button of the step the session is at, if the service offers one there (its
   *  options, with a challenge kept in the session), and the page options that load its script. */
  async function passkeyButton(session: Session, label: string): Promise<{ form: Html | ''; opts: PageOptions }> {
    const options = await services.signIn.passkeySignInOptions(session);
    if (!options) return { form: '', opts: {} };
    return {
      form: html`<form class="passkey" method="post" action="/login/passkey" data-passkey="get" data-passkey-options="${JSON.stringify(options)}" hidden>${csrfField(session)}
<input type="hidden" name="response">
<button type="submit" class="secondary">${label}</button>
<p class="hint" role="status" data-passkey-status></p>
</form>`,
      opts: { scripts: [PASSKEY_SCRIPT_PATH] },
    };
  }

  async function showStep(reply: FastifyReply, session: Session, status = 200, error?: string, notice?: string): Promise<FastifyReply> {
    const step = session.state.signIn ?? { step: 'email' as const };
    const csrf = csrfField(session);
    const problem = error ? html`<p class="error" role="alert">${error}</p>` : '';
    switch (step.step) {
      case 'password': {
        const device = session.state.signInFor?.deviceUserCode;
        const passkey = await passkeyButton(session, 'Sign in with a passkey instead');
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
<p><a href="/login/forgot">Forgot your password?</a></p>
${
  session.state.signInFor
    ? html`<form method="post" action="/login/restart">${csrf}<input type="hidden" name="forget" value="1"><button class="link" type="submit">Not ${step.email}? Sign in with another account instead</button></form>`
    : html`<form method="post" action="/login/restart">${csrf}<button class="link" type="submit">Use another e-mail address</button></form>`
}${passkey.form}`,
          passkey.opts,
        );
      }
      case 'totp': {
        const passkey = await passkeyButton(session, 'Use your passkey instead');
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
</form>${passkey.form}`,
          passkey.opts,
        );
      }
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
${newPasswordForm(csrf, email, 'Continue')}`,
        );
      }
      case 'reset': {
        const email = await services.signIn.resetEmail(session);
        if (email === undefined) return linkGone(reply, session);
        return send(
          reply,
          status,
          'Choose a new password',
          html`${problem}
<p>Choosing a new password for <strong>${email}</strong>.</p>
<p class="hint">Your authenticator app stays as it is: after this, sign in with the new password and a code from the app (or a recovery code). Every session of this account is signed out.</p>
${newPasswordForm(csrf, email, 'Set the new password')}`,
        );
      }
      default: {
        const passkey = await passkeyButton(session, 'Sign in with a passkey');
        return send(
          reply,
          status,
          'Sign in',
          html`${problem}${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
<form method="post" action="/login">${csrf}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" value="${session.state.signInFor?.email ?? ''}" required autofocus>
<button type="submit">Continue</button>
</form>
<p><a href="/login/forgot">Forgot your password?</a></p>${
            session.state.signInFor
              ? html`
<form method="post" action="/login/restart">${csrf}<input type="hidden" name="forget" value="1"><button class="link" type="submit">Sign in with another account instead</button></form>`
              : ''
          }${passkey.form}`,
          passkey.opts,
        );
      }
    }
  }

  async function restart(reply: FastifyReply, session: Session, forgetAccount = false): Promise<FastifyReply> {
    await services.signIn.restart(session, forgetAccount);
    return reply.redirect('/login', 303);
  }

  /** Shows what the service answered to a posted sign-in form (POST /login, POST /login/passkey). */
  async function answer(req: FastifyRequest, reply: FastifyReply, session: Session, outcome: Outcome): Promise<FastifyReply> {
    switch (outcome.kind) {
      case 'next':
        // a step that raised trust goes on under a new session id
        if (outcome.issued) setSessionCookie(reply, kit.cookie, outcome.issued.secret);
        return reply.redirect('/login', 303);
      case 'sso':
        // on to the IdP through GET /login (see its 'sso' step)
        return reply.redirect('/login', 303);
      case 'restart':
        return restart(reply, session);
      case 'passwordReset':
        return reply.redirect('/login?password_reset=1', 303);
      case 'refused':
        kit.noteRefusal(reply, outcome);
        // the session as it is now (a refused step may have moved it on)
        return showStep(reply, (await sessionOf(req)) ?? session, outcome.status, outcome.message);
      case 'signedIn':
        setSessionCookie(reply, kit.cookie, outcome.issued.secret);
        setBrowserCookie(reply, kit.browserCookie, outcome.browser, RECOGNISED_DAYS * 86_400);
        if (!outcome.recoveryCodes) return reply.redirect(outcome.returnTo, 303);
        // shown once, in this answer: copy and download are done in the browser (copy-script.ts)
        return send(
          reply,
          200,
          'Save your recovery codes',
          html`
<p>If you lose your authenticator, each of these codes signs you in once, in place of a code from the app. Keep them somewhere safe, such as your password manager: they are shown only now.</p>
<ol class="codes" id="recovery-codes">${outcome.recoveryCodes.map((c) => html`<li>${c}</li>`)}</ol>
<div class="actions"><button type="button" class="secondary" data-copy="recovery-codes" hidden>Copy codes</button><button type="button" class="secondary" data-download="recovery-codes" data-filename="${codesFile}" data-heading="${`${kit.vendor} recovery codes. Each one signs you in once, in place of a code from your authenticator app.`}" hidden>Download as .txt</button></div>
<p id="recovery-codes-status" class="hint" role="status"></p>
<p><a class="button" href="${outcome.returnTo}">I have saved them: continue</a></p>`,
          { scripts: [COPY_SCRIPT_PATH] },
        );
    }
  }

  /** The reset link of this session stopped holding (used elsewhere, replaced, the password changed). */
  async function linkGone(reply: FastifyReply, session: Session): Promise<FastifyReply> {
    await services.signIn.restart(session);
    return resetLinkDoesNotWork(reply, 400);
  }

  const resetLinkDoesNotWork = (reply: FastifyReply, status: number) =>
    send(
      reply,
      status,
      'This link does not work',
      html`<p>This password reset link is not valid: it was already used, it expired, a newer one replaced it, the password was changed since, or it was copied incompletely.</p>
<p><a class="button" href="/login/forgot">Ask for a new link</a></p>`,
    );

  /** The form asking for the address (GET /login/forgot), and the same form after a refusal. */
  const forgotForm = (reply: FastifyReply, session: Session, status = 200, error?: string, email = '') =>
    send(
      reply,
      status,
      'Reset your password',
      html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<p>Enter the address you sign in with. If it has an account that signs in with a password, a link to choose a new one is mailed to it.</p>
<form method="post" action="/login/forgot">${csrfField(session)}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" value="${email}" required autofocus>
<button type="submit">Send a reset link</button>
</form>
<p><a href="/login">Back to sign-in</a></p>`,
    );

  const linkDoesNotWork = (reply: FastifyReply) =>
    send(
      reply,
      400,
      'This link does not work',
      html`<p>The set-up link is not valid: it was already used, it expired, or it was copied incompletely. Ask your administrator for a new one.</p>`,
    );

  /** The link's account gave way: another account proved the address first (docs/users.md). */
  const linkClaimed = (reply: FastifyReply) => send(reply, 400, 'This link does not work', html`<p>${CLAIMED_ELSEWHERE}</p>`);

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

  return {
    /** GET /login: the form of the step reached (a new anonymous session if there is none) */
    async form(req: FastifyRequest, reply: FastifyReply) {
      const found = await sessionOf(req);
      const returnTo = safeReturnPath((req.query as Record<string, unknown>).return_to);
      // signed in already: where this link asks to go, never where an earlier sign-in was going
      if (found?.userId) return reply.redirect(returnTo ?? '/console', 303);
      const session = await kit.anonymous(reply, found, returnTo);
      const query = req.query as Record<string, unknown>;
      const notice =
        query.password_reset !== undefined
          ? 'Your new password is set, and every session of the account was signed out. Sign in with it: your authenticator app’s code is still asked.'
          : query.signed_out !== undefined
            ? 'You have signed out.'
            : undefined;
      return showStep(reply, session, 200, undefined, notice);
    },

    /** POST /login: the answer to the step the session is at */
    async submit(req: FastifyRequest, reply: FastifyReply) {
      const session = await formSession(req, reply);
      if (!session) return reply;
      return answer(req, reply, session, await services.signIn.submit(session, req.body as Form, kit.attemptOf(req)));
    },

    /** POST /login/passkey: a passkey's answer at the step the session is at (the code step: in
     *  place of a code; the e-mail or password step: without a password) */
    async passkey(req: FastifyRequest, reply: FastifyReply) {
      const session = await formSession(req, reply);
      if (!session) return reply;
      return answer(req, reply, session, await services.signIn.passkey(session, (req.body as Form).response ?? '', kit.attemptOf(req)));
    },

    /** POST /login/restart: back to the e-mail step (`forget=1`: not only for the account named) */
    async restart(req: FastifyRequest, reply: FastifyReply) {
      const session = await formSession(req, reply);
      if (!session) return reply;
      return restart(reply, session, (req.body as Form).forget === '1');
    },

    /** GET /login/setup?token=…: a set-up link opened (then, without the token, its confirmation) */
    async openSetup(req: FastifyRequest, reply: FastifyReply) {
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
      if (opened.kind === 'claimed') return linkClaimed(reply);
      if (opened.kind === 'next') setSessionCookie(reply, kit.cookie, opened.issued.secret);
      // the token leaves the address bar (and any later Referer) at once
      return reply.redirect(opened.kind === 'confirm' ? '/login/setup' : '/login', 303);
    },

    /** POST /login/setup: the signed-in person signs out and sets up the link's account */
    async confirmSetup(req: FastifyRequest, reply: FastifyReply) {
      const session = await formSession(req, reply);
      if (!session) return reply;
      const opened = await services.signIn.confirmSetup(session);
      if (opened.kind !== 'next') {
        clearSessionCookie(reply, kit.cookie);
        return opened.kind === 'claimed' ? linkClaimed(reply) : linkDoesNotWork(reply);
      }
      setSessionCookie(reply, kit.cookie, opened.issued.secret);
      return reply.redirect('/login', 303);
    },

    /** POST /login/setup/cancel: the signed-in person stays so; the link is forgotten */
    async cancelSetup(req: FastifyRequest, reply: FastifyReply) {
      const session = await formSession(req, reply);
      if (!session) return reply;
      await services.signIn.cancelSetup(session);
      return reply.redirect('/console', 303);
    },

    /** GET /login/forgot: the form asking for the address a reset link goes to */
    async forgotForm(req: FastifyRequest, reply: FastifyReply) {
      const found = await sessionOf(req);
      if (found?.userId) return reply.redirect('/console/account', 303);
      const session = await kit.anonymous(reply, found);
      return forgotForm(reply, session);
    },

    /** POST /login/forgot: the same answer whatever the address (signin/service.ts requestReset) */
    async requestReset(req: FastifyRequest, reply: FastifyReply) {
      const session = await formSession(req, reply);
      if (!session) return reply;
      const email = typeof (req.body as Form).email === 'string' ? String((req.body as Form).email) : '';
      const outcome = await services.signIn.requestReset(email, kit.attemptOf(req));
      if (outcome.kind === 'refused') {
        kit.noteRefusal(reply, outcome, 'password reset');
        return forgotForm(reply, session, outcome.status, outcome.message, email);
      }
      return send(
        reply,
        200,
        'Check your mail',
        html`<p>If an account signs in with a password at this address, a link to choose a new password is on its way to it. It works once, for a short time; a newer request replaces it.</p>
<p>Nothing arrives within a few minutes? Check the address and your spam folder, then ask again. An account that signs in through your organisation’s single sign-on has no password here: its mail says so.</p>
<p><a href="/login">Back to sign-in</a></p>`,
      );
    },

    /** GET /login/reset?token=…: a reset link opened; on to the reset step, the token out of the address bar */
    async openReset(req: FastifyRequest, reply: FastifyReply) {
      const token = (req.query as Record<string, unknown>).token;
      const opened = await services.signIn.openReset(await sessionOf(req), typeof token === 'string' ? token : '');
      if (opened.kind === 'invalid') return resetLinkDoesNotWork(reply, 400);
      if (opened.kind === 'signedIn')
        return send(
          reply,
          409,
          'Sign out first',
          html`<p>You are signed in as <strong>${opened.signedInAs}</strong> in this browser. Sign out, then open the reset link again (it still works).</p>
<form method="post" action="/logout">${csrfField((await sessionOf(req))!)}<button type="submit">Sign out</button></form>`,
        );
      setSessionCookie(reply, kit.cookie, opened.issued.secret);
      return reply.redirect('/login', 303);
    },

    /** POST /logout */
    async logout(req: FastifyRequest, reply: FastifyReply) {
      // a session that already ended (idle, expired): signing out just clears the cookie
      if (!(await sessionOf(req))) {
        clearSessionCookie(reply, kit.cookie);
        return reply.redirect('/login', 303);
      }
      const session = await formSession(req, reply);
      if (!session) return reply;
      await services.sessions.end(session);
      clearSessionCookie(reply, kit.cookie);
      return reply.redirect('/login?signed_out=1', 303);
    },
  };
}

/** The form of a first or new password (set-up and reset links): the account named for password
 *  managers, the password twice. */
function newPasswordForm(csrf: ReturnType<typeof csrfField>, email: string, button: string) {
  return html`<form method="post" action="/login">${csrf}
<label for="username">Account</label>
<input id="username" name="username" type="email" autocomplete="username" value="${email}" readonly>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="12" required autofocus aria-describedby="pw-hint">
<p id="pw-hint" class="hint">At least 12 characters. A few unrelated words make a good one.</p>
<label for="confirmation">The same password again</label>
<input id="confirmation" name="confirmation" type="password" autocomplete="new-password" required>
<button type="submit">${button}</button>
</form>`;
}
