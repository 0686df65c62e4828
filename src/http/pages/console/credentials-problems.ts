// The console's words for the failures of a tenant's credentials (credentials.ts): a secret, a
// grace period, a name, a role a client cannot be given, the rate of new clients. With them, in
// their place among them (problems.ts reads every rule in one order, the first that matches
// wins), the console's own for any page: a tenant id in the address, a change the viewer's roles
// do not allow, a page that does not exist.
import { duration, inTenant, type Rule } from './problem-rules.js';

export const CREDENTIAL_RULES: readonly Rule[] = [
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
];
