// A real SAML 2.0 identity provider inside a test: samlify (2.13) in its IdP role parses and checks
// the SP's AuthnRequest (schema, and its signature when asked to) and publishes the metadata; the
// response is samlify's template signed by samlify's signer (saml-idp/response.ts). It serves
// HTTP on loopback like any IdP, so the service under test can fetch its metadata and a browser
// can walk the whole sign-in; and it can answer with each of the attacks in `Tamper`, which is
// what the SP's security tests need an IdP for.
//
//   const idp = await startTestIdp();
//   idp.setUser('alice@corp.test', { displayName: 'Alice' });
//   const post = await idp.respond(redirectUrlFromTheSp);            // or { tamper: 'expired' }
//   await fetch(post.acsUrl, { method: 'POST', body: post.form });
//   await idp.close();
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { html } from '../../src/http/pages/html.js';
import { createKeyPair, type KeyPair } from './saml-idp/keys.js';
import { buildResponse, type ResponseFields, type Tamper } from './saml-idp/response.js';
import { type IdentityProvider, type ServiceProvider, samlify } from './saml-idp/samlify.js';

export { COMMENT_SUFFIX, FORGED_NAME_ID, type Tamper, XSLT_TRANSFORM } from './saml-idp/response.js';
export { createKeyPair, type KeyPair } from './saml-idp/keys.js';

const { namespace } = samlify.Constants;

export interface TestIdpOptions {
  /** default: the metadata URL, as many IdPs do */
  entityId?: string;
  /** listen address, also the host of every URL; default 127.0.0.1 */
  host?: string;
  /** When set (PEM or base64), AuthnRequests must be signed by this SP certificate; the
   *  metadata then says WantAuthnRequestsSigned="true". Default: signatures are not checked. */
  spSigningCertificate?: string;
  /** The page GET /sso answers posts itself with a line of script (default); false leaves the
   *  post to a click on `#idp-continue`, for browser tests that look at the page first. */
  autoSubmit?: boolean;
}

export type Attributes = Readonly<Record<string, string | readonly string[]>>;

/** How to answer one AuthnRequest. Every field has a default that makes a valid response. */
export interface RespondOptions {
  /** default: the email given to setUser (alice@corp.test until then) */
  nameId?: string;
  /** an attack; its settings (see TAMPERS) sit under the explicit fields of these options */
  tamper?: Tamper;
  /** default current; 'rollover' needs addSigningKey(); 'attacker' is a key pair of its own,
   *  never published, whose certificate goes in KeyInfo as an attacker's would */
  signWith?: 'current' | 'rollover' | 'attacker';
  /** sign the Response element (default true) */
  signResponse?: boolean;
  /** sign the Assertion (default true) */
  signAssertion?: boolean;
  /** default: the SP entityID (the AuthnRequest's Issuer) */
  audience?: string;
  /** SubjectConfirmationData Recipient; default the ACS URL of the AuthnRequest */
  recipient?: string;
  /** the Response's Destination; default the ACS URL of the AuthnRequest */
  destination?: string;
  /** default the AuthnRequest's ID; null leaves InResponseTo out everywhere (unsolicited) */
  inResponseTo?: string | null;
  /** default now */
  issueInstant?: Date;
  /** Conditions NotBefore; default now */
  notBefore?: Date;
  /** Conditions and SubjectConfirmationData NotOnOrAfter; default now + 5 minutes */
  notOnOrAfter?: Date;
  /** Response and Assertion Issuer; default the IdP's entityID */
  issuer?: string;
  /** the signatures' Reference transforms, as algorithm URIs; default samlify's: enveloped-signature, then exclusive c14n */
  transforms?: readonly string[];
}

/** What the IdP posts back to the SP (HTTP-POST binding), and what went into it. */
export interface SamlPost {
  acsUrl: string;
  SAMLResponse: string;
  RelayState: string | undefined;
  /** the form body to POST to acsUrl */
  form: URLSearchParams;
  /** the Response XML (what SAMLResponse encodes) */
  xml: string;
  requestId: string;
  responseId: string;
  assertionId: string;
}

/** An AuthnRequest as the IdP understood it. */
export interface AuthnRequestInfo {
  id: string;
  /** the SP entityID */
  issuer: string;
  acsUrl: string;
  relayState: string | undefined;
  binding: 'redirect' | 'post';
  /** whether a signature was required and verified */
  signed: boolean;
}

const MINUTE = 60_000;

/** the HTTP request as samlify's parseLoginRequest takes it */
type IdpRequest = Parameters<IdentityProvider['parseLoginRequest']>[2];

/** What each attack sets; the structural ones (wrapping, comments, DOCTYPE, two roots, the
 *  signature's References and transforms) are made while the response is built and signed, in
 *  saml-idp/response.ts. */
