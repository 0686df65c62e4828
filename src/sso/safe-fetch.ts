// Fetching a URL a tenant admin typed (their IdP's metadata) from inside our network: a
// server-side request forgery surface (security-tests.md section H). The rules:
// - https on its default port only (http and any port only when private targets are allowed,
//   i.e. in development); no user name or password in the URL;
// - the host is resolved once, every address it resolves to must be public, and the connection
//   goes to that checked address and nowhere else: the socket is made here, by IP, so nothing
//   resolves the name a second time (DNS rebinding) while TLS still checks the certificate
//   against the name the admin gave;
// - redirects are followed by hand, each hop checked by the same rules, never from https to
//   http, at most `maxRedirects`;
// - one deadline for the whole fetch and a byte cap on the body;
// - whatever fails, the caller learns one of a few fixed reasons: never the server's status,
//   body or banner, so the feature cannot be used to probe what answers where.
// Node's fetch() is not used: it ignores http.Agent, so it offers no hook on the dialed address.
import { lookup } from 'node:dns/promises';
import { type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { badInput } from '../errors.js';
import { isBlockedAddress } from './public-address.js';

export { isBlockedAddress } from './public-address.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/** What the connector is asked to dial: the checked address, and the name it stands for. */
export interface DialTarget {
  address: string;
  port: number;
  family: number;
  /** the host name TLS presents and checks the certificate against (the URL's host) */
  servername: string;
  host: string;
}

/**
 * Opens the TCP connection (TLS is layered on top here, so a connector cannot weaken it). The
 * default dials `address` with net.connect; tests inject one that records the call.
 */
export type Connector = (target: DialTarget) => Socket;

export interface FetchOptions {
  /** development only (GATEHOUSE_SSO_ALLOW_PRIVATE_URLS): http, any port, loopback and private addresses */
  allowPrivate: boolean;
  /** default: the system resolver, every address (dns.lookup with all: true) */
  resolver?: Resolver;
  connect?: Connector;
  /** for the whole fetch: connection, headers, body and redirects; default 5000 */
  timeoutMs?: number;
  /** body size cap; default 1 MiB */
  maxBytes?: number;
  /** redirects followed; default 3 */
  maxRedirects?: number;
  /** trusted CA certificates (PEM) replacing the system's; for tests with a self-signed server */
  ca?: string;
}

export interface FetchedDocument {
  body: string;
  /** the URL the body came from, after redirects */
  finalUrl: string;
  contentType?: string;
}

export const FETCH_DEFAULTS = { timeoutMs: 5000, maxBytes: 1024 * 1024, maxRedirects: 3 } as const;

/** Host names refused whatever they resolve to: the cloud metadata service's own name. */
const BLOCKED_NAMES = new Set(['metadata.google.internal']);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A refusal with its public reason, one of the fixed set below. */
class Refused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

const REASONS = {
  notUrl: 'it is not a valid URL',
  httpsOnly: 'only https URLs are accepted',
  credentials: 'URLs with a user name or password are not accepted',
  port: 'only the standard https port is accepted',
  notPublic: 'the address is not public',
  unreachable: 'the server could not be reached',
  certificate: "the server's TLS certificate is not valid",
  httpError: 'the server answered with an error',
  badRedirect: 'it redirected to an invalid URL',
  downgrade: 'it redirected from https to http',
  tooManyRedirects: 'too many redirects',
  tooLarge: (bytes: number) => `it is larger than ${formatBytes(bytes)}`,
  tooSlow: (ms: number) => `it took longer than ${ms / 1000} s`,
};

/** GETs `url` under the rules above; every failure is BAD_USER_INPUT 'The metadata URL could not be fetched: <reason>'. */
export async function fetchPublicUrl(url: string, options: FetchOptions): Promise<FetchedDocument> {
  const timeoutMs = options.timeoutMs ?? FETCH_DEFAULTS.timeoutMs;
  const maxBytes = options.maxBytes ?? FETCH_DEFAULTS.maxBytes;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    return await follow(url, options, maxBytes, deadline.signal);
  } catch (e) {
    let reason: string;
    if (e instanceof Refused) reason = e.reason;
    else if (deadline.signal.aborted) reason = REASONS.tooSlow(timeoutMs);
    else if (isCertificateError(e)) reason = REASONS.certificate;
    else reason = REASONS.unreachable;
    throw badInput(`The metadata URL could not be fetched: ${reason}`);
  } finally {
    clearTimeout(timer);
  }
}

async function follow(first: string, options: FetchOptions, maxBytes: number, signal: AbortSignal): Promise<FetchedDocument> {
  const maxRedirects = options.maxRedirects ?? FETCH_DEFAULTS.maxRedirects;
  let url = checkUrl(first, options);
  for (let redirects = 0; ; redirects++) {
    const target = await checkedAddress(url, options, signal);
    const response = await get(url, target, options, signal);
    const status = response.statusCode ?? 0;
    if (REDIRECT_STATUSES.has(status)) {
      const location = response.headers.location;
      response.destroy(); // a redirect's body is never read
      if (redirects >= maxRedirects) throw new Refused(REASONS.tooManyRedirects);
      url = nextUrl(url, location, options);
      continue;
    }
    if (status < 200 || status > 299) {
      response.destroy();
      throw new Refused(REASONS.httpError);
    }
    const body = await readBody(response, maxBytes);
    const contentType = response.headers['content-type'];
    return contentType === undefined ? { body, finalUrl: url.href } : { body, finalUrl: url.href, contentType };
  }
}

