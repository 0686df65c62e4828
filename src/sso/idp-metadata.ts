// What a SAML connection needs from an identity provider's metadata (SAML 2.0 Metadata, OASIS
// saml-metadata-2.0-os): its entityID, the certificates it signs with, where to send the browser
// to sign in, and whether it wants signed requests. The XML comes from a tenant admin (pasted,
// or fetched from a URL they gave), so it is read as hostile: size and DTDs are refused before
// the parser sees anything (no entity expansion, no external entities, security-tests.md items
// 76 and 95), a second root element is refused (CVE-2022-39353's class), any parser complaint
// is a refusal, and every lookup names its namespace so a look-alike element in another
// namespace is not read. Messages say what is wrong in words; they never carry parser text.
import { AppError, badInput } from '../errors.js';
import { type IdpCertificate, parseCertificate } from './certificate.js';
import {
  CDATA_SECTION_NODE,
  COMMENT_NODE,
  ELEMENT_NODE,
  PROCESSING_INSTRUCTION_NODE,
  parseXml,
  TEXT_NODE,
  type XmlDocument,
  type XmlElement,
  type XmlNode,
  XmlSyntaxError,
} from './xml-dom.js';

export interface IdpMetadata {
  entityId: string;
  /** every signing certificate (several during a key rollover), without duplicates, in document order */
  signingCertificates: IdpCertificate[];
  /** the first SingleSignOnService of each binding Gatehouse can use */
  signInEndpoints: { redirect?: string; post?: string };
  /** the IdP's WantAuthnRequestsSigned: it refuses unsigned AuthnRequests */
  wantAuthnRequestsSigned: boolean;
}

/** Metadata of one IdP is a few KiB; federation aggregates (megabytes) are not what a connection takes. */
export const METADATA_MAX_BYTES = 1024 * 1024;

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const SAML2_PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
const BINDINGS = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const;
const BINDING_NAMES = { redirect: 'HTTP-Redirect', post: 'HTTP-POST' } as const;
/** SAML Metadata 2.3.2: entityID is at most 1024 characters. */
const ENTITY_ID_MAX = 1024;
/** Hosts a developer's own IdP may run on over plain http: the browser is redirected there, never Gatehouse. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function parseIdpMetadata(xml: string): IdpMetadata {
  refuseBeforeParsing(xml);
  const root = parseDocument(xml);
  const entity = idpEntity(root);
  const idp = idpDescriptor(entity);
  return {
    entityId: entityId(entity),
    signingCertificates: signingCertificates(idp),
    signInEndpoints: signInEndpoints(idp),
    wantAuthnRequestsSigned: wantAuthnRequestsSigned(idp),
  };
}

function refuseBeforeParsing(xml: string): void {
  // A string's length never exceeds its UTF-8 size, so the first test spares encoding a huge one.
  if (xml.length > METADATA_MAX_BYTES || Buffer.byteLength(xml, 'utf8') > METADATA_MAX_BYTES)
    throw badInput('The IdP metadata is larger than 1 MiB; give the metadata of this one IdP, not a federation aggregate.');
  // Anywhere in the text, in any case: SAML metadata never needs a DTD, and a declaration hidden
  // after a BOM, an XML declaration or a comment must not reach the parser either.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml))
    throw badInput(
      'The IdP metadata contains a DOCTYPE or entity declaration, which SAML metadata never needs; remove it or ask the IdP for plain metadata.',
    );
}

/** The root element of a well-formed document; refuses whatever the parser complains about. */
function parseDocument(xml: string): XmlElement {
  const malformed = () => badInput('The IdP metadata is not well-formed XML; check that it is the IdP’s SAML metadata document, complete.');
  const severalRoots = () => badInput('The IdP metadata has more than one root element; give one EntityDescriptor (or one EntitiesDescriptor).');
  let doc: XmlDocument;
  try {
    doc = parseXml(xml.replace(/^\uFEFF/, ''));
  } catch (e) {
    if (e instanceof XmlSyntaxError && e.problem === 'several roots') throw severalRoots();
    throw malformed();
  }
  let root: XmlElement | undefined;
  for (let node = doc.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === ELEMENT_NODE) {
      if (root) throw severalRoots();
      root = node as XmlElement;
    } else if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
      if (!/^[ \t\r\n]*$/.test(node.nodeValue ?? '')) throw malformed();
    } else if (node.nodeType !== PROCESSING_INSTRUCTION_NODE && node.nodeType !== COMMENT_NODE) {
      throw malformed();
    }
  }
  if (!root) throw malformed();
  return root;
}

/** The EntityDescriptor of the one IdP: the root, or the only IdP inside an EntitiesDescriptor. */
function idpEntity(root: XmlElement): XmlElement {
  if (is(root, MD, 'EntityDescriptor')) return root;
  if (!is(root, MD, 'EntitiesDescriptor'))
    throw badInput(
      'This is not SAML 2.0 metadata: its root element is neither an EntityDescriptor nor an EntitiesDescriptor of the SAML metadata namespace.',
    );
  // Groups may nest; walked with a list rather than recursion, so a deep nest cannot overflow the stack.
  const idps: XmlElement[] = [];
  const groups: XmlElement[] = [root];
  while (groups.length > 0) {
    const group = groups.pop()!;
    groups.push(...children(group, MD, 'EntitiesDescriptor'));
    idps.push(...children(group, MD, 'EntityDescriptor').filter((entity) => saml2IdpDescriptors(entity).length > 0));
  }
  if (idps.length === 0) throw noIdp();
  if (idps.length > 1)
    throw badInput(`The metadata describes ${idps.length} identity providers; a connection takes one, so give the metadata of that IdP alone.`);
  return idps[0]!;
}

