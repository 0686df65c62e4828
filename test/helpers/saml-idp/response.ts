// Builds the SAML Response the test IdP posts back: samlify's own login-response template, signed
// by samlify's signer (xml-crypto, exclusive c14n, RSA-SHA256, the certificate in KeyInfo), exactly
// as samlify's IdentityProvider.createLoginResponse does it. The steps are spelled out here rather
// than left to createLoginResponse because the attacks need to act between them: a comment goes
// in before signing, wrapping and extra roots after, and "unsigned" skips signing altogether,
// which createLoginResponse cannot do.
import { randomUUID } from 'node:crypto';
import type { KeyPair } from './keys.js';
import { samlify } from './samlify.js';

const { SamlLib, Constants } = samlify;

/** The attacks the harness can mount; see `TAMPERS` for what each one does. */
export type Tamper =
  | 'unsigned'
  | 'attacker-key'
  | 'wrap-sibling'
  | 'wrap-extensions'
  | 'comment-in-nameid'
  | 'wrong-audience'
  | 'expired'
  | 'not-yet-valid'
  | 'unknown-in-response-to'
  | 'unsolicited'
  | 'other-acs'
  | 'wrong-issuer'
  | 'doctype'
  | 'two-roots';

/** The NameID of the forged, unsigned assertion in the wrapping attacks: it must never sign in. */
export const FORGED_NAME_ID = 'admin@corp.test';
/** What the comment attack turns the NameID into: `<nameId><!---->.evil.test`. */
export const COMMENT_SUFFIX = '.evil.test';

/** Everything that goes into one response, resolved (defaults filled in, tamper applied). */
export interface ResponseFields {
  issuer: string;
  nameId: string;
  attributes: Readonly<Record<string, string | readonly string[]>>;
  audience: string;
  destination: string;
  recipient: string;
  /** null: no InResponseTo anywhere (an unsolicited response) */
  inResponseTo: string | null;
  issueInstant: Date;
  notBefore: Date;
  notOnOrAfter: Date;
  /** null: not signed */
  assertionKey: KeyPair | null;
  responseKey: KeyPair | null;
  tamper: Tamper | undefined;
}

export interface BuiltResponse {
  xml: string;
  responseId: string;
  assertionId: string;
}

const ASSERTION_XPATH = "/*[local-name(.)='Response']/*[local-name(.)='Assertion']";

export function buildResponse(f: ResponseFields): BuiltResponse {
  const responseId = newId();
  const assertionId = newId();
  let nameId = escapeXml(f.nameId);
  // Inserted before signing, as an IdP holding an account named "alice@corp.test.evil.test" would
  // sign it: exclusive c14n drops comments, so the signature covers the text without it and stays
  // valid whether the comment was there at signing or added later. An SP that reads only the first
  // text node sees "alice@corp.test" (the saml2-js advisory GHSA-5p5w-j3g7-w4wv).
  if (f.tamper === 'comment-in-nameid') nameId = `${nameId}<!---->${escapeXml(COMMENT_SUFFIX)}`;
  let xml = render(f, responseId, assertionId, nameId);

  if (f.assertionKey) xml = sign(xml, f.assertionKey, 'assertion');
  // The wrapping attacks add an element the IdP never signed, which breaks a signature over the
  // whole response; the attacker drops that signature, leaving only the assertion's to check.
  const wraps = f.tamper === 'wrap-sibling' || f.tamper === 'wrap-extensions';
  if (f.responseKey && !wraps) xml = sign(xml, f.responseKey, 'response');

  switch (f.tamper) {
    case 'wrap-sibling': {
      // the forged assertion first, where a careless SP looks; the genuine signed one after it
      const forged = forgedAssertion(f, newId());
      xml = xml.replace('<saml:Assertion ', () => `${forged}<saml:Assertion `);
      break;
    }
    case 'wrap-extensions': {
      // XSW: the signed assertion moved into <samlp:Extensions> (where its signature still
      // verifies), and in its place a forged one carrying the same ID, so a lookup by the
      // signature's Reference URI can land on either
      const genuine = assertionOf(xml);
      const forged = forgedAssertion(f, assertionId);
      xml = xml.replace(genuine, () => forged).replace('<samlp:Status>', () => `<samlp:Extensions>${genuine}</samlp:Extensions><samlp:Status>`);
      break;
    }
    case 'doctype':
      // an internal subset with an entity: the start of every XXE and entity-expansion attack
      xml = `<!DOCTYPE samlp:Response [<!ENTITY idp "test">]>${xml}`;
      break;
    case 'two-roots':
      // CVE-2022-39299: the signed document followed by a second root carrying a forged assertion
      xml = `${xml}${forgedAssertion(f, newId())}`;
      break;
  }
  return { xml, responseId, assertionId };
}

