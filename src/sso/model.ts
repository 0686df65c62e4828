// SSO connections: their shape and the pure rules (docs/sso.md): the status machine, e-mail
// domains and tester addresses, and which certificates count.
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import { badInput } from '../errors.js';
import { checkName } from '../text.js';
import { checkEmail, emailKey } from '../users/model.js';

export type SsoConnectionType = 'saml';
export type SsoConnectionStatus = 'Created' | 'Testing' | 'Enabled' | 'Disabled';

/** How many signing certificates a connection holds at once (an IdP's key rollover needs two). */
export const MAX_CERTIFICATES = 3;
/** A connection whose usable certificates all expire within this is flagged. */
export const EXPIRY_WARNING_DAYS = 30;
export const MAX_DOMAINS = 100;
export const MAX_TESTERS = 100;
export const NAME_MAX = 100;

export interface SsoCertificate {
  id: string;
  connectionId: string;
  name: string | null;
  pem: string;
  fingerprintSha256: string;
  issuer: string;
  subject: string;
  notBefore: Date;
  expiresAt: Date;
  fromMetadata: boolean;
  createdAt: Date;
}

export interface SsoConnection {
  id: string;
  tenantId: string;
  name: string;
  type: SsoConnectionType;
  status: SsoConnectionStatus;
  idpEntityId: string | null;
  signInEndpoint: string | null;
  metadataUrl: string | null;
  metadataRefreshedAt: Date | null;
  metadataRefreshError: string | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  domains: string[];
  testers: string[];
  /** newest first */
  certificates: SsoCertificate[];
}

/**
 * The status machine (docs/sso.md). `Created` until the IdP is configured (a metadata URL, or a
 * signing certificate and a sign-in endpoint), which moves it to `Testing` by itself; `Enabled`
 * only from `Testing` (or back from `Disabled`); `Disabled` stops every sign-in through it.
 */
export const STATUS_MOVES: Record<SsoConnectionStatus, readonly SsoConnectionStatus[]> = {
  Created: ['Disabled'],
  Testing: ['Enabled', 'Disabled'],
  Enabled: ['Testing', 'Disabled'],
  Disabled: ['Testing', 'Enabled'],
};

export const STATUSES: readonly SsoConnectionStatus[] = ['Created', 'Testing', 'Enabled', 'Disabled'];

/** The status a requested move leads to, or a BAD_USER_INPUT naming the allowed ones. */
export function checkStatusMove(from: SsoConnectionStatus, to: SsoConnectionStatus, configured: boolean): SsoConnectionStatus {
  if (from === to) return to;
  if (to === 'Created') throw badInput('status cannot be set back to Created', { field: 'status' });
  if (from === 'Created' && to === 'Enabled' && configured) {
    throw badInput(
      'a connection is enabled from Testing: the update that configures it moves it to Testing; let a tester sign in, then set Enabled',
      {
        field: 'status',
      },
    );
  }
  if (from === 'Created' && to === 'Testing' && configured) return to;
  if (from === 'Created' && to !== 'Disabled') {
    throw badInput(
      `the connection is not configured yet: give samlConfiguration a metadataURL, or a signingCert and a signInEndpoint; it then moves to Testing, and from Testing to ${to}`,
      { field: 'status' },
    );
  }
  if (!STATUS_MOVES[from].includes(to)) {
    throw badInput(`a connection in ${from} cannot move to ${to}; from ${from} it may move to ${STATUS_MOVES[from].join(' or ')}`, {
      field: 'status',
    });
  }
  if ((to === 'Testing' || to === 'Enabled') && !configured) {
    throw badInput(
      `the connection has no usable IdP configuration (a sign-in endpoint and an unexpired signing certificate), so it cannot be ${to}`,
      {
        field: 'status',
      },
    );
  }
  return to;
}

export function checkConnectionName(raw: string): string {
  return checkName(raw, 'name', NAME_MAX).name;
}

