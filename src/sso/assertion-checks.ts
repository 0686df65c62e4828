// The checks on a SAML Response that node-saml (5.1) leaves to the service, on either side of it:
//
//   const screened = screenSamlResponse(body.SAMLResponse);          // before anything parses it
//   const signed = verifySignature(screened, certificates, { now, clockSkewMs }); // what is genuine
//   -- from here on, a refusal for any reason records signed.assertionId as used --
//   const { profile } = await saml.validatePostResponseAsync(body);   // audience, time, its own signature check
//   const accepted = checkAssertion(signed.envelope, signed.assertionXml, { acsUrl, idpEntityId, now, clockSkewMs });
//   then the open request accepted.inResponseTo names, and the assertion ID claimed once
//
// node-saml verifies the signature with the configured certificates only, refuses a second
// assertion beside the signed one, and checks the audience and the validity window. It does not
// compare the Destination or the bearer Recipient with the ACS URL, never checks the assertion's
// Issuer on a login response (its `idpIssuer` applies to logout messages only), ignores the
// Status when an assertion is present, accepts any SubjectConfirmation method, keeps no record of
// assertions already used, and its XML parser takes a DOCTYPE. (security-tests.md section G,
// items 72, 75, 76, 79, 82, 84, 85.) It also reads InResponseTo from the Response element before
// it verifies any signature, and a Response is unsigned when only its assertion is: a genuine
// assertion wrapped in a made-up Response that names someone else's open request passed it.
//
// So the service verifies the signatures itself first (verifySignature), and everything after
// reads only what a valid signature covers: the assertion as its signature (or the Response's)
// covered it, never the posted copy; InResponseTo from the assertion's bearer
// SubjectConfirmationData, or from the Response when the Response's own signature verified. The
// Response's other attributes (Destination, Issuer, Status) are read from the signed Response when
// it is signed; an unsigned Response's are still compared (a wrong one refuses), but decide
// nothing on their own: the signed Recipient and Issuer of the assertion do.
import { createRequire } from 'node:module';
import { verifiedXml } from './signature.js';

/** A SAMLResponse form field longer than this (base64 characters) is refused unread. An Entra ID
 *  response at its ceiling of 150 groups, signed twice with the certificate in each signature,
 *  is 32 KB of base64 (test/sso/saml-acs-limits.test.ts builds one); 128 KiB is four times that,
 *  room for IdPs that send more groups or their names (Okta sets no limit). */
export const MAX_SAML_RESPONSE_BASE64 = 128 * 1024;
/** Elements nested deeper than this are refused before parsing. A real response reaches 8
 *  (Response > Assertion > Signature > SignedInfo > Reference > Transforms > Transform >
 *  InclusiveNamespaces); 32 leaves room for Advice and structured attribute values. The parse
 *  itself is not the only cost: xpath, checking a signature, walks up every node's ancestors. */
export const MAX_XML_DEPTH = 32;
/** More elements and attributes (namespace declarations included) than this, counted together,
 *  are refused before parsing. Checking a signature walks the whole document with xpath (node-saml
 *  and xml-crypto look the signed element up by ID), at about 20 µs of CPU a node on this
 *  project's machines, whatever the signature turns out to be: with MAX_XML_CHILDREN and
 *  MAX_XML_DEPTH this bounds what a forged post costs to about 100 ms in the worst shapes measured
 *  (docs/sso.md). The 150-group Entra ID response has 215 elements and
 *  217 attributes; the longest group list 128 KiB holds (about 870 ids, each an element with an
 *  xsi:type) about 1,900. */
export const MAX_XML_NODES = 2_500;
/** More attributes (namespace declarations included) on one element are refused before parsing:
 *  a SAML element has about 10 at most. */
export const MAX_XML_ATTRIBUTES = 32;
/** More child elements of one element are refused before parsing: xpath sorts siblings by walking
 *  them, so their cost grows with the square of their number (2,500 under one element: 140 ms).
 *  The longest list in a real response is a group attribute's values: about 870 fit in 128 KiB. */
export const MAX_XML_CHILDREN = 1_000;

const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

