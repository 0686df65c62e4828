// The console's one translation of a failure into words for a person: what went wrong, under a
// title, and what to do about it. The use cases speak to API callers ("secret is not the current
// secret of this client", "Existing client in tenant"); the failures a person meets in the console
// are reworded here, once, by their code and the field or message that tells them apart, and
// anything else keeps the use case's message under its code's general words. The status is the
// error code's (errors.ts): 400, 403, 404, 409, 429; anything unexpected is 500 and says only that.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../../../errors.js';
import { mapError } from '../../error-handler.js';

export interface Problem {
  status: number;
  code: ErrorCode;
  title: string;
  /** what went wrong */
  message: string;
  /** what to do */
  advice: string;
  /** headers the answer carries (Retry-After) */
  headers: Record<string, string>;
}

/** What the page that failed was about, when it is known: some words name it. */
export interface ProblemContext {
  tenant?: { id: string; name: string } | undefined;
}

interface Words {
  title: string;
  advice: string;
}

/** The words of a code, for a failure no rule below rewords (its message is the use case's). */
const WORDS: Record<ErrorCode, Words> = {
  BAD_USER_INPUT: { title: 'Check what you entered', advice: 'Correct it and send the form again.' },
  FORBIDDEN: { title: 'Not allowed', advice: 'Go back to your tenants, or ask an Administrator of this tenant for a role that allows it.' },
  RESTRICTED: { title: 'Not allowed', advice: 'Ask the vendor’s operators if this needs doing.' },
  NOT_FOUND: { title: 'Not found', advice: 'It may have been deleted meanwhile: go back to the list, which shows what exists now.' },
  CONFLICT: { title: 'Already exists', advice: 'Go back to the list, which shows what exists now.' },
  RATE_LIMITED: { title: 'Too many at once', advice: 'Wait for the time given, then try again.' },
  UNAUTHENTICATED: { title: 'Sign in again', advice: 'Your session has ended. Sign in again, then retry.' },
  UNAVAILABLE: { title: 'Unavailable for a moment', advice: 'The service cannot reach its database just now. Wait a few seconds, then try again.' },
  INTERNAL: {
    title: 'Something went wrong',
    advice: 'Reload the list to see what was done, then try again. If it keeps failing, give your operator the request id below.',
  },
};

/** A use case's failure as a person reads it: which one (code, and field or message), and its words. */
interface Rule {
  code: ErrorCode;
  /** the form field it names (details.field) */
  field?: string;
  /** its message; the groups are passed to the words */
  message?: RegExp;
  words(m: { groups: string[]; error: AppError; context: ProblemContext }): { message: string; advice: string; title?: string };
}

const inTenant = (c: ProblemContext) => (c.tenant ? c.tenant.name : 'this tenant');

