// GET/POST /device and GET/POST /device/approve: the browser's side of device login (RFC 8628;
// docs/users.md, "Device login"). The person confirms that the code matches the one at their CLI,
// signs in (as the account the CLI named: another account is refused), then approves or denies.
// routes.ts registers them, in the pages' scope.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ROLE_NAMES } from '../../access/roles.js';
import { canonicalUserCode, displayUserCode, isForAccount, USER_CODE_INPUT_MAX, wrongAccount } from '../../device/model.js';
import type { Refusal } from '../../errors.js';
import type { Session } from '../../sessions/model.js';
import { html } from './html.js';
import { csrfField, type Form, type PageKit } from './page-kit.js';

/** The handlers of the device pages (routes.ts registers them). */
export function devicePages(kit: PageKit) {
  const { services, send } = kit;
  const approvePath = (code: string) => `/device/approve?user_code=${code}`;

  /** Signed in, or else the anonymous session the forms need. */
  const anySession = async (req: FastifyRequest, reply: FastifyReply) => (await kit.sessionOf(req)) ?? (await kit.anonymous(reply, undefined));

  /** The code form; after a wrong code it keeps what was typed, to correct rather than retype. */
  function entryForm(reply: FastifyReply, session: Session, refused?: Refusal, typed = '') {
    if (refused) kit.noteRefusal(reply, refused, 'device login');
    return send(
      reply,
      refused?.status ?? 200,
      'Connect a device',
      html`${refused ? html`<p class="error" role="alert">${refused.message}</p>` : ''}
<form method="post" action="/device">${csrfField(session)}
<label for="user_code">Code shown at your command line or notebook</label>
<input id="user_code" name="user_code" type="text" autocomplete="off" autocapitalize="characters" placeholder="XXXX-XXXX" value="${typed}" maxlength="64" required autofocus>
<button type="submit">Continue</button>
</form>`,
    );
  }

  /** A refusal of the approval pages: too many wrong codes, a code gone, or another account
   *  signed in than the one the CLI named (who may sign out, then open the link again). */
  function approvalRefused(reply: FastifyReply, session: Session, refused: Refusal) {
    const title = refused.status === 429 ? 'Too many wrong codes' : refused.status === 403 ? 'Another account' : 'This code no longer works';
    const more =
      refused.status === 403
        ? html`<form method="post" action="/logout">${csrfField(session)}<button type="submit">Sign out</button></form>`
        : undefined;
    return kit.refusalPage(reply, refused, { title, flow: 'device login', ...(more ? { more } : {}) });
  }

  return {
    /** GET /device (?user_code=…: the code to check) */
    async entry(req: FastifyRequest, reply: FastifyReply) {
      const session = await anySession(req, reply);
      const code = canonicalUserCode(String((req.query as Record<string, unknown>).user_code ?? ''));
      if (code === undefined) return entryForm(reply, session);
      return send(
        reply,
        200,
        'Is this your code?',
        html`
<p>Check that your command line or notebook shows exactly this code:</p>
<p class="usercode"><strong>${displayUserCode(code)}</strong></p>
<form method="post" action="/device">${csrfField(session)}<input type="hidden" name="user_code" value="${code}">
<button type="submit">Yes, it matches</button>
</form>
<p class="hint">If it does not match, close this page: someone else may be trying to sign in as you.</p>`,
      );
    },

    /** POST /device: the code typed or confirmed; on to sign in as the account the CLI named */
    async enter(req: FastifyRequest, reply: FastifyReply) {
      const session = await kit.formSession(req, reply);
      if (!session) return reply;
      const raw = (req.body as Form).user_code ?? '';
      // over 64 characters is refused whole (device/model.ts), not cut to a code; kept cut for the form
      const typed = raw.slice(0, USER_CODE_INPUT_MAX);
      const entry = await services.device.enter(raw, req.ip);
      if (entry.kind === 'refused') return entryForm(reply, session, entry, typed);
      const next = approvePath(entry.authorization.userCode);
      if (session.userId) return reply.redirect(next, 303);
      // the sign-in is for the account the CLI named, and no other: its SSO connection's IdP if it
      // has one (which does the MFA), else its password, the address shown and fixed
      const deviceUserCode = displayUserCode(entry.authorization.userCode);
      await services.signIn.beginFor(session, { email: entry.authorization.loginHint, deviceUserCode }, next);
      return reply.redirect('/login', 303);
    },

    /** GET /device/approve?user_code=…: what the signed-in person is asked to approve */
    async approval(req: FastifyRequest, reply: FastifyReply) {
      const code = canonicalUserCode(String((req.query as Record<string, unknown>).user_code ?? ''));
      const session = await kit.sessionOf(req);
      if (!session?.userId) return reply.redirect(`/login?return_to=${encodeURIComponent(approvePath(code ?? ''))}`, 303);
      // looked up as typed codes are: wrong ones count against the address (no guessing from here)
      const entry = await services.device.enter(code ?? '', req.ip);
      if (entry.kind === 'refused') return approvalRefused(reply, session, entry);
      const pending = entry.authorization;
      const user = await services.signIn.signedInUser(session);
      if (!user) return reply.redirect('/login', 303);
      if (!isForAccount(pending, user.email)) return approvalRefused(reply, session, wrongAccount(user.email));
      // what is being given away, named (RFC 8628 section 5.4): the client, the tenant, the roles
      const principal = await services.signIn.signedInPrincipal(session);
      const home = principal ? await services.tenants.visibleTenant(principal, user.tenantId).catch(() => undefined) : undefined;
      const now = services.clock.now();
      const roles = [
        ...new Set(
          (principal?.assignments ?? []).filter((a) => a.expiresAt === null || a.expiresAt > now).map((a) => ROLE_NAMES[a.roleId] ?? 'a role'),
        ),
      ];
      return send(
        reply,
        200,
        'Approve this device?',
        html`
<p>A device (a command line or notebook, client <code>${pending.clientId}</code>) asks to act as <strong>${user.email}</strong> in tenant <strong>${home?.name ?? user.tenantId}</strong> (id ${user.tenantId}), with your roles (${roles.length > 0 ? roles.join(', ') : 'none yet'}), until its token expires.</p>
<p class="usercode">Code <strong>${displayUserCode(pending.userCode)}</strong></p>
<p>Requested ${pending.requestedFrom ? html`from <strong>${pending.requestedFrom}</strong> ` : ''}at ${pending.createdAt.toISOString().slice(11, 16)} UTC (${minutesAgo(pending.createdAt, services.clock.now())}).</p>
<div class="warning"><p>Approve only if you started this yourself, just now. If someone sent you this link, deny: they would act as you.</p></div>
<form method="post" action="/device/approve">${csrfField(session)}<input type="hidden" name="user_code" value="${pending.userCode}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="link">Deny</button>
</form>`,
      );
    },

    /** POST /device/approve: approve or deny */
    async decide(req: FastifyRequest, reply: FastifyReply) {
      const session = await kit.formSession(req, reply);
      if (!session) return reply;
      const form = req.body as Form;
      const user = await services.signIn.signedInUser(session);
      const code = canonicalUserCode(form.user_code ?? '');
      if (!user || code === undefined) return reply.redirect('/login', 303);
      const entry = await services.device.enter(code, req.ip);
      if (entry.kind === 'refused') return approvalRefused(reply, session, entry);
      const approve = form.decision === 'approve';
      const result = await services.device.decide(
        code,
        user,
        approve,
        entry.authorization,
        { id: req.id, address: req.ip },
        req.headers['user-agent'],
      );
      if (result.kind === 'refused') return approvalRefused(reply, session, result);
      return send(
        reply,
        200,
        approve ? 'Device approved' : 'Device denied',
        approve
          ? html`<p>You can return to your command line or notebook.</p>`
          : html`<p>The command line or notebook gets no access. You can close this page.</p>`,
      );
    },
  };
}

/** "just now", "1 minute ago", "7 minutes ago" */
function minutesAgo(then: Date, now: Date): string {
  const minutes = Math.max(0, Math.floor((now.getTime() - then.getTime()) / 60_000));
  return minutes === 0 ? 'just now' : minutes === 1 ? '1 minute ago' : `${minutes} minutes ago`;
}
