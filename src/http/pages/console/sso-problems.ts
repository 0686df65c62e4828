// The console's words for the failures of a tenant's single sign-on (sso.ts, sso-wizard.ts): its
// domains, testers, metadata URL, sign-in URL, status, certificates and name.
import { inTenant, type Rule } from './problem-rules.js';

export const SSO_RULES: readonly Rule[] = [
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
    code: 'BAD_USER_INPUT',
    message: /^the connection does not claim (.+): add it to the connection first/,
    words: ({ groups: [domain] }) => ({
      message: `The connection does not serve ${domain}.`,
      advice: 'Add the domain first, then ask for its value and check it.',
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
];