const TAMPERS: Record<Tamper, (request: AuthnRequestInfo, now: number) => RespondOptions> = {
  // neither the Response nor the Assertion signed
  unsigned: () => ({ signResponse: false, signAssertion: false }),
  // signed by a key the SP was never given, its certificate in KeyInfo (CVE-2024-32962)
  'attacker-key': () => ({ signWith: 'attacker' }),
  // the signed assertion plus an unsigned one for FORGED_NAME_ID beside it
  'wrap-sibling': () => ({}),
  // the signed assertion inside <samlp:Extensions>, a forged one with its ID in its place
  'wrap-extensions': () => ({}),
  // a forged assertion with the genuine one's ID, the signature (in it) holding the genuine one in <ds:Object>
  'wrap-object': () => ({}),
  // NameID "<nameId><!---->.evil.test", validly signed
  'comment-in-nameid': () => ({}),
  // another connection's SP entityID as Audience
  'wrong-audience': (r) => ({ audience: new URL('/sso/saml/another-connection/metadata', r.acsUrl).href }),
  // a second AudienceRestriction, naming another connection's SP entityID, validly signed
  'extra-audience-restriction': () => ({}),
  // issued 15 and expired 10 minutes ago: beyond any clock skew an SP may allow (3 minutes)
  expired: (_r, now) => ({
    issueInstant: new Date(now - 15 * MINUTE),
    notBefore: new Date(now - 15 * MINUTE),
    notOnOrAfter: new Date(now - 10 * MINUTE),
  }),
  // valid from 10 minutes from now
  'not-yet-valid': (_r, now) => ({ notBefore: new Date(now + 10 * MINUTE), notOnOrAfter: new Date(now + 15 * MINUTE) }),
  // InResponseTo a request the SP never issued
  'unknown-in-response-to': () => ({ inResponseTo: `_never-issued-${Math.random().toString(16).slice(2)}` }),
  // no InResponseTo at all (IdP-initiated)
  unsolicited: () => ({ inResponseTo: null }),
  // Destination and Recipient name another connection's ACS
  'other-acs': (r) => {
    const other = new URL('/sso/saml/another-connection/acs', r.acsUrl).href;
    return { destination: other, recipient: other };
  },
  // another IdP's entityID as Issuer, signed with this IdP's key
  'wrong-issuer': () => ({ issuer: 'https://another-idp.test/saml' }),
  // <!DOCTYPE> with an entity declaration before the signed response
  doctype: () => ({}),
  // the signed response followed by a second root element (a forged assertion)
  'two-roots': () => ({}),
  // the assertion's NameID made FORGED_NAME_ID, its digest in a comment in DigestValue (CVE-2025-29775)
  'comment-in-digest': () => ({}),
  // the assertion signed (by this IdP's key) with two References: the assertion and the Response
  'two-references': () => ({}),
  // the assertion signed (by this IdP's key) with an XSLT transform in place of exclusive c14n
  'xslt-transform': () => ({}),
};

