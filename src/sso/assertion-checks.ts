// The checks on a SAML Response that node-saml (5.1) leaves to the service, on either side of it:
//
//   const screened = screenSamlResponse(body.SAMLResponse);         // before anything parses it
//   const { profile } = await saml.validatePostResponseAsync(body);  // signature, audience, time, InResponseTo
//   const accepted = checkAssertion(screened, profile.getAssertionXml(), { acsUrl, idpEntityId, now, clockSkewMs });
//   then claim accepted.assertionId in the replay store until accepted.rememberUntil, once
//
// node-saml verifies the signature with the configured certificates only, refuses a second
// assertion beside the signed one, and checks the audience, the validity window and (with
// validateInResponseTo: 'always') InResponseTo. It does not compare the Destination or the bearer
// Recipient with the ACS URL, never checks the assertion's Issuer on a login response (its
// `idpIssuer` applies to logout messages only), ignores the Status when an assertion is present,
// accepts any SubjectConfirmation method, keeps no record of assertions already used, and its
// XML parser takes a DOCTYPE. (security-tests.md section G, items 72, 75, 76, 79, 82, 84, 85.)
//
// Everything after screening reads the assertion node-saml returns from the bytes its signature
// covered (profile.getAssertionXml(): xml-crypto's signed reference), never the posted document,
// whose parts outside the signature an attacker may have changed. The posted document only
// supplies the Response's envelope (Destination, Issuer, Status), which is compared, never used.
import { createRequire } from 'node:module';

/** A SAMLResponse form field longer than this (base64 characters) is refused unread. */
export const MAX_SAML_RESPONSE_BASE64 = 256 * 1024;

const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

/** Why a response was refused: for logs and metrics, never for the browser. */
export type SamlRefusal =
  | 'too-large'
  | 'not-base64'
  | 'doctype'
  | 'malformed'
  | 'not-a-response'
  | 'assertion-count'
  | 'duplicate-id'
  | 'status'
  | 'destination'
  | 'issuer'
  | 'assertion'
  | 'subject-confirmation'
  | 'recipient'
  | 'expired';

/** The message says what was wrong, for the log; the browser is told only that sign-in failed
 *  (parser messages in particular must not be echoed: security-tests.md item 76). */
export class SamlResponseRefused extends Error {
  override readonly name = 'SamlResponseRefused';
  constructor(
    readonly reason: SamlRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** The posted response, decoded and found sound enough to hand to node-saml. */
export interface ScreenedResponse {
  /** the Response XML: the same text node-saml decodes from the same field */
  readonly xml: string;
  /** the envelope's attributes, unsigned unless the Response was signed */
  readonly destination: string | undefined;
  readonly issuer: string | undefined;
  readonly statusCode: string | undefined;
}

/**
 * Refuses, before any XML parser of node-saml's sees it, a SAMLResponse field that is too long
 * (item 85), not base64, not UTF-8, declares a DOCTYPE or an entity (item 76), is not one
 * well-formed Response element alone at the top (two roots: item 75), holds other than exactly
 * one Assertion or EncryptedAssertion anywhere, nested ones included (wrapping: item 72), or
 * repeats an ID.
 */
export function screenSamlResponse(samlResponse: string): ScreenedResponse {
  if (samlResponse.length > MAX_SAML_RESPONSE_BASE64) throw new SamlResponseRefused('too-large', `SAMLResponse of ${samlResponse.length} characters`);
  // IdPs may wrap base64 in lines; anything else outside the alphabet Buffer would skip silently
  const base64 = samlResponse.replace(/\s+/g, '');
  if (base64 === '' || base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64))
    throw new SamlResponseRefused('not-base64', 'SAMLResponse is not base64');
  let xml: string;
  try {
    xml = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(base64, 'base64'));
  } catch {
    throw new SamlResponseRefused('malformed', 'SAMLResponse is not UTF-8');
  }
  // SAML has no use for a DTD (Kantara saml2int forbids them); refusing the text outright, even
  // inside a comment, leaves no parser a chance to expand or fetch anything.
  if (/<!(DOCTYPE|ENTITY)/i.test(xml)) throw new SamlResponseRefused('doctype', 'SAMLResponse declares a DOCTYPE or an entity');

  const document = parseStrictly(xml);
  const top = children(document);
  const roots = top.filter(isElement);
  const strayText = top.some((node) => (node.nodeType === TEXT_NODE && node.nodeValue?.trim()) || node.nodeType === CDATA_NODE);
  if (roots.length !== 1 || strayText) throw new SamlResponseRefused('malformed', 'SAMLResponse is not one root element alone');
  const response = roots[0]!;
  if (response.localName !== 'Response' || response.namespaceURI !== PROTOCOL)
    throw new SamlResponseRefused('not-a-response', `SAMLResponse is a ${response.localName}, not a protocol Response`);