function idpDescriptor(entity: XmlElement): XmlElement {
  const idps = saml2IdpDescriptors(entity);
  if (idps.length === 0) throw noIdp();
  if (idps.length > 1) throw badInput('The IdP metadata has more than one IDPSSODescriptor for SAML 2.0; give metadata with one.');
  return idps[0]!;
}

const noIdp = () =>
  badInput(
    'The metadata describes no SAML 2.0 identity provider (no IDPSSODescriptor for SAML 2.0); check that it is the IdP’s metadata, not a service provider’s.',
  );

function saml2IdpDescriptors(entity: XmlElement): XmlElement[] {
  return children(entity, MD, 'IDPSSODescriptor').filter((d) =>
    (d.getAttribute('protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML2_PROTOCOL),
  );
}

function entityId(entity: XmlElement): string {
  const id = entity.getAttribute('entityID') ?? '';
  if (id.trim() === '') throw badInput('The IdP metadata has no entityID; it is needed to check who issued each response.');
  if (id.length > ENTITY_ID_MAX) throw badInput(`The IdP metadata's entityID is longer than ${ENTITY_ID_MAX} characters.`);
  return id;
}

/**
 * Every certificate of every KeyDescriptor for signing (use="signing", or no use: both uses). A
 * rollover publishes the old and the new one side by side, and responses signed by either must
 * verify. KeyInfo forms other than X509Certificate (KeyName, KeyValue) are not trusted keys.
 */
function signingCertificates(idp: XmlElement): IdpCertificate[] {
  const found = new Map<string, IdpCertificate>();
  let n = 0;
  for (const descriptor of children(idp, MD, 'KeyDescriptor')) {
    if (descriptor.hasAttribute('use') && descriptor.getAttribute('use') !== 'signing') continue;
    for (const keyInfo of children(descriptor, DS, 'KeyInfo'))
      for (const data of children(keyInfo, DS, 'X509Data'))
        for (const element of children(data, DS, 'X509Certificate')) {
          n++;
          const cert = certificate(element.textContent ?? '', n);
          if (!found.has(cert.fingerprint256)) found.set(cert.fingerprint256, cert);
        }
  }
  if (found.size === 0)
    throw badInput(
      'The IdP metadata has no signing certificate (no KeyDescriptor for signing with an X509Certificate), so responses could not be verified; ask the IdP for metadata that includes it.',
    );
  return [...found.values()];
}

function certificate(text: string, n: number): IdpCertificate {
  try {
    return parseCertificate(text);
  } catch (e) {
    if (e instanceof AppError) throw badInput(`Signing certificate ${n} in the IdP metadata cannot be used. ${e.message}`);
    throw e;
  }
}

function signInEndpoints(idp: XmlElement): IdpMetadata['signInEndpoints'] {
  const endpoints: IdpMetadata['signInEndpoints'] = {};
  for (const service of children(idp, MD, 'SingleSignOnService')) {
    const binding = service.getAttribute('Binding');
    for (const kind of ['redirect', 'post'] as const) {
      if (binding !== BINDINGS[kind]) continue;
      // Every endpoint of a usable binding is checked, not only the first: metadata that offers
      // a plain-http sign-in page anywhere is not one to trust.
      const url = signInUrl(service.getAttribute('Location') ?? '', BINDING_NAMES[kind]);
      endpoints[kind] ??= url;
    }
  }
  if (!endpoints.redirect && !endpoints.post)
    throw badInput(
      'The IdP metadata has no SingleSignOnService for the HTTP-Redirect or HTTP-POST binding; Gatehouse sends sign-in requests through one of these.',
    );
  return endpoints;
}

/** An absolute https URL; http only on the developer's own machine. */
function signInUrl(location: string, binding: string): string {
  const refuse = (why: string) => badInput(`The IdP metadata's ${binding} sign-in endpoint ${why}.`);
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw refuse('is not an absolute URL');
  }
  if (url.username !== '' || url.password !== '') throw refuse('carries a user name or password');
  if (url.protocol === 'https:') return url.href;
  if (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname)) return url.href;
  throw refuse('is not an https URL');
}

/** xs:boolean: 'true', 'false', '1', '0' (whitespace collapsed); absent means false. */
function wantAuthnRequestsSigned(idp: XmlElement): boolean {
  if (!idp.hasAttribute('WantAuthnRequestsSigned')) return false;
  const value = (idp.getAttribute('WantAuthnRequestsSigned') ?? '').trim();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw badInput("The IdP metadata's WantAuthnRequestsSigned is neither true nor false.");
}

function is(node: XmlNode, namespace: string, localName: string): node is XmlElement {
  return node.nodeType === ELEMENT_NODE && node.namespaceURI === namespace && node.localName === localName;
}

/** Child elements (not deeper descendants) with this namespace and local name. */
function children(parent: XmlElement, namespace: string, localName: string): XmlElement[] {
  const out: XmlElement[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) if (is(node, namespace, localName)) out.push(node);
  return out;
}