export async function startTestIdp(options: TestIdpOptions = {}): Promise<TestIdp> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-test-idp-'));
  try {
    const current = await createKeyPair(dir, 'current');
    const idp = new TestIdp(options, dir, current);
    await idp.listen();
    return idp;
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

export class TestIdp {
  #entityId = '';
  #baseUrl = '';
  #user: { email: string; attributes: Attributes } = { email: 'alice@corp.test', attributes: {} };
  #defaults: RespondOptions = {};
  #keys: { current: KeyPair; rollover?: KeyPair; attacker?: Promise<KeyPair> };
  // samlify's IdP entity: parses AuthnRequests and writes the metadata; rebuilt when keys change
  #entity!: IdentityProvider;
  // the SP as samlify needs to see it to parse a request: only its signing certificate matters
  readonly #sp: ServiceProvider;
  readonly #server: Server;
  readonly #requests: AuthnRequestInfo[] = [];
  readonly #options: TestIdpOptions;
  // where the key pairs are made; removed by close()
  readonly #dir: string;

  constructor(options: TestIdpOptions, dir: string, current: KeyPair) {
    this.#options = options;
    this.#dir = dir;
    this.#keys = { current };
    this.#sp = samlify.ServiceProvider({
      entityID: 'urn:gatehouse:test-idp:any-sp',
      ...(options.spSigningCertificate === undefined ? {} : { signingCert: options.spSigningCertificate }),
    });
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(error.message);
      });
    });
  }

  /** @internal startTestIdp calls it */
  async listen(): Promise<void> {
    const host = this.#options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, host, resolve);
    });
    const { port } = this.#server.address() as AddressInfo;
    this.#baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.#entityId = this.#options.entityId ?? this.metadataUrl;
    this.#rebuildEntity();
  }

  get entityId(): string {
    return this.#entityId;
  }
  get metadataUrl(): string {
    return `${this.#baseUrl}/metadata`;
  }
  /** SingleSignOnService, HTTP-Redirect and HTTP-POST bindings */
  get ssoUrl(): string {
    return `${this.#baseUrl}/sso`;
  }
  /** the certificate of the key that signs by default */
  get certificatePem(): string {
    return this.#keys.current.certificatePem;
  }
  get certificateBase64(): string {
    return this.#keys.current.certificateBase64;
  }
  /** the metadata document served at metadataUrl */
  get metadata(): string {
    return this.#entity.getMetadata();
  }
  /** every AuthnRequest received, oldest first */
  get requests(): readonly AuthnRequestInfo[] {
    return this.#requests;
  }

  /** Who signs in next; the IdP approves without asking. */
  setUser(email: string, attributes: Attributes = {}): void {
    this.#user = { email, attributes };
  }

  /** Options for every later response, those the HTTP side (GET or POST /sso) sends included;
   *  a respond() call's own options override them. Replaces the defaults set before. */
  setResponseDefaults(options: RespondOptions): void {
    this.#defaults = { ...options };
  }

  /** Key rollover, first step: a second key pair, whose certificate the metadata lists after the
   *  current one. It signs only when asked (signWith: 'rollover') until completeRollover(). */
  async addSigningKey(): Promise<KeyPair> {
    this.#keys.rollover = await createKeyPair(this.#dir, `rollover-${Date.now()}`);
    this.#rebuildEntity();
    return this.#keys.rollover;
  }

  /** Key rollover, last step: the rollover key becomes the current one and the old certificate
   *  leaves the metadata. */
  completeRollover(): void {
    const { rollover } = this.#keys;
    if (!rollover) throw new Error('completeRollover() before addSigningKey()');
    this.#keys = { current: rollover, ...(this.#keys.attacker ? { attacker: this.#keys.attacker } : {}) };
    this.#rebuildEntity();
  }

  /** Answers the HTTP-Redirect binding URL the SP sent the browser to (SAMLRequest, RelayState,
   *  and SigAlg + Signature when signed) with what the IdP would POST back. */
  async respond(redirectUrl: string, options: RespondOptions = {}): Promise<SamlPost> {
    return this.#answer(await this.#parseRedirect(redirectUrl), options);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    await rm(this.#dir, { recursive: true, force: true });
  }

  async #parseRedirect(redirectUrl: string): Promise<AuthnRequestInfo> {
    const url = new URL(redirectUrl);
    this.#checkDestination(url);
    const query = Object.fromEntries(url.searchParams);
    return this.#parse('redirect', { query, octetString: signedOctets(url.search) }, query.RelayState);
  }

  async #parse(binding: 'redirect' | 'post', message: IdpRequest, relayState: string | undefined): Promise<AuthnRequestInfo> {
    const { extract } = await this.#entity.parseLoginRequest(this.#sp, binding, message);
    const request = extract.request;
    const id = request?.id;
    const issuer = typeof extract.issuer === 'string' ? extract.issuer : undefined;
    const acsUrl = request?.assertionConsumerServiceUrl;
    if (!id || !issuer) throw new Error('the AuthnRequest has no ID or no Issuer');
    // A real IdP would look the ACS up in the SP's metadata; this one has none, so the SP must
    // name it (node-saml does, unless disableRequestAcsUrl is set).
    if (!acsUrl) throw new Error('the AuthnRequest names no AssertionConsumerServiceURL');
    if (request.destination !== undefined && request.destination !== this.ssoUrl)
      throw new Error(`the AuthnRequest is for ${request.destination}, not this IdP (${this.ssoUrl})`);
    const info: AuthnRequestInfo = { id, issuer, acsUrl, relayState, binding, signed: this.#options.spSigningCertificate !== undefined };
    this.#requests.push(info);
    return info;
  }

  #checkDestination(url: URL): void {
    if (`${url.origin}${url.pathname}` !== this.ssoUrl) throw new Error(`${url.origin}${url.pathname} is not this IdP's SSO URL (${this.ssoUrl})`);
  }

  async #answer(request: AuthnRequestInfo, options: RespondOptions): Promise<SamlPost> {
    const now = Date.now();
    const tamper = options.tamper ?? this.#defaults.tamper;
    const o: RespondOptions = { ...this.#defaults, ...(tamper ? TAMPERS[tamper](request, now) : {}), ...options };
    const key = await this.#key(o.signWith ?? 'current');
    const fields: ResponseFields = {
      issuer: o.issuer ?? this.#entityId,
      nameId: o.nameId ?? this.#user.email,
      attributes: this.#user.attributes,
      audience: o.audience ?? request.issuer,
      destination: o.destination ?? request.acsUrl,
      recipient: o.recipient ?? request.acsUrl,
      inResponseTo: o.inResponseTo === undefined ? request.id : o.inResponseTo,
      issueInstant: o.issueInstant ?? new Date(now),
      notBefore: o.notBefore ?? new Date(now),
      notOnOrAfter: o.notOnOrAfter ?? new Date(now + 5 * MINUTE),
      assertionKey: o.signAssertion === false ? null : key,
      responseKey: o.signResponse === false ? null : key,
      tamper,
      transforms: o.transforms,
    };
    const built = buildResponse(fields);
    const SAMLResponse = Buffer.from(built.xml, 'utf8').toString('base64');
    const form = new URLSearchParams({ SAMLResponse });
    if (request.relayState !== undefined) form.set('RelayState', request.relayState);
    return { acsUrl: request.acsUrl, SAMLResponse, RelayState: request.relayState, form, ...built, requestId: request.id };
  }

  #key(which: 'current' | 'rollover' | 'attacker'): Promise<KeyPair> {
    if (which === 'current') return Promise.resolve(this.#keys.current);
    if (which === 'rollover') {
      if (!this.#keys.rollover) throw new Error("signWith: 'rollover' before addSigningKey()");
      return Promise.resolve(this.#keys.rollover);
    }
    this.#keys.attacker ??= createKeyPair(this.#dir, 'attacker', 'attacker.test');
    return this.#keys.attacker;
  }

  #rebuildEntity(): void {
    const { current, rollover } = this.#keys;
    this.#entity = withoutSloWarning(() =>
      samlify.IdentityProvider({
        entityID: this.#entityId,
        privateKey: current.privateKeyPem,
        signingCert: rollover ? [current.certificatePem, rollover.certificatePem] : current.certificatePem,
        wantAuthnRequestsSigned: this.#options.spSigningCertificate !== undefined,
        nameIDFormat: [namespace.format.emailAddress],
        singleSignOnService: [
          { Binding: namespace.binding.redirect, Location: this.ssoUrl },
          { Binding: namespace.binding.post, Location: this.ssoUrl },
        ],
      }),
    );
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.#baseUrl);
    if (req.method === 'GET' && url.pathname === '/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(this.metadata);
      return;
    }
    if (url.pathname !== '/sso' || (req.method !== 'GET' && req.method !== 'POST')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    let request: AuthnRequestInfo;
    try {
      if (req.method === 'GET') request = await this.#parseRedirect(url.href);
      else {
        const body = await readForm(req);
        request = await this.#parse('post', { body }, body.RelayState);
      }
    } catch (error) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`the test IdP refused the AuthnRequest: ${(error as Error).message}`);
      return;
    }
    const post = await this.#answer(request, {});
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(this.#page(post, request));
  }

  #page(post: SamlPost, request: AuthnRequestInfo): string {
    const autoSubmit = this.#options.autoSubmit ?? true;
    return `<!doctype html>\n${html`<html lang="en">
