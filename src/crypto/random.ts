// Random identifiers and encodings.
import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Fixed-width base62 of a byte string (bytes read as one big-endian number). */
export function base62(bytes: Uint8Array, width: number): string {
  let n = BigInt('0x' + (Buffer.from(bytes).toString('hex') || '0'));
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  if (out.length > width) throw new Error('base62 value wider than its field');
  return out.padStart(width, '0');
}

/** `bits` of randomness as base62 (256 bits: 43 characters). */
export function randomBase62(bits: number): string {
  const bytes = Math.ceil(bits / 8);
  return base62(randomBytes(bytes), Math.ceil((bytes * 8) / Math.log2(62)));
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
