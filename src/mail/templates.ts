// The messages the service sends, in plain text and HTML. Each template is a function of its data
// and the brand (the product's name, GATEHOUSE_VENDOR_NAME, and the tenant's name); every value
// interpolated into HTML is escaped. A new message is one more member of MailTemplate and one
// more case below. Security notices (docs/users.md "Notices") share one shape: what changed, when,
// from where if known, and what to do if it was not the person; they never hold a secret or a link
// that does anything.

export type MailTemplate =
  /** a new account's one-time set-up link (createUser, the console's invite, `gatehouse users create`) */
  | { template: 'invitation'; displayName: string; setupUrl: string; expiresAt: Date }
  /** an account's sign-in was reset: a new set-up link (resetUserSignIn) */
  | { template: 'sign_in_reset'; setupUrl: string; expiresAt: Date }
  /** a person asked that their address become this one: the link confirms it (the account page) */
  | { template: 'email_change'; confirmUrl: string; expiresAt: Date; currentEmail: string }
  /** a person asked for a password reset at /login/forgot: the one-time link (signin/service.ts) */
  | { template: 'password_reset'; resetUrl: string; expiresAt: Date }
  /** a reset was asked for an account that has no password: how it signs in instead */
  | { template: 'password_reset_unavailable'; reason: 'sso' | 'not_set_up' }
  /** a security notice: something about the account's sign-in changed */
  | Notice;

/** The security notices (docs/users.md "Notices"). `passkey_added` and `passkey_removed` are
 *  ready for the passkeys' use cases (queue them in the change's transaction, as the others). */
export type NoticeTemplate =
  | 'password_changed'
  | 'totp_changed'
  | 'recovery_codes_changed'
  | 'email_changed'
  | 'device_approved'
  | 'passkey_added'
  | 'passkey_removed'
  | 'sign_in_reset_by_operator';

/** Who made a change a notice reports. */
export type NoticeBy = 'self' | 'reset_link' | 'administrator' | 'operator';

export interface Notice {
  template: NoticeTemplate;
  at: Date;
  by: NoticeBy;
  /** the client address and user agent of the request that made the change, where known */
  address?: string | undefined;
  userAgent?: string | undefined;
  /** what the change is about, in words (never a secret): the new address, the device's client, the passkey's name */
  detail?: string | undefined;
}

const NOTICE_SUBJECTS: Record<NoticeTemplate, string> = {
  password_changed: 'Your password was changed',
  totp_changed: 'Your authenticator app was changed',
  recovery_codes_changed: 'Your recovery codes were replaced',
  email_changed: 'Your e-mail address was changed',
  device_approved: 'A device was signed in to your account',
  passkey_added: 'A passkey was added to your account',
  passkey_removed: 'A passkey was removed from your account',
  sign_in_reset_by_operator: 'Your sign-in was reset',
};

function noticeWhat(n: Notice): string {
  switch (n.template) {
    case 'password_changed':
      return n.by === 'reset_link'
        ? 'The password of your account was changed with a password reset link mailed to this address. Your other sessions were signed out; your authenticator app was not changed.'
        : 'The password of your account was changed. Your other sessions were signed out.';
    case 'totp_changed':
      return 'A new authenticator app was set up for your account: codes from any earlier one no longer work.';
    case 'recovery_codes_changed':
      return 'New recovery codes were made for your account: the earlier ones no longer work.';
    case 'email_changed':
      return `The e-mail address of your account was changed${n.detail ? ` to ${n.detail}` : ''}. Messages about the account now go there, and this address no longer signs in to it.`;
    case 'device_approved':
      return `A device login was approved for your account${n.detail ? ` (${n.detail})` : ''}: a command line or device now holds a token to act as you.`;
    case 'passkey_added':
      return `A passkey${n.detail ? ` (${n.detail})` : ''} was added to your account: it can now be used to sign in.`;
    case 'passkey_removed':
      return `A passkey${n.detail ? ` (${n.detail})` : ''} was removed from your account.`;
    case 'sign_in_reset_by_operator':
      return 'The sign-in of your account was reset: its password, authenticator app, recovery codes and passkeys were cleared, and its sessions were signed out. A new set-up link was given to the operator who did it, to pass on to you; it is not in this message.';
  }
}

function noticeBy(by: NoticeBy): string {
  switch (by) {
    case 'self':
      return 'It was done while signed in to your account.';
    case 'reset_link':
      return 'It was done with a password reset link.';
    case 'administrator':
      return 'It was done by an administrator of your organisation.';
    case 'operator':
      return 'It was done by an operator of the service, at its command line.';
  }
}

export type MailTemplateName = MailTemplate['template'];