<head><meta charset="utf-8"><title>Test IdP</title></head>
<body>
<h1>Test identity provider</h1>
<p>Signing in as <strong id="idp-user">${this.#user.email}</strong> to ${request.issuer}.</p>
<form id="idp-form" method="post" action="${post.acsUrl}">
<input type="hidden" name="SAMLResponse" value="${post.SAMLResponse}">
${post.RelayState === undefined ? '' : html`<input type="hidden" name="RelayState" value="${post.RelayState}">`}
<button id="idp-continue" type="submit">Continue</button>
</form>
${autoSubmit ? html`<script>document.getElementById('idp-form').submit();</script>` : ''}
</body>
</html>
`}`;
  }
}

/** The octets an HTTP-Redirect signature covers (SAML bindings §3.4.4.1): the parameters exactly
 *  as they appear, URL-encoded, in the order SAMLRequest, RelayState, SigAlg. */
function signedOctets(search: string): string {
  const raw = new Map(
    search
      .replace(/^\?/, '')
      .split('&')
      .map((pair) => [pair.split('=')[0]!, pair] as const),
  );
  return ['SAMLRequest', 'RelayState', 'SigAlg']
    .map((name) => raw.get(name))
    .filter((pair) => pair !== undefined)
    .join('&');
}

async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 1_000_000) throw new Error('AuthnRequest form over 1 MB');
  }
  return Object.fromEntries(new URLSearchParams(body));
}

// samlify warns on stderr, on every construction, that the IdP has no SingleLogoutService. This
// IdP has none on purpose (the service does not do single logout), so the warning is only noise.
function withoutSloWarning<T>(build: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('missing endpoint of SingleLogoutService')) warn(...args);
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}