  const elements = descendants(response);
  // By local name, as node-saml selects them: an "Assertion" in a made-up namespace still counts.
  const assertions = elements.filter((e) => e.localName === 'Assertion' || e.localName === 'EncryptedAssertion').length;
  if (assertions !== 1) throw new SamlResponseRefused('assertion-count', `SAMLResponse holds ${assertions} assertions`);
  const ids = new Set<string>();
  for (const e of elements) {
    const id = e.getAttribute('ID');
    if (!id) continue;
    if (ids.has(id)) throw new SamlResponseRefused('duplicate-id', `ID ${id} appears twice`);
    ids.add(id);
  }

  const statusCode = child(child(response, PROTOCOL, 'Status'), PROTOCOL, 'StatusCode');
  return {
    xml,
    destination: attribute(response, 'Destination'),
    issuer: child(response, ASSERTION, 'Issuer')?.textContent ?? undefined,
    statusCode: attribute(statusCode, 'Value'),
  };
}

export interface ExpectedAssertion {
  /** the ACS URL this connection put in its AuthnRequest, compared exactly */
  acsUrl: string;
  /** the connection's IdP entityID; unknown for a connection configured by hand without one
   *  (docs/sso.md), when the signature by its certificate alone says who made the response */
  idpEntityId: string | undefined;
  now: Date;
  /** the skew node-saml was given (acceptedClockSkewMs); never negative */
  clockSkewMs: number;
}

export interface AcceptedAssertion {
  assertionId: string;
  /** the NameID's whole text (a comment inside it splits nothing: item 73) */
  nameId: string;
  /** Keep assertionId in the replay store until then: after it, no SubjectConfirmation of the
   *  assertion is valid any more, even with the clock skew (item 82). */
  rememberUntil: Date;
}

/**
 * The checks after node-saml accepted the response. `verifiedAssertionXml` is node-saml's
 * profile.getAssertionXml(): the assertion as its signature covered it. Requires a Success
 * status; the Response's Destination (when present) equal to the ACS URL; the Response's Issuer
 * (when present) and the assertion's equal to the IdP's entityID (item 84); a NameID; and only
 * bearer SubjectConfirmations, at least one, each with Recipient equal to the ACS URL and a
 * NotOnOrAfter (item 79) not yet past.
 */
export function checkAssertion(screened: ScreenedResponse, verifiedAssertionXml: string, expected: ExpectedAssertion): AcceptedAssertion {
  if (!(expected.clockSkewMs >= 0)) throw new Error('clockSkewMs must be zero or more');
  if (screened.statusCode !== SUCCESS) throw new SamlResponseRefused('status', `status ${screened.statusCode ?? 'missing'}`);
  if (screened.destination !== undefined && screened.destination !== expected.acsUrl)
    throw new SamlResponseRefused('destination', `Destination ${screened.destination} is not this connection's ACS URL`);
  if (expected.idpEntityId !== undefined && screened.issuer !== undefined && screened.issuer !== expected.idpEntityId)
    throw new SamlResponseRefused('issuer', `Response Issuer ${screened.issuer} is not the connection's IdP`);

  const roots = children(parseStrictly(verifiedAssertionXml)).filter(isElement);
  const assertion = roots[0];
  if (roots.length !== 1 || assertion?.localName !== 'Assertion' || assertion.namespaceURI !== ASSERTION)
    throw new SamlResponseRefused('assertion', 'the verified XML is not one Assertion');
  const assertionId = attribute(assertion, 'ID');
  if (!assertionId) throw new SamlResponseRefused('assertion', 'the assertion has no ID');
  const issuer = child(assertion, ASSERTION, 'Issuer')?.textContent;
  if (expected.idpEntityId !== undefined && issuer !== expected.idpEntityId)
    throw new SamlResponseRefused('issuer', `assertion Issuer ${issuer ?? 'missing'} is not the connection's IdP`);
  const subject = child(assertion, ASSERTION, 'Subject');
  // textContent joins every text node and skips comments: the whole NameID, never its first part
  const nameId = child(subject, ASSERTION, 'NameID')?.textContent;
  if (!nameId) throw new SamlResponseRefused('assertion', 'the assertion has no NameID');

  const confirmations = childrenNamed(subject, ASSERTION, 'SubjectConfirmation');
  if (confirmations.length === 0) throw new SamlResponseRefused('subject-confirmation', 'no SubjectConfirmation');
  let lastValid = Number.NEGATIVE_INFINITY;
  for (const confirmation of confirmations) {
    // node-saml accepts the first time-valid confirmation of any method; a holder-of-key one
    // would then pass without its key ever being proven. Web SSO is bearer only.
    if (attribute(confirmation, 'Method') !== BEARER)
      throw new SamlResponseRefused('subject-confirmation', 'a SubjectConfirmation that is not bearer');
    const data = child(confirmation, ASSERTION, 'SubjectConfirmationData');
    const recipient = attribute(data, 'Recipient');
    if (recipient !== expected.acsUrl)
      throw new SamlResponseRefused('recipient', `Recipient ${recipient ?? 'missing'} is not this connection's ACS URL`);
    const notOnOrAfter = instant(attribute(data, 'NotOnOrAfter'));
    if (notOnOrAfter === undefined) throw new SamlResponseRefused('subject-confirmation', 'a bearer SubjectConfirmation without NotOnOrAfter');
    lastValid = Math.max(lastValid, notOnOrAfter + expected.clockSkewMs);
  }
  // node-saml checked this too; repeated so that its configuration cannot switch it off
  // (acceptedClockSkewMs: -1 disables its time checks: item 80)
  if (lastValid <= expected.now.getTime()) throw new SamlResponseRefused('expired', 'every SubjectConfirmation has expired');
  return { assertionId, nameId, rememberUntil: new Date(lastValid) };
}

