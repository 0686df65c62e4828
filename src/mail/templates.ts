// The messages the service sends, in plain text and HTML. Each template is a function of its data
// and the brand (the product's name, GATEHOUSE_VENDOR_NAME, and the tenant's name); every value
// interpolated into HTML is escaped. A new message (a password reset, a notice) is one more
// member of MailTemplate and one more case below.

export type MailTemplate =
  /** a new account's one-time set-up link (createUser, the console's invite, `gatehouse users create`) */
  | { template: 'invitation'; displayName: string; setupUrl: string; expiresAt: Date }
  /** an account's sign-in was reset: a new set-up link (resetUserSignIn) */
  | { template: 'sign_in_reset'; setupUrl: string; expiresAt: Date }
  /** a person asked that their address become this one: the link confirms it (the account page) */
  | { template: 'email_change'; confirmUrl: string; expiresAt: Date; currentEmail: string };

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
  }
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