/** Why a response was refused: for logs and metrics, never for the browser. */
export type SamlRefusal =
  | 'too-large'
  | 'not-base64'
  | 'doctype'
  | 'too-deep'
  | 'too-many-nodes'
  | 'too-many-attributes'
  | 'too-many-children'
  | 'malformed'
  | 'not-a-response'
  | 'assertion-count'
  | 'duplicate-id'
  | 'signature'
  | 'status'
  | 'destination'
  | 'issuer'
  | 'in-response-to'
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

/** The Response's own attributes: InResponseTo, Destination, Issuer and Status. */
export interface Envelope {
  /** true when read from a Response whose own signature verified with the connection's
   *  certificates; false when read from the posted document, which anyone may have made */
  readonly signed: boolean;
  readonly inResponseTo: string | undefined;
  readonly destination: string | undefined;
  readonly issuer: string | undefined;
  readonly statusCode: string | undefined;
}

/** The posted response, decoded and found sound enough to parse and verify. */
export interface ScreenedResponse {
  /** the Response XML: the same text node-saml decodes from the same field */
  readonly xml: string;
  /** the Response element as posted (for verifySignature) */
  readonly response: XmlElement;
  /** its attributes as posted: unsigned */
  readonly envelope: Envelope;
}

/**
 * Refuses, before any XML parser sees it, a SAMLResponse field that is too long (item 85), not
 * base64, not UTF-8, declares a DOCTYPE or an entity (item 76), or nests elements deeper than
 * MAX_XML_DEPTH, holds more than MAX_XML_NODES elements and attributes, or more than
 * MAX_XML_ATTRIBUTES attributes or MAX_XML_CHILDREN child elements on one element
 * (a cheap scan of the text: parsing and verifying such a document is what costs); then, parsed, one that is not one well-formed Response element alone at
 * the top (two roots: item 75), holds other than exactly one Assertion or EncryptedAssertion
 * anywhere, nested ones included (wrapping: item 72), or repeats an ID.
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
  scanMarkup(xml);

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
  return { xml, response, envelope: envelopeOf(response, false) };
}

/**
 * The cheap scan of screenSamlResponse: one pass over the text, before any parser, refusing
 * elements nested deeper than MAX_XML_DEPTH, more than MAX_XML_NODES elements and attributes,
 * more than MAX_XML_ATTRIBUTES attributes or MAX_XML_CHILDREN child elements on one element, and
 * an end tag
 * that does not close the element open (which xmldom would skip, nesting what follows deeper than
 * this scan counted). Comments, CDATA sections and processing instructions are stepped over;
 * anything else malformed is left to the parser.
 */
function scanMarkup(xml: string): void {
  const open: string[] = [];
  // the child elements met so far of each open element, and of the document (index 0)
  const childCounts = [0];
  let nodes = 0;
  let at = xml.indexOf('<');
  while (at !== -1) {
    let end: number;
    if (xml.startsWith('<!--', at)) end = closing(xml, '-->', at + 4);
    else if (xml.startsWith('<![CDATA[', at)) end = closing(xml, ']]>', at + 9);
    else if (xml.startsWith('<?', at)) end = closing(xml, '?>', at + 2);
    else if (xml.startsWith('<!', at)) throw new SamlResponseRefused('malformed', 'a markup declaration outside any DTD');
    else if (xml.startsWith('</', at)) {
      end = closing(xml, '>', at + 2);
      const name = xml.slice(at + 2, end - 1).trimEnd();
      if (open.pop() !== name) throw new SamlResponseRefused('malformed', `end tag </${name.slice(0, 64)}> closes no open element`);
      childCounts.pop();
    } else {
      // a start tag: up to the first '>' outside a quoted attribute value; an '=' outside one is an attribute
      let quote = '';
      let attributes = 0;
      for (end = at + 1; end < xml.length; end++) {
        const c = xml[end];
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '=') attributes++;
        else if (c === '>') break;
      }
      if (end === xml.length) throw new SamlResponseRefused('malformed', 'a start tag is not closed');
      end++;
      if (attributes > MAX_XML_ATTRIBUTES)
        throw new SamlResponseRefused('too-many-attributes', `an element with more than ${MAX_XML_ATTRIBUTES} attributes`);
      nodes += 1 + attributes;
      if (nodes > MAX_XML_NODES) throw new SamlResponseRefused('too-many-nodes', `more than ${MAX_XML_NODES} elements and attributes`);
      if (open.length + 1 > MAX_XML_DEPTH) throw new SamlResponseRefused('too-deep', `elements nested deeper than ${MAX_XML_DEPTH}`);
      if (++childCounts[open.length]! > MAX_XML_CHILDREN)
        throw new SamlResponseRefused('too-many-children', `an element with more than ${MAX_XML_CHILDREN} child elements`);
      if (xml[end - 2] !== '/') {
        open.push(/^<([^\s/>]*)/.exec(xml.slice(at, at + 256))![1]!);
        childCounts.push(0);
      }
    }
    at = xml.indexOf('<', end);
  }
}