/** The URL rules that need no DNS: scheme, credentials, port, forbidden names. */
function checkUrl(text: string, options: FetchOptions): URL {
  let url: URL;
  try {
    // The WHATWG parser is what makes '2130706433', '0x7f.1', '127.1', '017700000001' and
    // '[::fFFf:127.0.0.1]' the canonical addresses they stand for, before anything classifies them.
    url = new URL(text);
  } catch {
    throw new Refused(REASONS.notUrl);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowPrivate)) throw new Refused(REASONS.httpsOnly);
  if (url.username !== '' || url.password !== '') throw new Refused(REASONS.credentials);
  // URL leaves port empty when it is the scheme's default.
  if (url.port !== '' && !options.allowPrivate) throw new Refused(REASONS.port);
  if (!options.allowPrivate && BLOCKED_NAMES.has(tlsName(url))) throw new Refused(REASONS.notPublic);
  return url;
}

function nextUrl(current: URL, location: string | undefined, options: FetchOptions): URL {
  if (location === undefined) throw new Refused(REASONS.badRedirect);
  let next: URL;
  try {
    next = new URL(location, current);
  } catch {
    throw new Refused(REASONS.badRedirect);
  }
  // Checked before the scheme rule, so the reason is the same whether or not http is allowed.
  if (current.protocol === 'https:' && next.protocol !== 'https:') throw new Refused(REASONS.downgrade);
  return checkUrl(next.href, options);
}

/** The URL's host without IPv6 brackets, as the resolver and the connector take it. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** The name TLS sends and verifies: the host without a root-label dot ('idp.example.com.'). */
function tlsName(url: URL): string {
  return hostOf(url).replace(/\.$/, '');
}

/** Resolves the host once and checks every address; the first one is the one dialed. */
async function checkedAddress(url: URL, options: FetchOptions, signal: AbortSignal): Promise<ResolvedAddress> {
  const host = hostOf(url);
  const literal = isIP(host);
  const addresses = literal !== 0 ? [{ address: host, family: literal }] : await untilAborted((options.resolver ?? systemResolver)(host), signal);
  signal.throwIfAborted();
  const chosen = addresses[0];
  if (!chosen) throw new Refused(REASONS.unreachable);
  // Every address, not only the one dialed: a name that answers public and private addresses
  // alike is not a public name, whichever one a client would pick.
  if (!options.allowPrivate && addresses.some((a) => isBlockedAddress(a.address))) throw new Refused(REASONS.notPublic);
  // The family is read from the address itself, not taken from the resolver's word.
  const family = isIP(chosen.address.split('%')[0]!);
  if (family === 0) throw new Refused(REASONS.unreachable);
  return { address: chosen.address, family };
}

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** One GET to the checked address, with TLS checked against the URL's host name. */
function get(url: URL, target: ResolvedAddress, options: FetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const secure = url.protocol === 'https:';
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  const name = tlsName(url);
  const dial = options.connect ?? ((t: DialTarget) => netConnect({ host: t.address, port: t.port, family: t.family }));
  const createConnection: RequestOptions['createConnection'] = () => {
    const socket = dial({ address: target.address, port, family: target.family, servername: name, host: name });
    if (!secure) return socket;
    return tlsConnect({
      socket,
      // `host` is what the certificate is checked against (checkServerIdentity); SNI carries
      // names only, never an IP address (RFC 6066 3).
      host: name,
      ...(isIP(name) === 0 ? { servername: name } : {}),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      ALPNProtocols: ['http/1.1'],
    });
  };
  return new Promise((resolve, reject) => {
    // With createConnection and no agent, the request uses our socket and never resolves the
    // name itself; without an agent it also asks the server to close the connection afterwards.
    const req = (secure ? httpsRequest : httpRequest)({
      method: 'GET',
      host: hostOf(url),
      port,
      // No agent, so no agent's default port: without it the Host header would name port 443.
      defaultPort: secure ? 443 : 80,
      path: `${url.pathname}${url.search}`,
      headers: { accept: 'application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1', 'user-agent': 'Gatehouse' },
      createConnection,
      signal,
    });
    // `on`, not `once`: a socket may report a second error after the first, and an error with
    // no listener would end the process.
    req.on('error', reject);
    req.on('response', resolve);
    req.end();
  });
}

/** The body as text, refused once it passes `maxBytes` (by its announced length first, so a huge one is not read at all). */
async function readBody(response: IncomingMessage, maxBytes: number): Promise<string> {
  const announced = Number(response.headers['content-length']);
  if (Number.isFinite(announced) && announced > maxBytes) {
    response.destroy();
    throw new Refused(REASONS.tooLarge(maxBytes));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop by throwing destroys the response, and with it the connection.
    if (size > maxBytes) throw new Refused(REASONS.tooLarge(maxBytes));
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `promise`, or a rejection as soon as `signal` aborts (a resolver that never answers must not outlive the deadline). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Certificate verification failures (OpenSSL's codes, and Node's name mismatch), told apart from an unreachable server. */
function isCertificateError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.includes('CERT') || code.startsWith('UNABLE_TO_'));
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
