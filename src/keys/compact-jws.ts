// JWS compact serialisation (RFC 7515 section 7.1) for the key ring's ES256 keys, signed with
// node:crypto's asynchronous sign: the signature is computed on libuv's thread pool, as WebCrypto
// does, without WebCrypto's per-call argument conversion on the JavaScript thread (about 65 µs of
// CPU less per token than jose's SignJWT, docs/benchmarks.md). Verification stays with jose.
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';

declare const es256: unique symbol;
/** A private P-256 key, checked once when it is loaded. */
export type Es256PrivateKey = KeyObject & { [es256]: true };

export function es256PrivateKey(jwk: JWK): Es256PrivateKey {
  const key = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('an ES256 signing key must be a private P-256 key');
  }
  return key as Es256PrivateKey;
}

const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * header.payload.signature, ES256: SHA-256 and a P-256 key, the signature as R || S of 32 bytes
 * each (RFC 7518 section 3.4), which is node's 'ieee-p1363' encoding.
 */
export function signEs256(header: { alg: 'ES256'; kid: string; typ: string }, payload: object, key: Es256PrivateKey): Promise<string> {
  const input = `${encode(header)}.${encode(payload)}`;
  return new Promise((resolve, reject) => {
    sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }, (err, signature) => {
      if (err) reject(err);
      else resolve(`${input}.${signature.toString('base64url')}`);
    });
  });
}
