// The XML signature check node-saml itself runs (`getVerifiedXml` of @node-saml/node-saml 5.1,
// over xml-crypto 6): an enveloped signature of the element given, whose one Reference names that
// element and no other, verified with the configured certificates only (KeyInfo in the document
// is ignored). It answers the bytes the signature covers, or null.
//
// The service calls it itself, before node-saml, to know which parts of a response are genuine:
// only then does it read InResponseTo from them, and only an assertion whose signature verified
// is ever recorded as used (docs/sso.md, "Sign-in").
//
// Loaded with require() and typed here by the little it needs: node-saml's declarations of this
// module name DOM types (Element, Node), which this program does not have (see xml-dom.ts).
import { createRequire } from 'node:module';

interface NodeSamlXml {
  getVerifiedXml(fullXml: string, currentNode: unknown, pemFiles: string[]): string | null;
}

const { getVerifiedXml } = createRequire(import.meta.url)('@node-saml/node-saml/lib/xml.js') as NodeSamlXml;
// checked at load, so that an upgrade that moves it fails every SAML test rather than every sign-in
if (typeof getVerifiedXml !== 'function') throw new Error('@node-saml/node-saml: lib/xml.js getVerifiedXml missing');

/**
 * The XML a signature on `element` (a node of the document `fullXml` was parsed into) covers,
 * when it verifies with one of `certificates` (PEM); else undefined. A signature node-saml
 * refuses outright (two on one element, a Reference to another element, more than two
 * transforms) is undefined too.
 */
export function verifiedXml(fullXml: string, element: unknown, certificates: readonly string[]): string | undefined {
  if (certificates.length === 0) return undefined;
  try {
    return getVerifiedXml(fullXml, element, [...certificates]) ?? undefined;
  } catch {
    return undefined;
  }
}
