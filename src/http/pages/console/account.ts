// The signed-in person's own account (docs/users.md, "Console"): /console/account, in no tenant.
// They change their password (the current one first, the policy as at set-up), replace their
// authenticator (a current code, then the new key shown as at sign-in set-up, confirmed by a
// code from it), get new recovery codes (a current code; shown once, in the answer), see their
// sessions and end every other one, add a passkey (a name, a current code, and the browser's
// answer: passkey-script.ts) and remove one (confirmed first): SignInService changePassword,
// beginReenrolment, confirmReenrolment, renewRecoveryCodes, passkeyRegistrationOptions,
// registerPasskey, passkeyOf, removePasskey; SessionService ofUser, endOthers. Each change writes its
// audit event; a refusal shows the form again with its words.
import type { FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import type { Refusal } from '../../../errors.js';
import type { TotpSecret } from '../../../users/totp.js';
import { COPY_SCRIPT_PATH } from '../copy-script.js';
import { recoveryCodesFile } from '../sign-in-pages.js';
import { PASSKEY_SCRIPT_PATH } from '../passkey-script.js';
import {
  accountPage,
  confirmEmailChangePage,
  emailChangeRequested,
  type FormFailure,
  recoveryCodesShown,
  reenrolPage,
  removePasskeyConfirmation,
  signInToConfirm,
} from './account-views.js';
import { type ConsoleKit, formOf, queryOf, text, type Viewer } from './kit.js';
import { ACCOUNT_PATH } from './paths.js';

export function accountPages(c: ConsoleKit) {
  const { services } = c;

  async function show(reply: FastifyReply, who: Viewer, status: number, extra: { notice?: string | undefined; failure?: FormFailure }) {
    const sessions = await services.sessions.ofUser(who.session);
    const passkeys = await services.signIn.passkeysOf(who.session);
    const passkeyOptions = await services.signIn.passkeyRegistrationOptions(who.session);
    const pendingEmail = await services.emailChange.pending(who.session);
    const view = accountPage({
      session: who.session,
      email: who.email,
      sessions,
      reenrolPending: who.session.state.reenrol !== undefined,
      passkeys,
      passkeyOptions,
      pendingEmail,
      ...extra,
    });
    return c.show(reply, status, view, { who, ...(passkeyOptions ? { scripts: [PASSKEY_SCRIPT_PATH] } : {}) });
  }

  /** A refusal of one of the page's forms: the page again, the words above that form. */
  function refused(reply: FastifyReply, who: Viewer, outcome: Refusal, form: FormFailure['form']) {
    c.noteRefusal(reply, outcome, `account ${form}`);
    return show(reply, who, outcome.status, { failure: { form, message: outcome.message } });
  }

  async function showReenrol(reply: FastifyReply, who: Viewer, secret: TotpSecret, status = 200, failure?: string) {
    const qrSvg = await QRCode.toString(secret.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    return c.show(reply, status, reenrolPage({ session: who.session, secret, qrSvg, failure }), { who });
  }

  return {
    /** GET /console/account */
    async account(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.viewer(req, reply);
      if (!who) return reply;
      return show(reply, who, 200, { notice: await c.takeNotice(who) });
    },

    /** POST /console/account/password → SignInService.changePassword */
    async changePassword(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const form = formOf(req);
      const outcome = await services.signIn.changePassword(
        who.session,
        { current: text(form.current) ?? '', password: text(form.password) ?? '', confirmation: text(form.confirmation) ?? '' },
        c.attemptOf(req),
      );
      if (outcome.kind === 'refused') return refused(reply, who, outcome, 'password');
      return c.done(
        reply,
        who,
        'Your password was changed, and every other session of yours was signed out. Use the new password from your next sign-in.',
        ACCOUNT_PATH,
      );
    },

    /** POST /console/account/authenticator → SignInService.beginReenrolment (the new key shown) */
    async beginReenrolment(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const outcome = await services.signIn.beginReenrolment(who.session, text(formOf(req).code) ?? '', c.attemptOf(req));
      if (outcome.kind === 'refused') return refused(reply, who, outcome, 'authenticator');
      return showReenrol(reply, who, outcome.secret);
    },

    /** GET /console/account/authenticator: the new key again while it waits for its first code */
    async pendingReenrolment(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.viewer(req, reply);
      if (!who) return reply;
      const secret = await services.signIn.pendingReenrolment(who.session);
      if (!secret) return reply.redirect(ACCOUNT_PATH, 303);
      return showReenrol(reply, who, secret);
    },

    /** POST /console/account/authenticator/confirm → SignInService.confirmReenrolment */
    async confirmReenrolment(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const outcome = await services.signIn.confirmReenrolment(who.session, text(formOf(req).code) ?? '', c.attemptOf(req));
      if (outcome.kind === 'refused') {
        c.noteRefusal(reply, outcome, 'account authenticator');
        const secret = await services.signIn.pendingReenrolment(who.session);
        if (!secret) return show(reply, who, outcome.status, { failure: { form: 'authenticator', message: outcome.message } });
        return showReenrol(reply, who, secret, outcome.status, outcome.message);
      }
      // the service took the pending key out of the session: the notice goes in beside what is left
      const { reenrol: _done, ...state } = who.session.state;
      return c.done(
        reply,
        { ...who, session: { ...who.session, state } },
        'Your authenticator was replaced, and every other session of yours was signed out: sign in with codes from the new one.',
        ACCOUNT_PATH,
      );
    },

    /** POST /console/account/recovery-codes → SignInService.renewRecoveryCodes (shown once) */
    async renewRecoveryCodes(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const outcome = await services.signIn.renewRecoveryCodes(who.session, text(formOf(req).code) ?? '', c.attemptOf(req));
      if (outcome.kind === 'refused') return refused(reply, who, outcome, 'recovery');
      const view = recoveryCodesShown({ codes: outcome.codes, filename: recoveryCodesFile(c.vendor), vendor: c.vendor });
      return c.show(reply, 200, view, { who, scripts: [COPY_SCRIPT_PATH] });
    },

    /** POST /console/account/passkeys → SignInService.registerPasskey */
    async addPasskey(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const form = formOf(req);
      const outcome = await services.signIn.registerPasskey(
        who.session,
        { name: text(form.name) ?? '', code: text(form.code) ?? '', response: text(form.response) ?? '' },
        c.attemptOf(req),
      );
      if (outcome.kind === 'refused') return refused(reply, who, outcome, 'passkey');
      return c.done(
        reply,
        who,
        `The passkey ${outcome.name} was added: use it after your password in place of a code, or to sign in without a password.`,
        ACCOUNT_PATH,
      );
    },

    /** GET /console/account/passkeys/remove?passkey=… : the removal's confirmation */
    async confirmPasskeyRemoval(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.viewer(req, reply);
      if (!who) return reply;
      const passkey = await services.signIn.passkeyOf(who.session, text(queryOf(req).passkey) ?? '');
      if (!passkey)
        return show(reply, who, 404, {
          failure: { form: 'passkey', message: 'You have no passkey with this id: it was removed already. Your passkeys are listed below.' },
        });
      return c.show(reply, 200, removePasskeyConfirmation({ session: who.session, passkey }), { who });
    },

    /** POST /console/account/passkeys/remove → SignInService.removePasskey */
    async removePasskey(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const outcome = await services.signIn.removePasskey(who.session, text(formOf(req).passkey) ?? '', c.attemptOf(req));
      if (outcome.kind === 'refused') return refused(reply, who, outcome, 'passkey');
      return c.done(reply, who, `The passkey ${outcome.name} was removed: it no longer signs you in.`, ACCOUNT_PATH);
    },

    /** POST /console/account/email → EmailChangeService.request (a current code; a link mailed to the new address) */
    async requestEmailChange(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const form = formOf(req);
      const outcome = await services.emailChange.request(
        who.session,
        { email: text(form.email) ?? '', code: text(form.code) ?? '' },
        c.attemptOf(req),
      );
      if (outcome.kind === 'refused') return refused(reply, who, outcome, 'email');
      return c.done(reply, who, emailChangeRequested(outcome.email), ACCOUNT_PATH);
    },

    /** GET /console/account/email/confirm?token=… : what the link does, and a button (EmailChangeService.preview) */
    async showEmailChange(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.viewerIfAny(req);
      // not signed in: no redirect that would carry the token into a sign-in's state
      if (!who) {
        const page = signInToConfirm();
        return c.sendBare(reply, 200, page.title, page.body);
      }
      const token = text(queryOf(req).token) ?? '';
      const preview = await services.emailChange.preview(who.session, token);
      if (preview.kind === 'refused') return refused(reply, who, preview, 'email');
      return c.show(reply, 200, confirmEmailChangePage({ session: who.session, email: who.email, newEmail: preview.email, token }), { who });
    },

    /** POST /console/account/email/confirm → EmailChangeService.confirm (signed in as the account that asked) */
    async confirmEmailChange(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const outcome = await services.emailChange.confirm(who.session, text(formOf(req).token) ?? '', c.attemptOf(req));
      if (outcome.kind === 'refused') return refused(reply, who, outcome, 'email');
      return c.done(reply, who, `Your e-mail address is now ${outcome.email}: sign in with it from now on.`, ACCOUNT_PATH);
    },

    /** POST /console/account/sessions → SessionService.endOthers */
    async signOutEverywhere(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const ended = await services.sessions.endOthers(who.session, { id: who.principal.id, tenantId: who.principal.tenantId });
      const notice = ended === 1 ? 'You were signed out of 1 other session.' : `You were signed out of ${ended} other sessions.`;
      return c.done(reply, who, notice, ACCOUNT_PATH);
    },
  };
}