/** Where a construct that began before `from` ends (just after `terminator`); refused if never. */
function closing(xml: string, terminator: string, from: number): number {
  const found = xml.indexOf(terminator, from);
  if (found === -1) throw new SamlResponseRefused('malformed', `"${terminator}" missing`);
  return found + terminator.length;
}

/** What of a screened response a valid signature covers. */
export interface SignedResponse {
  /** from the signed Response when its signature verified, else as posted (signed: false) */
  readonly envelope: Envelope;
  /** the Assertion exactly as a valid signature (its own, or the Response's) covers it */
  readonly assertionXml: string;
  readonly assertionId: string;
  /** Until when this assertion could be accepted (its last SubjectConfirmationData NotOnOrAfter
   *  plus the clock skew, and not before now): how long a refused one is remembered as used. */
  readonly rememberUntil: Date;
}

/**
 * Verifies the signatures of a screened response with the connection's currently valid
 * certificates (PEM) and answers what they cover: the Response as signed when its signature
 * verifies, and the one Assertion, from the signed Response or else by its own signature.
 * Refuses ('signature') a response neither of whose signatures verifies, and ('assertion') one
 * whose assertion is encrypted, not a child of the Response, or has no ID: nothing of such a
 * response is genuine, so nothing of it is ever recorded as used.
 */