export interface Brand {
  /** the product's name (GATEHOUSE_VENDOR_NAME) */
  product: string;
  /** the name of the tenant the message is about */
  tenantName: string;
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export function renderMail(m: MailTemplate, brand: Brand): RenderedMail {
  switch (m.template) {
    case 'invitation':
      return linkMail(brand, {
        subject: `You are invited to ${brand.tenantName} on ${brand.product}`,
        greeting: m.displayName === '' ? 'Hello,' : `Hello ${m.displayName},`,
        lead: `An administrator of ${brand.tenantName} created an account for you on ${brand.product}. Open this link to set your password and enrol an authenticator app:`,
        url: m.setupUrl,
        expiresAt: m.expiresAt,
        after:
          'Completing the set-up also confirms that this address is yours. If you did not expect this message, ignore it: nothing happens until the link is used.',
      });
    case 'sign_in_reset':
      return linkMail(brand, {
        subject: `Set up your sign-in to ${brand.tenantName} again`,
        greeting: 'Hello,',
        lead: `An administrator of ${brand.tenantName} reset your sign-in to ${brand.product}: your password and authenticator were cleared. Open this link to set them again:`,
        url: m.setupUrl,
        expiresAt: m.expiresAt,
        after: 'If you did not ask for this, tell your administrator.',
      });
    case 'email_change':
      return linkMail(brand, {
        subject: `Confirm your new e-mail address for ${brand.product}`,
        greeting: 'Hello,',
        lead: `Someone signed in to ${brand.tenantName} on ${brand.product} as ${m.currentEmail} asked to use this address from now on. Open this link, signed in as that account, to confirm it:`,
        url: m.confirmUrl,
        expiresAt: m.expiresAt,
        after: 'Until you do, nothing changes. If you did not ask for this, ignore this message.',
      });
    case 'password_reset':
      return linkMail(brand, {
        subject: `Reset your password for ${brand.tenantName}`,
        greeting: 'Hello,',
        lead: `Someone asked to reset the password of your account at ${brand.tenantName} on ${brand.product}. Open this link to choose a new one:`,
        url: m.resetUrl,
        expiresAt: m.expiresAt,
        after:
          'Your authenticator app stays as it is: the next sign-in still asks for its code. A newer request replaces this link, and any change of your password makes it stop working. If you did not ask for this, ignore this message: your password stays as it is.',
      });
    case 'password_reset_unavailable':
      return textMail(brand, `How you sign in to ${brand.tenantName}`, [
        'Hello,',
        `Someone asked to reset the password of your account at ${brand.tenantName} on ${brand.product}, but the account has no password to reset.`,
        m.reason === 'sso'
          ? "It signs in through your organisation's single sign-on: enter your address on the sign-in page and you are sent to your organisation's sign-in. For a forgotten password there, ask your organisation's IT support."
          : 'Its set-up was not finished (or was reset by an administrator): open the set-up link you were sent, or ask your administrator for a new one.',
        'If you did not ask for this, ignore this message: nothing changed.',
      ]);
    default:
      return noticeMail(m, brand);
  }
}

function noticeMail(n: Notice, brand: Brand): RenderedMail {
  const where = [n.address ? `from the address ${n.address}` : '', n.userAgent ? `with ${JSON.stringify(n.userAgent.slice(0, 200))}` : '']
    .filter(Boolean)
    .join(', ');
  return textMail(brand, `${NOTICE_SUBJECTS[n.template]} (${brand.tenantName})`, [
    'Hello,',
    `${noticeWhat(n)}`,
    `When: ${utc(n.at)}. ${noticeBy(n.by)}${where ? ` Request ${where}.` : ''}`,
    n.template === 'sign_in_reset_by_operator'
      ? `If you did not ask for this, tell your administrator of ${brand.tenantName} at once: until the set-up link is used, nobody signs in to the account.`
      : `If this was not you, someone else may be able to sign in as you: reset your password at the sign-in page ("Forgot your password?") and tell your administrator of ${brand.tenantName} at once.`,
  ]);
}

/** A message of paragraphs, no link. */
function textMail(brand: Brand, subject: string, paragraphs: string[]): RenderedMail {
  const text = [...paragraphs.flatMap((p) => [p, '']), `-- ${brand.product}`, ''].join('\n');
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family: sans-serif; line-height: 1.5">
${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
<p>&mdash; ${escapeHtml(brand.product)}</p>
</body></html>
`;
  return { subject, text, html };
}

function linkMail(brand: Brand, p: { subject: string; greeting: string; lead: string; url: string; expiresAt: Date; after: string }): RenderedMail {
  const until = `The link works once, until ${utc(p.expiresAt)}.`;
  const text = [p.greeting, '', p.lead, '', p.url, '', until, '', p.after, '', `-- ${brand.product}`, ''].join('\n');
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(p.subject)}</title></head>
<body style="font-family: sans-serif; line-height: 1.5">
<p>${escapeHtml(p.greeting)}</p>
<p>${escapeHtml(p.lead)}</p>
<p><a href="${escapeHtml(p.url)}">${escapeHtml(p.url)}</a></p>
<p>${escapeHtml(until)}</p>
<p>${escapeHtml(p.after)}</p>
<p>&mdash; ${escapeHtml(brand.product)}</p>
</body></html>
`;
  return { subject: p.subject, text, html };
}

function utc(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