export function checkType(raw: string): SsoConnectionType {
  if (raw !== 'saml') throw badInput(`type ${JSON.stringify(raw)} is not supported; the only connection type is saml`, { field: 'type' });
  return raw;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * An e-mail domain as stored and compared: lower case, internationalised names in their ASCII
 * (punycode) form, no trailing dot; at least two labels, not an IP address.
 */
export function checkDomain(raw: string, field = 'domains'): string {
  const trimmed = raw.trim().replace(/\.$/, '');
  const ascii = trimmed === '' || /[\s/@:]/.test(trimmed) ? '' : domainToASCII(trimmed.toLowerCase());
  const labels = ascii.split('.');
  if (!ascii || ascii.length > 253 || isIP(ascii) !== 0 || labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) {
    throw badInput(`${field}: ${JSON.stringify(raw)} is not an e-mail domain (expected one like example.com, without @ or a scheme)`, { field });
  }
  // addresses are compared case-folded (users/model.ts emailKey): a domain that folding changes
  // into another name (straße.de into strasse.de) could never be matched, and its people would be
  // routed by the other name; such a domain is refused, and its folded form may be claimed instead
  const folded = domainOf(`x@${trimmed}`);
  if (folded !== ascii) {
    throw badInput(
      `${field}: ${JSON.stringify(raw)} changes under case folding (into ${folded}), which addresses are compared by; claim ${folded} instead`,
      {
        field,
      },
    );
  }
  return ascii;
}

/** The domain part of an address as addresses are compared (case-folded: users/model.ts
 *  emailKey), in the form checkDomain stores; null if it has none. */
export function domainOf(email: string): string | null {
  const key = emailKey(email);
  const at = key.lastIndexOf('@');
  if (at < 0) return null;
  const ascii = domainToASCII(
    key
      .slice(at + 1)
      .trim()
      .toLowerCase()
      .replace(/\.$/, ''),
  );
  return ascii === '' ? null : ascii;
}

/** A tester address as stored: the users' e-mail key. */
export function checkTester(raw: string, field = 'testers'): string {
  return checkEmail(raw, field).key;
}

/** Distinct checked values, in the order given. */
export function checkedSet(values: readonly string[] | null | undefined, check: (v: string) => string): string[] {
  return [...new Set((values ?? []).map((v) => check(v)))];
}

/** The certificates a response may be signed with now. */
export function usableCertificates(connection: Pick<SsoConnection, 'certificates'>, now: Date): SsoCertificate[] {
  return connection.certificates.filter((c) => c.notBefore <= now && c.expiresAt > now);
}

/** Whether the IdP side is configured enough to sign anyone in. */
export function configured(connection: Pick<SsoConnection, 'certificates' | 'signInEndpoint'>, now: Date): boolean {
  return connection.signInEndpoint !== null && usableCertificates(connection, now).length > 0;
}

/** The certificate shown as the connection's (`certName`, `expiresAt`…): the usable one that lasts longest, else the newest. */
export function currentCertificate(connection: Pick<SsoConnection, 'certificates'>, now: Date): SsoCertificate | null {
  const usable = usableCertificates(connection, now);
  if (usable.length > 0) return usable.reduce((a, b) => (b.expiresAt > a.expiresAt ? b : a));
  return connection.certificates[0] ?? null;
}

/** Flagged in the list: no usable certificate lasts beyond the warning window. */
export function certificateExpiresSoon(connection: Pick<SsoConnection, 'certificates'>, now: Date): boolean {
  if (connection.certificates.length === 0) return false;
  const horizon = new Date(now.getTime() + EXPIRY_WARNING_DAYS * 86_400_000);
  return !usableCertificates(connection, now).some((c) => c.expiresAt > horizon);
}

/** This service's SAML values for a connection (what its IdP is told), all under the service's
 *  base URL. */
export interface SpParameters {
  /** the ACS, where the IdP posts its response */
  postBackURL: string;
  entityID: string;
  metadataURL: string;
  /** where a sign-in through the connection begins */
  callbackURL: string;
}

export function spParameters(baseUrl: string, id: string): SpParameters {
  const root = `${baseUrl}/sso/saml/${id}`;
  return { postBackURL: `${root}/acs`, entityID: root, metadataURL: `${root}/metadata`, callbackURL: `${root}/login` };
}

/** The words for a response larger than the service reads (the ACS's MAX_SAML_RESPONSE_BASE64,
 *  or its request body limit): what the limit is, and what an administrator can do about it. */
export function tooLargeMessage(limitKiB: number): string {
  return `The identity provider's answer is larger than the ${limitKiB} KiB this service accepts. Ask your administrator to have the identity provider send fewer attributes (for example only the groups this service needs).`;
}
