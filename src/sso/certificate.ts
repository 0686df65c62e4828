// An identity provider's signing certificate, as a tenant admin pastes it or as IdP metadata
// carries it: a PEM block, or the bare base64 body of the DER (what <ds:X509Certificate> holds).
// The certificate is not a chain to validate (SAML trusts the key the connection was set up
// with), so what matters is that it is one well-formed certificate with a key that SAML can
// verify and that is strong enough, and that it was not made with a broken hash (OWASP SAML
// Cheat Sheet; security-tests.md item 86). Expiry is reported, not refused: the caller decides
// whether an expired certificate is an error at setup or a warning during a rollover.
import { X509Certificate } from 'node:crypto';
import { badInput } from '../errors.js';
import { DerError, decodeOid, expectTlv, OBJECT_IDENTIFIER, readTlv, SEQUENCE, type Tlv } from './der.js';

export interface IdpCertificate {
  /** PEM with 64-character lines, ending in a newline */
  pem: string;
  /** the DER as base64, without whitespace (the form <ds:X509Certificate> and node-saml take) */
  der: string;
  notBefore: Date;
  expiresAt: Date;
  /** the issuer's distinguished name on one line, e.g. 'CN=idp.example.com, O=Example\, Inc., C=US' */
  issuer: string;
  subject: string;
  /** SHA-256 of the DER, colon-separated upper-case hex, as IdP consoles show it */
  fingerprint256: string;
}

/** Far more than any single certificate (a 4096-bit RSA one with many names is about 2.5 KiB). */
export const CERTIFICATE_MAX_CHARS = 16 * 1024;
export const RSA_MIN_BITS = 2048;

const BEGIN = '-----BEGIN CERTIFICATE-----';
const END = '-----END CERTIFICATE-----';
const HOW = 'paste the certificate in PEM form (the "-----BEGIN CERTIFICATE-----" block) or its base64 body';

/** Parses one certificate; refuses (BAD_USER_INPUT, saying what to do) anything else. */
export function parseCertificate(text: string): IdpCertificate {
  if (text.length > CERTIFICATE_MAX_CHARS) throw badInput(`The certificate is larger than 16 KiB; ${HOW}, one certificate only.`);
  const der = Buffer.from(base64Body(text), 'base64');
  const cert = readCertificate(der);
  checkSignatureAlgorithm(der);
  checkKey(cert);
  const body = der.toString('base64');
  return {
    pem: `${BEGIN}\n${body.match(/.{1,64}/g)!.join('\n')}\n${END}\n`,
    der: body,
    notBefore: certificateDate(cert, 'validFrom'),
    expiresAt: certificateDate(cert, 'validTo'),
    issuer: oneLine(cert.issuer),
    subject: oneLine(cert.subject),
    fingerprint256: cert.fingerprint256,
  };
}

/** Whether `now` is past the certificate's last valid instant (notAfter is inclusive, RFC 5280 4.1.2.5). */
export function isExpired(cert: IdpCertificate, now: Date): boolean {
  return now.getTime() > cert.expiresAt.getTime();
}

/** The base64 of the DER, from a PEM block or a bare body, whitespace removed. */
function base64Body(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') throw badInput(`The certificate is empty; ${HOW}.`);
  const labels = [...trimmed.matchAll(/-----BEGIN ([^-\r\n]{0,64})-----/g)].map((m) => m[1]!);
  let body = trimmed;
  if (labels.length > 0) {
    if (labels.some((label) => label.includes('PRIVATE KEY')))
      throw badInput('This is a private key, not a certificate: keep the key secret and paste only the certificate block.');
    if (labels.some((label) => label !== 'CERTIFICATE')) throw badInput(`This PEM block is not a certificate; ${HOW}.`);
    if (labels.length > 1) throw badInput('This holds more than one certificate; give the signing certificates one at a time.');
    // Only whitespace around the block: text beside it (openssl's "Bag Attributes", a pasted
    // -text dump) is more likely a wrong paste than something to skip silently.
    if (!trimmed.startsWith(BEGIN) || !trimmed.endsWith(END) || trimmed.indexOf(END) !== trimmed.length - END.length)
      throw badInput(`The certificate block is incomplete or has text around it; ${HOW}, and nothing else.`);
    body = trimmed.slice(BEGIN.length, -END.length);
  }
  const compact = body.replace(/\s+/g, '');
  // Strict base64: Node's decoder skips characters it does not know, which would turn a typo
  // into a different certificate instead of an error.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact) || compact.length % 4 !== 0)
    throw badInput(`This is not a certificate (not PEM and not base64); ${HOW}.`);
  return compact;
}

/** The DER must be exactly one certificate: X509Certificate reads the first one and ignores what follows. */
function readCertificate(der: Buffer): X509Certificate {
  const notX509 = () => badInput(`This is not a readable X.509 certificate; export the IdP's signing certificate again and ${HOW}.`);
  let outer: Tlv;
  try {
    outer = expectTlv(der, 0, der.length, SEQUENCE);
  } catch {
    throw notX509();
  }
  if (outer.end !== der.length) {
    if (parses(der.subarray(outer.end))) throw badInput('This holds more than one certificate; give the signing certificates one at a time.');
    throw notX509();
  }
  try {
    return new X509Certificate(der);
  } catch {
    throw notX509();
  }
}

function parses(der: Buffer): boolean {
  try {
    new X509Certificate(der);
    return true;
  } catch {
    return false;
  }
}

