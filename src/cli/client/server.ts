// Talking to a Gatehouse server from the command line: the server's address as the user gave it,
// and requests whose every failure becomes a sentence that says what to do (ClientFailure).
import { UsageError } from '../usage-error.js';
import { CLIENT_ENVIRONMENT } from './options.js';
import { printable } from './printable.js';

/** A failure the user can act on; its message is the whole explanation. */
export class ClientFailure extends Error {
  override name = 'ClientFailure';
}

/** A failure that may pass by itself (no answer in time, a refused connection, a server error
 *  page): polling retries it. `detail` names it in a few words, e.g. "no answer within 30 s". */
export class TransientFailure extends ClientFailure {
  override name = 'TransientFailure';
  constructor(
    message: string,
    readonly detail: string,
  ) {
    super(message);
  }
}

/** The server answered with a redirect, which the client commands never follow (a request may
 *  carry a secret or a device code); `target` is where it pointed, resolved, if anywhere. */
export class RedirectRefused extends ClientFailure {
  override name = 'RedirectRefused';
  constructor(
    message: string,
    readonly target: string | undefined,
  ) {
    super(message);
  }
}

/** The server address without a trailing slash; http and https only. */
export function serverUrl(value: string | undefined, from: string): string {
  if (value === '') throw new UsageError(`${from} is empty: give the server's address, e.g. https://gatehouse.example.com`);
  if (!value) throw new UsageError(`the server address is missing: give ${from}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${JSON.stringify(value)} is not a URL: give the server's address, e.g. https://gatehouse.example.com`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`the server address must start with https:// (or http:// on this machine), not ${url.protocol}`);
  if (url.username || url.password || url.search || url.hash) throw new UsageError('the server address must not carry a user, a query or a fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The server named by --url, else by GATEHOUSE_URL (empty there counts as unset); undefined
 *  when neither names one. An empty --url is a mistake, not "no server". */
export function namedServer(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flag !== undefined) return serverUrl(flag, '--url');
  const variable = env[CLIENT_ENVIRONMENT.url];
  return variable ? serverUrl(variable, CLIENT_ENVIRONMENT.url) : undefined;
}

/** The server of --url or GATEHOUSE_URL, which the command cannot do without. */
export function requiredServer(flag: string | undefined): string {
  const base = namedServer(flag);
  if (base === undefined) throw new UsageError(`the server address is missing: give --url or ${CLIENT_ENVIRONMENT.url}`);
  return base;
}

/** Whether a token sent to this address could be read on the way (plain http off this machine). */
export function sentInClear(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(hostname) && !hostname.endsWith('.localhost');
}

export interface JsonResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** How long one request may take, its whole answer included. GATEHOUSE_HTTP_TIMEOUT_MS (in
 *  milliseconds) shortens it for the tests only, which need a server that never answers to give
 *  up quickly; it is deliberately not offered in any --help. */
export const TIMEOUT_MS = positive(process.env.GATEHOUSE_HTTP_TIMEOUT_MS) ?? 30_000;

function positive(value: string | undefined): number | undefined {
  const n = Number(value);
  return value && Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * One request with a JSON answer. It gives up after TIMEOUT_MS, and also when `init.signal` is
 * aborted (Ctrl-C), whose abort error is passed on as it is, for the caller to report. A server
 * that cannot be reached, does not answer in time or fails with a page is a TransientFailure; a
 * redirect a RedirectRefused; an answer that is not JSON a ClientFailure.
 */
export async function requestJson(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  const shown = printable(url);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, { ...init, redirect: 'manual', signal });
    text = await res.text();
  } catch (err) {
    if (init.signal?.aborted) throw err;
    // a TLS problem does not pass by itself, and "is the server running?" would mislead
    const tls = timeout.aborted ? undefined : tlsProblem(err, new URL(url));
    if (tls) throw new ClientFailure(tls);
    const why = timeout.aborted ? `no answer within ${TIMEOUT_MS / 1000} s` : reason(err);
    throw new TransientFailure(`cannot reach ${printable(new URL(url).origin)}: ${why}; check the address and that the server is running`, why);
  }
  if (res.status >= 300 && res.status < 400) throw redirected(url, res.headers.get('location'));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    if (res.status >= 500)
      throw new TransientFailure(`${shown} failed with HTTP ${res.status} (not a JSON answer); try again later`, `HTTP ${res.status}`);
    throw new ClientFailure(`${shown} answered HTTP ${res.status} without JSON; is this the address of a Gatehouse server?`);
  }
  return { status: res.status, body: body as Record<string, unknown>, headers: res.headers };
}

function redirected(url: string, location: string | null): RedirectRefused {
  let target: string | undefined;
  try {
    target = location ? new URL(location, url).href : undefined;
  } catch {
    target = undefined;
  }
  return new RedirectRefused(
    target
      ? `${printable(url)} redirects to ${printable(target)}; gatehouse does not follow redirects: use the server's own address as --url`
      : `${printable(url)} answered with a redirect to nowhere; is this the address of a Gatehouse server?`,
    target,
  );
}

/** OpenSSL's codes for an answer that is not TLS at all: a plain-http server asked for https. */
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'ERR_SSL_HTTP_REQUEST']);

/** Node's codes for a certificate it does not trust, in words. */
const UNTRUSTED: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'it is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'it is signed by an authority this machine does not know',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'it is signed by an authority this machine does not know',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its chain cannot be verified (is the intermediate certificate served?)',
  CERT_HAS_EXPIRED: 'it has expired',
  CERT_NOT_YET_VALID: 'it is not valid yet (or a clock is wrong)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'it is for another host name',
};

/** A TLS failure in words, with what to do; undefined for any other failure. */
export function tlsProblem(err: unknown, url: URL): string | undefined {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? '';
  const message = cause?.message ?? '';
  const origin = printable(url.origin);
  if (url.protocol === 'https:' && (NOT_TLS.has(code) || /wrong version number|packet length too long|http request/i.test(message))) {
    const plain = printable(`http://${url.host}`);
    return (
      `${origin} does not answer in TLS: the server there speaks plain http. Use ${plain} instead ` +
      '(only on this machine or a trusted network: the token would travel unencrypted), or set up TLS (https) for the server'
    );
  }
  const untrusted = UNTRUSTED[code];
  if (untrusted) {
    return (
      `the TLS certificate of ${origin} is not trusted: ${untrusted}. Fix the server's certificate, ` +
      "or, if your own authority signed it, name that authority's certificate in NODE_EXTRA_CA_CERTS=FILE"
    );
  }
  return undefined;
}

function reason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND') return 'no such host';
  return printable(cause?.message ?? (err as Error).message);
}

/** An OAuth error body (RFC 6749 section 5.2), printable: "invalid_client" and its description. */
export function oauthError(body: Record<string, unknown>): { error: string; description: string } {
  const error = typeof body.error === 'string' ? printable(body.error) : 'unknown_error';
  const description = typeof body.error_description === 'string' ? printable(body.error_description) : '';
  return { error, description };
}

export function formBody(fields: Record<string, string | undefined>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.set(k, v);
  return form;
}
