// Just enough DER (X.690) to read what node:crypto's X509Certificate does not expose: the
// algorithm a certificate is signed with, and where its outer SEQUENCE ends. Definite lengths
// only (DER forbids the others); every read is bounded by its parent, so a hostile length can
// only make a read fail, never run past the buffer.

export class DerError extends Error {}

/** One tag-length-value: the tag byte and where its content starts and ends in the buffer. */
export interface Tlv {
  tag: number;
  start: number;
  end: number;
}

export const SEQUENCE = 0x30;
export const OBJECT_IDENTIFIER = 0x06;

/** Reads the TLV at `at`, which must end by `limit`. */
export function readTlv(der: Uint8Array, at: number, limit: number): Tlv {
  if (at + 2 > limit) throw new DerError('truncated');
  const tag = der[at]!;
  // High tag numbers (low bits all set) never occur in the parts of a certificate read here.
  if ((tag & 0x1f) === 0x1f) throw new DerError('unexpected tag');
  let length = der[at + 1]!;
  let start = at + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    // 0 is the indefinite form (BER only); more than 4 length bytes is no certificate's size.
    if (count === 0 || count > 4 || start + count > limit) throw new DerError('bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[start + i]!;
    start += count;
  }
  const end = start + length;
  if (end > limit) throw new DerError('truncated');
  return { tag, start, end };
}

/** Reads a TLV and insists on its tag. */
export function expectTlv(der: Uint8Array, at: number, limit: number, tag: number): Tlv {
  const tlv = readTlv(der, at, limit);
  if (tlv.tag !== tag) throw new DerError('unexpected tag');
  return tlv;
}

/** The dotted form of an OBJECT IDENTIFIER's content, e.g. '1.2.840.113549.1.1.11'. */
export function decodeOid(der: Uint8Array, tlv: Tlv): string {
  if (tlv.end <= tlv.start) throw new DerError('empty OID');
  const parts: number[] = [];
  let value = 0;
  for (let i = tlv.start; i < tlv.end; i++) {
    const byte = der[i]!;
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) throw new DerError('OID arc too large');
    if ((byte & 0x80) === 0) {
      parts.push(value);
      value = 0;
    }
  }
  if (der[tlv.end - 1]! & 0x80) throw new DerError('truncated OID');
  const first = parts.shift()!;
  // The first sub-identifier packs the first two arcs: 40 * X + Y, with X at most 2.
  const head = first < 80 ? [Math.floor(first / 40), first % 40] : [2, first - 80];
  return [...head, ...parts].join('.');
}
