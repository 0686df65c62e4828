// JWS compact serialisation (RFC 7515 section 7.1) for the key ring's ES256 keys, signed with
// node:crypto's asynchronous sign: the signature is computed on libuv's thread pool, as WebCrypto
// does, without WebCrypto's argument conversion and promise chain on the JavaScript thread: half
// the CPU per token of jose's SignJWT, used before (docs/benchmarks.md, "Signing one access
// token"). Verification stays with jose.
import { createPrivateKey, createPublicKey, type JsonWebKey, sign, verify } from 'node:crypto';
import type { JWK } from 'jose';

export interface Es256Header {
  alg: 'ES256';
  kid: string;
  typ: string;
}

/** Signs with one private key, which it never hands out (a KeyObject could be exported). */
export interface Es256Signer {
  sign(header: Es256Header, payload: Record<string, unknown>): Promise<string>;
}

const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Values JSON keeps as they are: anything else is refused rather than dropped or changed. */
function jsonSafe(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol' && typeof value !== 'bigint';
}

const PROBE = Buffer.from('gatehouse signing-key probe');

/**
 * A signer for a private P-256 key given as a JWK. Any other key is refused here, once, and so is
 * a private part that does not belong to the public key tokens are verified with (`publicJwk`,
 * else the JWK's own public point): node accepts such a JWK, and its tokens would verify nowhere.
 * A probe signature must verify with the public key.
 */
export function es256Signer(jwk: JWK, publicJwk: JWK = jwk): Es256Signer {
  const key = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('an ES256 signing key must be a private P-256 key');
  }
  const { kty, crv, x, y } = publicJwk;
  const publicPart = createPublicKey({ key: { kty, crv, x, y } as JsonWebKey, format: 'jwk' });
  if (!verify('sha256', PROBE, publicPart, sign('sha256', PROBE, key))) {
    throw new Error("the signing key's private part does not match its public part");
  }
  return {
    /**
     * header.payload.signature: SHA-256 and the P-256 key, the signature as R || S of 32 bytes
     * each (RFC 7518 section 3.4), which is node's 'ieee-p1363' encoding. A header or payload
     * value that JSON cannot hold as given (undefined, NaN, a function, a symbol, a bigint) is
     * refused rather than dropped.
     */
    sign(header, payload) {
      for (const [name, value] of [...Object.entries(header), ...Object.entries(payload)]) {
        if (!jsonSafe(value)) return Promise.reject(new Error(`claim ${name} has no JSON value`));
      }
      const input = `${encode(header)}.${encode(payload)}`;
      return new Promise((resolve, reject) => {
        sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }, (err, signature) => {
          if (err) reject(err);
          else resolve(`${input}.${signature.toString('base64url')}`);
        });
      });
    },
  };
}
