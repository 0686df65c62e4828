// The console's words for the failures of the tenant pages (tenants.ts, tenant-forms.ts): the
// state table's refusals (expiry, disabling, environments), and their forms' input (times,
// support access, partners, labels, services and subscriptions).
import { inTenant, type Rule } from './problem-rules.js';

export const TENANT_RULES: readonly Rule[] = [
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
];