export function verifySignature(screened: ScreenedResponse, certificates: readonly string[], at: { now: Date; clockSkewMs: number }): SignedResponse {
  const signedResponse = verifiedXml(screened.xml, screened.response, certificates);
  let response: XmlElement | undefined;
  let assertionXml: string | undefined;
  if (signedResponse !== undefined) {
    response = rootOf(signedResponse);
    const assertion = child(response, ASSERTION, 'Assertion');
    if (!assertion) throw new SamlResponseRefused('assertion', 'the signed Response holds no Assertion of its own');
    assertionXml = String(assertion);
  } else {
    const assertion = child(screened.response, ASSERTION, 'Assertion');
    if (!assertion) throw new SamlResponseRefused('assertion', 'the Response holds no Assertion of its own (an encrypted one is not accepted)');
    assertionXml = verifiedXml(screened.xml, assertion, certificates);
    if (assertionXml === undefined)
      throw new SamlResponseRefused('signature', "neither the Response nor the Assertion carries a valid signature by the connection's certificates");
  }
  const assertion = rootOf(assertionXml);
  if (assertion.localName !== 'Assertion' || assertion.namespaceURI !== ASSERTION)
    throw new SamlResponseRefused('assertion', 'the signed XML is not an Assertion');
  const assertionId = attribute(assertion, 'ID');
  if (!assertionId) throw new SamlResponseRefused('assertion', 'the assertion has no ID');
  let last = at.now.getTime();
  for (const confirmation of childrenNamed(child(assertion, ASSERTION, 'Subject'), ASSERTION, 'SubjectConfirmation')) {
    const notOnOrAfter = instant(attribute(child(confirmation, ASSERTION, 'SubjectConfirmationData'), 'NotOnOrAfter'));
    if (notOnOrAfter !== undefined) last = Math.max(last, notOnOrAfter + at.clockSkewMs);
  }
  return {
    envelope: response ? envelopeOf(response, true) : screened.envelope,
    assertionXml,
    assertionId,
    rememberUntil: new Date(last),
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
  /** the id of the AuthnRequest this answers, read from signed content only */
  inResponseTo: string;
  /** Keep assertionId in the replay store until then: after it, no SubjectConfirmation of the
   *  assertion is valid any more, even with the clock skew (item 82). */
  rememberUntil: Date;
}

/**
 * The checks on what verifySignature answered (after node-saml accepted the response too).
 * Requires a Success status; the Response's Destination (when present) equal to the ACS URL; the
 * Response's Issuer (when present) and the assertion's equal to the IdP's entityID (item 84); a
 * NameID; only bearer SubjectConfirmations, at least one, each with Recipient equal to the ACS URL
 * and a NotOnOrAfter (item 79) not yet past; and an InResponseTo from signed content: the bearer
 * SubjectConfirmationData's (all that carry one naming the same request), else the Response's when
 * the Response is signed. A Response's InResponseTo that names another request than the
 * assertion's is refused, signed or not; an unsigned one alone is not enough (an assertion made
 * for no request, wrapped in a Response that names one, is exactly what it would let through).
 */
export function checkAssertion(envelope: Envelope, verifiedAssertionXml: string, expected: ExpectedAssertion): AcceptedAssertion {
  if (!(expected.clockSkewMs >= 0)) throw new Error('clockSkewMs must be zero or more');
  if (envelope.statusCode !== SUCCESS) throw new SamlResponseRefused('status', `status ${envelope.statusCode ?? 'missing'}`);
  if (envelope.destination !== undefined && envelope.destination !== expected.acsUrl)
    throw new SamlResponseRefused('destination', `Destination ${envelope.destination} is not this connection's ACS URL`);
  if (expected.idpEntityId !== undefined && envelope.issuer !== undefined && envelope.issuer !== expected.idpEntityId)
    throw new SamlResponseRefused('issuer', `Response Issuer ${envelope.issuer} is not the connection's IdP`);

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
  const requests = new Set<string>();
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
    const request = attribute(data, 'InResponseTo');
    if (request) requests.add(request);
  }
  // node-saml checked this too; repeated so that its configuration cannot switch it off
  // (acceptedClockSkewMs: -1 disables its time checks: item 80)
  if (lastValid <= expected.now.getTime()) throw new SamlResponseRefused('expired', 'every SubjectConfirmation has expired');

  // SAML profiles §4.1.4.2: a response to an AuthnRequest carries its id in the bearer
  // SubjectConfirmationData (Entra ID, Okta, Google, ADFS and Shibboleth all send it there)
  if (requests.size > 1) throw new SamlResponseRefused('in-response-to', 'the SubjectConfirmations answer different requests');
  const [confirmed] = requests;
  if (envelope.inResponseTo !== undefined && confirmed !== undefined && envelope.inResponseTo !== confirmed)
    throw new SamlResponseRefused('in-response-to', 'the Response and its assertion answer different requests');
  const inResponseTo = confirmed ?? (envelope.signed ? envelope.inResponseTo : undefined);
  if (!inResponseTo)
    throw new SamlResponseRefused(
      'in-response-to',
      envelope.inResponseTo === undefined
        ? 'no InResponseTo: an unsolicited (IdP-initiated) response'
        : 'the only InResponseTo is on an unsigned Response, and the assertion names no request',
    );
  return { assertionId, nameId, inResponseTo, rememberUntil: new Date(lastValid) };
}

/** A Response's own attributes, as read from `response` (signed or as posted). */
function envelopeOf(response: XmlElement, signed: boolean): Envelope {
  return {
    signed,
    inResponseTo: attribute(response, 'InResponseTo') || undefined,
    destination: attribute(response, 'Destination'),
    issuer: child(response, ASSERTION, 'Issuer')?.textContent ?? undefined,
    statusCode: attribute(child(child(response, PROTOCOL, 'Status'), PROTOCOL, 'StatusCode'), 'Value'),
  };
}

/** The root element of XML a signature covered (well-formed: xml-crypto serialised it). */
function rootOf(xml: string): XmlElement {
  const roots = children(parseStrictly(xml)).filter(isElement);
  if (roots.length !== 1) throw new SamlResponseRefused('assertion', 'the signed XML is not one element');
  return roots[0]!;
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
export interface XmlElement extends XmlNode {
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
