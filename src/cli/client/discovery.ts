// The server's endpoints, from its authorization-server metadata (RFC 8414), checked before
// anything is sent to them: the metadata must name as issuer the address the user gave (section
// 3.3), and its endpoints must be on that server, by https when the server was reached by https.
// A server that redirects its metadata elsewhere is told apart, with the address to use instead.
import { printable } from './printable.js';
import { ClientFailure, RedirectRefused, requestJson } from './server.js';

export const METADATA_PATH = '/.well-known/oauth-authorization-server';

export interface ServerMetadata {
  issuer: string;
  token_endpoint: string;
  device_authorization_endpoint?: string;
  /** RFC 7009; absent on a server without revocation */
  revocation_endpoint?: string;
}

export async function discover(base: string, signal?: AbortSignal): Promise<ServerMetadata> {
  const where = `${base}${METADATA_PATH}`;
  let res: Awaited<ReturnType<typeof requestJson>>;
  try {
    res = await requestJson(where, signal ? { signal } : {});
  } catch (err) {
    if (err instanceof RedirectRefused && err.target) {
      const instead = err.target.endsWith(METADATA_PATH) ? err.target.slice(0, -METADATA_PATH.length) : new URL(err.target).origin;
      throw new ClientFailure(`${base} redirects to ${printable(err.target)}; use that server's address as --url (${printable(instead)})`);
    }
    throw err;
  }
  const token = res.body.token_endpoint;
  if (res.status !== 200 || typeof token !== 'string') {
    throw new ClientFailure(
      `${base} published no authorization-server metadata (${where} answered HTTP ${res.status}); is this the address of a Gatehouse server?`,
    );
  }
  const issuer = checkedIssuer(base, res.body.issuer);
  const device = res.body.device_authorization_endpoint;
  const revocation = res.body.revocation_endpoint;
  return {
    issuer: issuer.href,
    token_endpoint: checkedEndpoint(base, issuer, 'token_endpoint', token),
    ...(typeof device === 'string' ? { device_authorization_endpoint: checkedEndpoint(base, issuer, 'device_authorization_endpoint', device) } : {}),
    ...(typeof revocation === 'string' ? { revocation_endpoint: checkedEndpoint(base, issuer, 'revocation_endpoint', revocation) } : {}),
  };
}

/** The address without a trailing slash, as serverUrl() gives it; undefined when it is not one. */
function normalised(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.search || url.hash || url.username || url.password) return undefined;
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return undefined;
  }
}

function checkedIssuer(base: string, issuer: unknown): URL {
  if (typeof issuer !== 'string')
    throw new ClientFailure(`${base}'s metadata names no issuer; is this the address of a Gatehouse server? Ask its operator to check it`);
  if (normalised(issuer) !== base) {
    throw new ClientFailure(
      `${base} is not the address this server knows itself by: its metadata names the issuer ${printable(issuer)} (RFC 8414 section 3.3). ` +
        `If that is the same server, use that address as --url; otherwise its operator must set GATEHOUSE_BASE_URL to ${base}`,
    );
  }
  return new URL(issuer);
}

function checkedEndpoint(base: string, issuer: URL, name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ClientFailure(`${base}'s metadata names a ${name} that is not a URL (${printable(value)}); ask its operator to check it`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && issuer.protocol === 'http:')) {
    throw new ClientFailure(
      `${base}'s metadata names a ${name} that is not https (${printable(value)}); gatehouse will not send a login over plain http to a server reached by https. Ask its operator to check the metadata`,
    );
  }
  if (url.origin !== issuer.origin) {
    throw new ClientFailure(
      `${base}'s metadata names a ${name} on another server (${printable(url.origin)}); gatehouse sends logins only to ${issuer.origin}. Ask its operator to check the metadata`,
    );
  }
  return url.href;
}