// Signature algorithms by OID. An allow-list: a certificate made with an algorithm not named
// here (MD5, SHA-1, GOST, an unknown OID) is refused rather than assumed safe.
const STRONG_SIGNATURES = new Set([
  '1.2.840.113549.1.1.11', // sha256WithRSAEncryption
  '1.2.840.113549.1.1.12', // sha384WithRSAEncryption
  '1.2.840.113549.1.1.13', // sha512WithRSAEncryption
  '1.2.840.10045.4.3.2', // ecdsa-with-SHA256
  '1.2.840.10045.4.3.3', // ecdsa-with-SHA384
  '1.2.840.10045.4.3.4', // ecdsa-with-SHA512
  '1.3.101.112', // Ed25519
  '1.3.101.113', // Ed448
]);
const SHA1_SIGNATURES = new Set([
  '1.2.840.113549.1.1.5', // sha1WithRSAEncryption
  '1.3.14.3.2.29', // sha1WithRSASignature (the OIW one)
  '1.2.840.10045.4.1', // ecdsa-with-SHA1
  '1.2.840.10040.4.3', // dsa-with-sha1
]);
const MD_SIGNATURES = new Set(['1.2.840.113549.1.1.2', '1.2.840.113549.1.1.4']); // md2/md5WithRSAEncryption
const RSASSA_PSS = '1.2.840.113549.1.1.10';
const SHA2_HASHES = new Set(['2.16.840.1.101.3.4.2.1', '2.16.840.1.101.3.4.2.2', '2.16.840.1.101.3.4.2.3']); // SHA-256, -384, -512

/**
 * Refuses a certificate signed with SHA-1 or MD5 (or anything not known to be sound). Node's
 * X509Certificate does not expose the algorithm (toLegacyObject() has no field for it), and
 * matching OpenSSL's text dump would depend on its wording; the DER has one place for it:
 * Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm AlgorithmIdentifier, signature }.
 */
function checkSignatureAlgorithm(der: Buffer): void {
  let kind: 'strong' | 'sha1' | 'md' | 'unknown';
  try {
    kind = signatureKind(der);
  } catch (e) {
    if (!(e instanceof DerError)) throw e;
    kind = 'unknown';
  }
  if (kind === 'strong') return;
  const ask = 'ask the IdP for a certificate signed with SHA-256 or stronger';
  if (kind === 'sha1') throw badInput(`The certificate is signed with SHA-1, which is no longer safe; ${ask}.`);
  if (kind === 'md') throw badInput(`The certificate is signed with MD5, which is broken; ${ask}.`);
  throw badInput(`The certificate is signed with an algorithm Gatehouse does not accept; ${ask} (RSA, ECDSA or EdDSA).`);
}

function signatureKind(der: Buffer): 'strong' | 'sha1' | 'md' | 'unknown' {
  const outer = expectTlv(der, 0, der.length, SEQUENCE);
  const tbs = expectTlv(der, outer.start, outer.end, SEQUENCE);
  const algorithm = expectTlv(der, tbs.end, outer.end, SEQUENCE);
  const oidTlv = expectTlv(der, algorithm.start, algorithm.end, OBJECT_IDENTIFIER);
  const oid = decodeOid(der, oidTlv);
  if (STRONG_SIGNATURES.has(oid)) return 'strong';
  if (SHA1_SIGNATURES.has(oid)) return 'sha1';
  if (MD_SIGNATURES.has(oid)) return 'md';
  if (oid !== RSASSA_PSS) return 'unknown';
  // RSASSA-PSS names its hash in the parameters: SEQUENCE { [0] hashAlgorithm DEFAULT sha1, ... }
  // (RFC 4055), so absent parameters or an absent [0] mean SHA-1.
  if (oidTlv.end === algorithm.end) return 'sha1';
  const params = expectTlv(der, oidTlv.end, algorithm.end, SEQUENCE);
  if (params.start === params.end) return 'sha1';
  const first = readTlv(der, params.start, params.end);
  if (first.tag !== 0xa0) return 'sha1';
  const hash = expectTlv(der, first.start, first.end, SEQUENCE);
  const hashOid = decodeOid(der, expectTlv(der, hash.start, hash.end, OBJECT_IDENTIFIER));
  if (SHA2_HASHES.has(hashOid)) return 'strong';
  return hashOid === '1.3.14.3.2.26' ? 'sha1' : 'unknown';
}

/**
 * SAML signatures are checked by xml-crypto, which verifies RSA only (RSA-SHA1/256/512): a
 * certificate with another kind of key would be accepted here and then fail every sign-in.
 */
function checkKey(cert: X509Certificate): void {
  const key = cert.publicKey;
  const type = key.asymmetricKeyType;
  if (type !== 'rsa')
    throw badInput(
      `The certificate's key is not RSA (it is ${String(type).toUpperCase()}); SAML signatures are checked with RSA keys, so ask the IdP for an RSA signing certificate of ${RSA_MIN_BITS} bits or more.`,
    );
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < RSA_MIN_BITS)
    throw badInput(
      `The certificate's RSA key has ${bits} bits; at least ${RSA_MIN_BITS} are required, so ask the IdP for a new signing certificate.`,
    );
}

/** Node 22.10 added validFromDate/validToDate; before that, the strings (OpenSSL's 'Jan  1 00:00:00 2030 GMT') parse as dates. */
function certificateDate(cert: X509Certificate, field: 'validFrom' | 'validTo'): Date {
  const native = (cert as unknown as Record<string, unknown>)[`${field}Date`];
  const date = native instanceof Date ? native : new Date(cert[field]);
  if (Number.isNaN(date.getTime())) throw badInput(`The certificate's validity dates cannot be read; export it again and ${HOW}.`);
  return date;
}

/** X509Certificate names one attribute per line (commas inside values already escaped as '\,'). */
function oneLine(name: string): string {
  return name.split('\n').join(', ');
}
