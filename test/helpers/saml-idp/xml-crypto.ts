// xml-crypto, the copy samlify (the test IdP's signer) and node-saml use, loaded with require()
// and typed by the little the tests need: its declarations, like samlify's, pull in
// @xmldom/xmldom's DOM types (see samlify.ts). The attacks on the signature itself (a comment in
// DigestValue, a second Reference, an XSLT transform) are built with it, and the harness uses it
// to show that each of them is otherwise a valid signature, so that a refusal is the service's
// doing and not a broken signature's.
import { verify } from 'node:crypto';
import { createRequire } from 'node:module';

const fromSamlify = createRequire(createRequire(import.meta.url).resolve('samlify'));

export const DSIG = 'http://www.w3.org/2000/09/xmldsig#';

interface XmlElement {
  toString(): string;
}

export interface SignedXml {
  loadSignature(signature: XmlElement): void;
  /** true when every Reference's digest and the signature over SignedInfo verify; false when a
   *  digest does not; throws when the digests do and the signature value does not */
  checkSignature(xml: string): boolean;
  getReferences(): { uri?: string }[];
}

interface XmlCrypto {
  SignedXml: new (options: { publicCert: string }) => SignedXml;
  ExclusiveCanonicalization: new () => { process(element: XmlElement, options: object): string };
}

interface Xmldom {
  DOMParser: new () => {
    parseFromString(xml: string, mimeType: string): { getElementsByTagNameNS(ns: string, name: string): ArrayLike<XmlElement> };
  };
}

const xmlCrypto = fromSamlify('xml-crypto') as XmlCrypto;
const { DOMParser } = fromSamlify('@xmldom/xmldom') as Xmldom;

/** The one element of the XML-DSig namespace called `name` in `xml`; throws if not exactly one. */
export function dsigElement(xml: string, name: 'Signature' | 'SignedInfo'): XmlElement {
  const found = new DOMParser().parseFromString(xml, 'text/xml').getElementsByTagNameNS(DSIG, name);
  if (found.length !== 1) throw new Error(`${found.length} ds:${name} elements, not one`);
  return found[0]!;
}

/** The octets the SignatureValue signs: SignedInfo in exclusive c14n (the method the test IdP's
 *  signatures name). */
export function canonicalSignedInfo(xml: string): string {
  return new xmlCrypto.ExclusiveCanonicalization().process(dsigElement(xml, 'SignedInfo'), {});
}

/** xml-crypto's verifier for the one signature in `xml`, trusting `certificatePem` only. */
export function signatureOf(xml: string, certificatePem: string): SignedXml {
  const signed = new xmlCrypto.SignedXml({ publicCert: certificatePem });
  signed.loadSignature(dsigElement(xml, 'Signature'));
  return signed;
}

/** Whether the SignatureValue of the one signature in `xml` is `certificatePem`'s key's RSA-SHA256
 *  signature of its SignedInfo, whatever its References say. */
export function signedInfoVerifies(xml: string, certificatePem: string): boolean {
  const value = /<ds:SignatureValue>([^<]+)<\/ds:SignatureValue>/.exec(xml)?.[1];
  if (!value) throw new Error('no ds:SignatureValue');
  return verify('sha256', Buffer.from(canonicalSignedInfo(xml), 'utf8'), certificatePem, Buffer.from(value, 'base64'));
}