function render(f: ResponseFields, responseId: string, assertionId: string, nameIdXml: string): string {
  const tags: Record<string, string | null> = {
    ID: responseId,
    AssertionID: assertionId,
    Destination: f.destination,
    Audience: f.audience,
    SubjectRecipient: f.recipient,
    Issuer: f.issuer,
    IssueInstant: f.issueInstant.toISOString(),
    StatusCode: Constants.StatusCode.Success,
    ConditionsNotBefore: f.notBefore.toISOString(),
    ConditionsNotOnOrAfter: f.notOnOrAfter.toISOString(),
    SubjectConfirmationDataNotOnOrAfter: f.notOnOrAfter.toISOString(),
    NameIDFormat: Constants.namespace.format.emailAddress,
    NameID: NAME_ID_MARK,
    // null drops the attribute from the Response and from SubjectConfirmationData
    InResponseTo: f.inResponseTo,
  };
  // The statements are markup, which replaceTagsByValue would escape: they go in afterwards
  // (through functions, so that a "$" in a value is not read as a replacement pattern).
  return SamlLib.replaceTagsByValue(SamlLib.defaultLoginResponseTemplate.context, tags)
    .replace(NAME_ID_MARK, () => nameIdXml)
    .replace('{AuthnStatement}', () => authnStatement(f.issueInstant))
    .replace('{AttributeStatement}', () => attributeStatement(f.attributes));
}

const NAME_ID_MARK = 'gatehouse-test-idp-nameid-mark';

function authnStatement(at: Date): string {
  const ref = Constants.namespace.authnContextClassRef.passwordProtectedTransport;
  return `<saml:AuthnStatement AuthnInstant="${at.toISOString()}" SessionIndex="${newId()}"><saml:AuthnContext><saml:AuthnContextClassRef>${ref}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`;
}

function attributeStatement(attributes: ResponseFields['attributes']): string {
  const entries = Object.entries(attributes);
  if (entries.length === 0) return '';
  const format = 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic';
  const xml = entries.map(([name, value]) => {
    const values = (typeof value === 'string' ? [value] : value).map(
      (v) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(v)}</saml:AttributeValue>`,
    );
    return `<saml:Attribute Name="${escapeXml(name)}" NameFormat="${format}">${values.join('')}</saml:Attribute>`;
  });
  return `<saml:AttributeStatement>${xml.join('')}</saml:AttributeStatement>`;
}

/** An unsigned assertion for FORGED_NAME_ID, otherwise as valid as the genuine one. */
function forgedAssertion(f: ResponseFields, id: string): string {
  return assertionOf(render({ ...f, nameId: FORGED_NAME_ID }, newId(), id, escapeXml(FORGED_NAME_ID)));
}

/** The one Assertion element of a rendered response, as text. */
function assertionOf(response: string): string {
  const end = '</saml:Assertion>';
  return response.slice(response.indexOf('<saml:Assertion '), response.lastIndexOf(end) + end.length);
}

function sign(xml: string, key: KeyPair, what: 'assertion' | 'response'): string {
  const common = {
    rawSamlMessage: xml,
    privateKey: key.privateKeyPem,
    signingCert: key.certificateBase64,
    signatureAlgorithm: Constants.algorithms.signature.RSA_SHA256,
    isBase64Output: false as const,
  };
  // The places samlify puts its signatures: right after the element's Issuer (the schema's order).
  if (what === 'assertion')
    return SamlLib.constructSAMLSignature({
      ...common,
      referenceTagXPath: ASSERTION_XPATH,
      signatureConfig: { prefix: 'ds', location: { reference: `${ASSERTION_XPATH}/*[local-name(.)='Issuer']`, action: 'after' } },
    });
  return SamlLib.constructSAMLSignature({
    ...common,
    isMessageSigned: true,
    signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: 'after' } },
  });
}

/** IDs must start with a letter or underscore (xs:ID); samlify's own are "_" + hex as well. */
function newId(): string {
  return `_${randomUUID().replaceAll('-', '')}`;
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
