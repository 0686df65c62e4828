// Client secrets: 256 random bits, a fixed prefix that leak scanners can match, and a CRC32
// checksum so a mangled or invented secret is rejected without a database lookup. Only the
// SHA-256 digest is stored: a secret with 256 bits of entropy cannot be guessed from its digest,
// so a slow password hash would add cost to every token request and no protection (NIST SP
// 800-63B: look-up secrets of 112 bits or more may use an approved one-way function).
import { createHash, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { base62, randomBase62 } from '../crypto/random.js';

export const SECRET_PREFIX = 'gatehouse_cs_';
const BODY_LENGTH = 43; // 256 bits in base62
const CHECKSUM_LENGTH = 6; // 32 bits in base62
export const SECRET_PATTERN = /^gatehouse_cs_[0-9A-Za-z]{49}$/;

function checksum(body: string): string {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(crc32(body) >>> 0);
  return base62(buf, CHECKSUM_LENGTH);
}

export function generateSecret(): string {
  const body = randomBase62(256);
  if (body.length !== BODY_LENGTH) throw new Error('unexpected secret length');
  return SECRET_PREFIX + body + checksum(body);
}

/**
 * Offline check: false for anything that carries our prefix but is not a secret we could have
 * issued. Secrets without the prefix (an operator's own bootstrap secret) pass to the digest check.
 */
export function plausibleSecret(secret: string): boolean {
  if (secret.length < 32 || secret.length > 256) return false;
  if (!secret.startsWith(SECRET_PREFIX)) return true;
  if (!SECRET_PATTERN.test(secret)) return false;
  const body = secret.slice(SECRET_PREFIX.length, SECRET_PREFIX.length + BODY_LENGTH);
  return checksum(body) === secret.slice(SECRET_PREFIX.length + BODY_LENGTH);
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of two digests. */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What may be shown of a secret after it was issued. */
export function secretHint(secret: string): string {
  const prefix = secret.startsWith(SECRET_PREFIX) ? SECRET_PREFIX : '';
  return `${prefix}…${secret.slice(-4)}`;
}
