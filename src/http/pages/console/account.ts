// The signed-in person's own account (docs/users.md, "Console"): /console/account, in no tenant.
// They change their password (the current one first, the policy as at set-up: SignInService
// changePassword) and see their sessions, and end every other one (SessionService endOthers).
// Both changes write their audit events; a refusal shows the form again with its words.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { accountPage } from './account-views.js';
import { type ConsoleKit, formOf, text, type Viewer } from './kit.js';
import { ACCOUNT_PATH } from './paths.js';

export function accountPages(c: ConsoleKit) {
  const { services } = c;

  async function show(
    reply: FastifyReply,
    who: Viewer,
    status: number,
    extra: { notice?: string | undefined; passwordFailure?: { message: string } },
  ) {
    const sessions = await services.sessions.ofUser(who.session);
    return c.show(reply, status, accountPage({ session: who.session, email: who.email, sessions, ...extra }), { who });
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
      if (outcome.kind === 'refused') {
        c.noteRefusal(reply, outcome, 'password change');
        return show(reply, who, outcome.status, { passwordFailure: { message: outcome.message } });
      }
      await c.leaveNotice(who, 'Your password was changed. Use the new one from your next sign-in.');
      return reply.redirect(ACCOUNT_PATH, 303);
    },

    /** POST /console/account/sessions → SessionService.endOthers */
    async signOutEverywhere(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.poster(req, reply);
      if (!who) return reply;
      const ended = await services.sessions.endOthers(who.session, { id: who.principal.id, tenantId: who.principal.tenantId });
      await c.leaveNotice(who, ended === 1 ? 'You were signed out of 1 other session.' : `You were signed out of ${ended} other sessions.`);
      return reply.redirect(ACCOUNT_PATH, 303);
    },
  };
}