/** An xs:dateTime in UTC, as SAML requires (core §1.3.3); anything else is undefined. */
function instant(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

// @xmldom/xmldom (the parser node-saml and xml-crypto use) is loaded with require() and typed
// here by the little this module reads: its own declarations pull TypeScript's DOM library into
// the whole program (`/// <reference lib="dom" />`), browser globals a Node service must not have.
interface XmlNode {
  readonly nodeType: number;
  readonly nodeValue: string | null;
  readonly textContent: string | null;
  readonly childNodes: { readonly length: number; item(index: number): XmlNode | null };
}
interface XmlElement extends XmlNode {
  readonly localName: string;
  readonly namespaceURI: string | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}
interface XmldomModule {
  DOMParser: new (options: {
    locator: object;
    errorHandler: { warning(message: string): void; error(message: string): void; fatalError(message: string): void };
  }) => { parseFromString(xml: string, mimeType: string): XmlNode };
}
const { DOMParser } = createRequire(import.meta.url)('@xmldom/xmldom') as XmldomModule;

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_NODE = 4;

/** xmldom reports many faults as warnings or errors and carries on; here the first one refuses.
 *  (xmldom catches some of what its handlers throw and reports it again, so the first report is
 *  kept rather than whatever comes out.) */
function parseStrictly(xml: string): XmlNode {
  let fault: string | undefined;
  const refuse = (message: string): never => {
    fault ??= message.split('\n')[0]!;
    throw new SamlResponseRefused('malformed', `not well-formed XML: ${fault}`);
  };
  try {
    const document = new DOMParser({ locator: {}, errorHandler: { warning: refuse, error: refuse, fatalError: refuse } }).parseFromString(
      xml,
      'text/xml',
    );
    if (fault === undefined) return document;
  } catch (error) {
    if (fault === undefined) throw error;
  }
  throw new SamlResponseRefused('malformed', `not well-formed XML: ${fault}`);
}

function isElement(node: XmlNode): node is XmlElement {
  return node.nodeType === ELEMENT_NODE;
}

function children(node: XmlNode): XmlNode[] {
  const list: XmlNode[] = [];
  for (let i = 0; i < node.childNodes.length; i++) list.push(node.childNodes.item(i)!);
  return list;
}

/** The element and every element below it; without recursion, which a deeply nested document
 *  would turn into a stack overflow. */
function descendants(element: XmlElement): XmlElement[] {
  const found: XmlElement[] = [];
  const pending = [element];
  for (let next = pending.pop(); next; next = pending.pop()) {
    found.push(next);
    for (const node of children(next)) if (isElement(node)) pending.push(node);
  }
  return found;
}

/** The child elements with this name, by namespace and local name. */
function childrenNamed(parent: XmlElement | undefined, namespace: string, localName: string): XmlElement[] {
  if (!parent) return [];
  return children(parent).filter((n): n is XmlElement => isElement(n) && n.localName === localName && n.namespaceURI === namespace);
}

function child(parent: XmlElement | undefined, namespace: string, localName: string): XmlElement | undefined {
  return childrenNamed(parent, namespace, localName)[0];
}

function attribute(element: XmlElement | undefined, name: string): string | undefined {
  return element?.hasAttribute(name) ? (element.getAttribute(name) ?? undefined) : undefined;
}