const RULES: readonly Rule[] = [
  {
    code: 'BAD_USER_INPUT',
    field: 'secret',
    message: /not the current secret/,
    words: () => ({
      message: 'That is not the current secret of this client.',
      advice: 'Paste the secret the client uses now, exactly as it was shown (it begins with gatehouse_cs_).',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'secret',
    words: () => ({ message: 'Enter the current secret of this client.', advice: 'Holding it is what allows a rotation.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'gracePeriodSeconds',
    words: () => ({ message: 'Choose how long the old secret keeps working from the list.', advice: 'The longest is 7 days.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'name',
    message: /^name (.+)$/,
    words: ({ groups: [problem] }) => ({
      message: `The name ${problem}.`,
      advice: 'Enter a name that says what it is for, then send the form again.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'tenant',
    message: /^(.+) is not a tenant id$/,
    words: ({ groups: [given] }) => ({
      title: 'Check the address',
      message: `${given} is not a tenant id: tenant ids are numbers.`,
      advice: 'Check the address, or pick a tenant from your list.',
    }),
  },
  {
    code: 'CONFLICT',
    message: /^Existing client/,
    words: ({ context }) => ({
      title: 'The name is taken',
      message: `Another client of ${inTenant(context)} already has this name (names are compared ignoring case).`,
      advice: 'Choose another name.',
    }),
  },
  {
    code: 'FORBIDDEN',
    message: /^Your roles in this tenant do not allow: (.+)$/,
    words: ({ groups: [what], context }) => ({
      message: `Your roles in ${inTenant(context)} do not allow you to ${what}.`,
      advice: `Go back to the list, or ask an Administrator of ${inTenant(context)} for a role that allows it.`,
    }),
  },
  {
    code: 'FORBIDDEN',
    // the role as roleLabel names it: "Administrator (id …)"
    message: /^A client cannot be given a role its creator does not hold: (.+?)(?: \(id [^)]*\))?\. /,
    words: ({ groups: [role] }) => ({
      message: `You cannot give a credential the role ${role}: you may give only roles you could hold yourself.`,
      advice: 'Go back and choose among the roles the form offers.',
    }),
  },
  {
    code: 'FORBIDDEN',
    message: /^This client holds roles you could not give it \((.+)\)/,
    words: ({ groups: [roles] }) => ({
      message: `This client holds roles you could not give it yourself (${roles}), so its new secret cannot go to you.`,
      advice: 'Delete the client instead, which stops its secrets too, or ask an Administrator of the tenant to force the rotation.',
    }),
  },
  {
    code: 'NOT_FOUND',
    message: /^Client not found$/,
    words: ({ context }) => ({
      title: 'Client not found',
      message: `No client with this id exists in ${inTenant(context)}.`,
      advice: 'It may have been deleted meanwhile: go back to the list, which shows what exists now.',
    }),
  },
  {
    code: 'NOT_FOUND',
    message: /^Page not found$/,
    words: () => ({
      title: 'Page not found',
      message: 'There is no page at this address.',
      advice: 'Check the address, or start again from your tenants.',
    }),
  },
  {
    code: 'RATE_LIMITED',
    message: /^At most (\d+) clients may be created per tenant per hour/,
    words: ({ groups: [limit], error, context }) => ({
      title: 'Too many new credentials',
      message: `At most ${limit} clients may be created per tenant per hour, and ${inTenant(context)} has reached that.`,
      advice: `Try again in ${duration(Number(error.details.retryAfter) || 3600)}.`,
    }),
  },
  // single sign-on (sso.ts)
  {
    code: 'BAD_USER_INPUT',
    message: /^(?:domains|addDomains|removeDomains): (".*") is not an e-mail domain/,
    words: ({ groups: [given] }) => ({
      message: `${given} is not an e-mail domain.`,
      advice: 'Enter the part of the addresses after the @, like acme.com: without @, http:// or a path.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^(?:domains|addDomains): (".*") changes under case folding \(into (.+)\)/,
    words: ({ groups: [given, folded] }) => ({
      message: `${given} is compared as ${folded}, the form addresses are compared in.`,
      advice: `Enter ${folded} instead.`,
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^removeDomains: a connection keeps at least one domain/,
    words: () => ({
      message: 'A connection keeps at least one domain.',
      advice: 'Add the new domain first, then remove this one; or delete the connection.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^(?:testers|addTesters) (".*") is not an e-mail address/,
    words: ({ groups: [given] }) => ({ message: `${given} is not an e-mail address.`, advice: 'Enter a tester’s address, like it-admin@acme.com.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^testers must have an address in one of the connection's domains \((.*)\); (.+) has not$/,
    words: ({ groups: [domains, outside] }) => ({
      message: `${outside} is not in the connection’s domains (${domains}).`,
      advice: 'A tester’s address must be in one of them: add the domain first, or choose another tester.',
    }),
  },
  {
    code: 'CONFLICT',
    message: /^(.+) is already served by another SSO connection/,
    words: ({ groups: [what] }) => ({
      title: 'The domain is taken',
      message: `${what} is already served by another single sign-on connection: a domain belongs to one connection in the whole service.`,
      advice: 'Remove it from your other connection first. If another organisation holds it, contact the service’s support.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^The metadata URL could not be fetched: (.+)$/,
    words: ({ groups: [reason] }) => ({
      message: `The metadata URL could not be read: ${reason}.`,
      advice:
        'Copy the metadata URL again from your identity provider: it starts with https:// and must be reachable from the internet. If your IdP has none, choose “Certificate and sign-in URL”.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'signInEndpoint',
    message: /^signInEndpoint (.+)$/,
    words: ({ groups: [problem] }) => ({
      message: `The sign-in URL ${problem}.`,
      advice: 'Copy the IdP’s SAML single sign-on URL (for Google Workspace: the “SSO URL”).',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'status',
    message: /^the connection is not configured yet/,
    words: () => ({
      title: 'Not ready yet',
      message: 'The connection cannot change status before the identity provider’s side is saved.',
      advice: 'Give it the metadata URL, or the certificate and sign-in URL, above: it then moves to Testing, and from Testing you enable it.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'status',
    words: ({ error }) => ({
      title: 'The status cannot change that way',
      message: error.message.charAt(0).toUpperCase() + error.message.slice(1) + '.',
      advice: 'A connection is tested before it is enabled: save the identity provider’s side, let a tester sign in, then enable it.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^(?:the update would leave the connection with no unexpired signing certificate|signingCert expired on (\S+))/,
    words: ({ groups: [on] }) => ({
      message: on ? `This certificate expired on ${on.slice(0, 10)}.` : 'The connection would be left with no certificate valid now.',
      advice: 'Give the identity provider’s current signing certificate (its “valid until” date in the future).',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^the update would leave the connection without a usable IdP configuration/,
    words: () => ({
      message: 'People sign in through this connection, and it would be left without a certificate valid now.',
      advice: 'Add the identity provider’s new certificate first, then remove this one; or disable the connection.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'connectionName',
    message: /^name (.+)$/,
    words: ({ groups: [problem] }) => ({
      message: `The name ${problem}.`,
      advice: 'Enter a short name for you and the other Administrators, like “Acme Okta”.',
    }),
  },
  {
    code: 'NOT_FOUND',
    message: /^SSO connection not found$/,
    words: ({ context }) => ({
      title: 'Connection not found',
      message: `No single sign-on connection with this id exists in ${inTenant(context)}.`,
      advice: 'It may have been deleted meanwhile: go back to the list, which shows what exists now.',
    }),
  },
  // the tenant pages (tenants.ts, tenant-forms.ts): the state table's refusals, and their forms' input
  {
    code: 'BAD_USER_INPUT',
    field: 'environments',
    message: /^the tenant expired/,
    words: ({ context }) => ({
      title: 'Disabled by its expiry',
      message: `${inTenant(context)} was disabled because it expired, so it cannot simply be enabled again.`,
      advice: 'Set a later expiry, or tick “Remove the expiry”, in the same change as the environments.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^the vendor tenant cannot/,
    words: () => ({
      title: 'Not for the vendor tenant',
      message: 'The vendor tenant cannot expire or be disabled.',
      advice: 'Keep at least one environment enabled and leave its expiry empty.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'clearExpiration',
    words: () => ({
      message: 'You set an expiry and asked to remove it at the same time.',
      advice: 'Either enter an expiry, or tick “Remove the expiry”, not both.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'environments',
    message: /at least one environment/,
    words: () => ({ message: 'A new tenant must be enabled in at least one environment.', advice: 'Tick one or more environments.' }),
  },
  // (form-times.ts: before the rule below, which words the service's refusals of a time)
  {
    code: 'BAD_USER_INPUT',
    message: /^(until|expiresAt) must be a date and time such as/,
    words: () => ({ message: 'That is not a date and time.', advice: 'Enter it as the field asks: a date and a time, in UTC.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'until',
    message: /^until (must .+)$/,
    words: ({ groups: [rule] }) => ({
      message: `The end of support access ${rule}.`,
      advice: 'Enter a later date and time (UTC), at most 366 days ahead, or leave it empty to keep it on until you turn it off.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'partnerTenantID',
    words: ({ context }) => ({
      title: 'Not a partner',
      message: `${inTenant(context)} is not a partner: tenants are created only under partners.`,
      advice: 'Go to the partner the new tenant belongs under, and create it there.',
    }),
  },
  {
    code: 'CONFLICT',
    message: /already has a label "(.+)" of this owner$/,
    words: ({ groups: [name], context }) => ({
      title: 'The label exists',
      message: `${inTenant(context)} already has a label ${name} from this owner (names are compared ignoring case).`,
      advice: 'Change that label instead, or choose another name.',
    }),
  },
  {
    code: 'CONFLICT',
    message: /already has a (service|subscription) named "(.+)"$/,
    words: ({ groups: [what, name] }) => ({
      title: 'The name is taken',
      message: `There is already a ${what} named ${name} (names are compared ignoring case).`,
      advice: 'Choose another name.',
    }),
  },
  {
    code: 'RESTRICTED',
    message: /^label "(.+)" is restricted/,
    words: ({ groups: [name] }) => ({
      title: 'A restricted label',
      message: `The label ${name} is restricted: nobody can change or delete it here.`,
      advice: 'Ask the vendor’s operators if it needs changing.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'subscription_id',
    message: /is retired$/,
    words: () => ({ message: 'That subscription is retired: it can no longer be assigned.', advice: 'Choose another subscription.' }),
  },
  // users (users.ts)
  {
    code: 'BAD_USER_INPUT',
    field: 'email',
    message: /must not be empty/,
    words: () => ({ message: 'Enter the e-mail address of the person to invite.', advice: 'They sign in with it.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'email',
    message: /^email (.+) is not an e-mail address/,
    words: ({ groups: [given] }) => ({
      message: `${given} is not an e-mail address.`,
      advice: 'Enter one address, like name@example.com, then send the form again.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'display_name',
    message: /^display_name (.+)$/,
    words: ({ groups: [problem] }) => ({ message: `The name ${problem}.`, advice: 'Correct the name, or leave it empty.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'expires_at',
    message: /must be in the future/,
    words: () => ({ message: 'The end of the role is in the past.', advice: 'Choose a date and time to come (UTC), or leave it empty for no end.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'expires_at',
    words: () => ({
      message: 'The end of the role is not a date and time.',
      advice: 'Enter it as 2030-01-31T17:00 (UTC), or leave it empty for no end.',
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'roles',
    message: /^unknown role id|can be held only in the vendor tenant/,
    words: () => ({ message: 'Choose one of the roles the form offers.', advice: 'Only those roles can be given here.' }),
  },
  {
    code: 'BAD_USER_INPUT',
    message: /^You cannot (.+); ask another Administrator$/,
    words: ({ groups: [what] }) => ({
      title: 'Not for your own account',
      message: `You cannot ${what} here.`,
      advice: 'Ask another Administrator of your tenant to do it.',
    }),
  },
  {
    code: 'CONFLICT',
    message: /^A user with this e-mail address exists/,
    words: () => ({
      title: 'The address is taken',
      message: 'A user with this e-mail address exists already (in this tenant or another).',
      advice: 'Check the address; an address has one account across every tenant.',
    }),
  },
  {
    code: 'FORBIDDEN',
    message: /^You cannot give a user a role you could not give yourself: (.+?)(?: \(id [^)]*\))?\. /,
    words: ({ groups: [role] }) => ({
      message: `You cannot give the role ${role}: you may give only roles you could hold yourself.`,
      advice: 'Go back and choose among the roles the form offers.',
    }),
  },
  {
    code: 'NOT_FOUND',
    message: /^User not found$/,
    words: ({ context }) => ({
      title: 'User not found',
      message: `No user with this id is visible in ${inTenant(context)}.`,
      advice: 'It may have been deleted meanwhile: go back to the users, which shows who exists now.',
    }),
  },
  {
    code: 'NOT_FOUND',
    message: /^Role assignment in this tenant not found$/,
    words: ({ context }) => ({
      title: 'Role not found',
      message: `The user does not hold this role in ${inTenant(context)} (any more).`,
      advice: 'Go back to the user’s page, which shows their roles now.',
    }),
  },
  // the tenant a role is given in (users.ts, `in`); the context is the user's home tenant
  {
    code: 'BAD_USER_INPUT',
    field: 'in',
    message: /^(.+) is not a tenant id$/,
    words: ({ groups: [given], context }) => ({
      message: `${given} is not a tenant id: tenant ids are numbers.`,
      advice: `Enter the id of a tenant below ${inTenant(context)}, or leave it empty to give the role in ${inTenant(context)}.`,
    }),
  },
  {
    code: 'BAD_USER_INPUT',
    field: 'user_id',
    message: /^a user can hold roles only in its home tenant and the tenants below it/,
    words: ({ context }) => ({
      message: `Roles can be given only in ${inTenant(context)} and the tenants below it.`,
      advice: `Enter the id of a tenant below ${inTenant(context)}, or leave it empty to give the role in ${inTenant(context)}.`,
    }),
  },
];

/** A wait as a person reads it: "45 seconds", "1 minute", "12 minutes". */
function duration(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

/** A failure the console itself decides the words of (its own checks, not a use case's). */
class ConsoleRefusal extends AppError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly words: Words,
  ) {
    super(code, message);
  }
}

/**
 * A tenant asked for that the viewer cannot act in: it does not exist, or no role of theirs
 * reaches it. The same words either way (403, as the API answers), so that nobody learns
 * whether a tenant they cannot see exists.
 */
export function tenantNotVisible(id: string): AppError {
  return new ConsoleRefusal('FORBIDDEN', `No tenant ${id} is visible to you.`, {
    title: 'Tenant not found',
    advice: 'Check the id, or pick a tenant from your list.',
  });
}

/** The things a page names by id that must be its tenant's own. */
export type OwnKind = 'user' | 'label' | 'subscription';

/**
 * A user, label or subscription a page was given that is not its tenant's own: it may belong to
 * a tenant below (which the viewer's roles reach, so the services accept it), be out of reach, or
 * not exist at all. A page acts in its one tenant, so it refuses them alike (404), with the same
 * words, so that the page tells nothing about where else it might be.
 */
export function notInThisTenant(kind: OwnKind, tenant: { name: string }): AppError {
  const title = `${kind.charAt(0).toUpperCase()}${kind.slice(1)} not found`;
  return new ConsoleRefusal('NOT_FOUND', `No ${kind} with this id belongs to ${tenant.name}.`, {
    title,
    advice: `It may have been deleted, or belong to another tenant: go back to the list of ${tenant.name}, or open it from the tenant it belongs to.`,
  });
}

/** The failure of a request (logged first if it is a bug, by mapError) in a person's words. */
export function problemOf(err: unknown, req: FastifyRequest, reply: FastifyReply, context: ProblemContext = {}): Problem {
  const m = mapError(err, req, reply);
  const base = { status: m.status, code: m.code, headers: m.headers };
  if (err instanceof ConsoleRefusal) return { ...base, message: m.message, ...err.words };
  if (err instanceof AppError) {
    for (const rule of RULES) {
      if (rule.code !== err.code || (rule.field !== undefined && rule.field !== err.details.field)) continue;
      const found = rule.message ? rule.message.exec(err.message) : [];
      if (!found) continue;
      const words = rule.words({ groups: found.slice(1), error: err, context });
      return { ...base, title: words.title ?? WORDS[m.code].title, message: words.message, advice: words.advice };
    }
  }
  return { ...base, message: m.message, ...WORDS[m.code] };
}
