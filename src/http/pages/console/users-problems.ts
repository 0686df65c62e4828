// The console's words for the failures of a tenant's users (users.ts): an invitation's address
// and name, a role and its end, a change of one's own account, and the tenant a role is given in
// (`in`, its context the user's home tenant).
import { inTenant, type Rule } from './problem-rules.js';

export const USER_RULES: readonly Rule[] = [
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
      // the same words as the page's own check (problems.ts notInThisTenant): a user deleted
      // between that check and the change reads as one that was never there
      message: `No user with this id belongs to ${inTenant(context)}.`,
      advice: `It may have been deleted, or belong to another tenant: go back to the list of ${inTenant(context)}, or open it from the tenant it belongs to.`,
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
