// Access tokens are signed with node:crypto (keys/compact-jws.ts) and verified with jose: what
// one writes, the other must read, in the exact form RFC 7515 and RFC 7518 give.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { es256Signer } from '../../src/keys/compact-jws.js';

async function keyPair() {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { publicKey, signer: es256Signer(await exportJWK(privateKey)) };
}

describe('ES256 compact JWS signed with node:crypto', () => {
  it('is read by jose: header, claims and a 64-byte R || S signature over the first two parts', async () => {
    const { publicKey, signer } = await keyPair();
    const claims = {
      iss: 'https://issuer.test',
      sub: 'a',
      aud: 'https://api.test',
      iat: 1_700_000_000,
      exp: 4_000_000_000,
      note: 'é "quoted" \u2028',
    };
    const token = await signer.sign({ alg: 'ES256', kid: 'k-1', typ: 'at+jwt' }, claims);
    const parts = token.split('.');
    assert.equal(parts.length, 3);
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'base64url without padding');
    assert.equal(Buffer.from(parts[2]!, 'base64url').length, 64);
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'ES256', kid: 'k-1', typ: 'at+jwt' });
    const { payload } = await jwtVerify(token, publicKey, { algorithms: ['ES256'], typ: 'at+jwt', issuer: claims.iss, audience: claims.aud });
    assert.deepEqual(payload, claims);
  });

  it('signs with the key it holds: another key does not verify it, a changed payload does not verify', async () => {
    const mine = await keyPair();
    const other = await generateKeyPair('ES256');
    const token = await mine.signer.sign({ alg: 'ES256', kid: 'k', typ: 'at+jwt' }, { sub: 'a' });
    await assert.rejects(compactVerify(token, other.publicKey), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    const [h, , s] = token.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'b' })).toString('base64url')}.${s}`;
    await assert.rejects(compactVerify(forged, mine.publicKey), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
    await compactVerify(token, mine.publicKey);
  });

  it('refuses a claim JSON would drop or change (undefined, NaN, infinite, a symbol, a bigint) instead of signing without it', async () => {
    const { signer } = await keyPair();
    for (const value of [undefined, Number.NaN, Number.POSITIVE_INFINITY, Symbol('s'), 10n, () => 1]) {
      const signed = signer.sign({ alg: 'ES256', kid: 'k', typ: 'at+jwt' }, { sub: 'a', exp: value });
      await assert.rejects(signed, /claim exp has no JSON value/, String(typeof value));
    }
    await assert.rejects(signer.sign({ alg: 'ES256', kid: 'k', typ: undefined as never }, { sub: 'a' }), /claim typ has no JSON value/);
  });

  it('refuses a private part that does not belong to the public key tokens are verified with', async () => {
    const mine = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    const other = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    // the other key's private scalar with this key's public point: Node 20 accepts such a JWK (the
    // probe refuses it), later lines refuse it themselves
    assert.throws(() => es256Signer({ ...mine, d: other.d }), /private part does not match its public part|Invalid JWK EC key/);
    // a stored public key that is not this key's
    assert.throws(() => es256Signer(mine, { ...other, d: undefined }), /private part does not match its public part/);
    es256Signer(mine, { ...mine, d: undefined });
  });

  it('refuses, when the key is loaded, a key that is not a private P-256 key', async () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' });
    assert.throws(() => es256Signer(p384 as never), /private P-256 key/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    assert.throws(() => es256Signer(rsa as never), /private P-256 key/);
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    // a public JWK has no private part: node refuses it as a private key
    assert.throws(
      () => es256Signer(publicJwk),
      (err: Error & { code?: string }) => err.code === 'ERR_INVALID_ARG_TYPE' || /private/.test(err.message),
    );
  });

  it('hands out no key: the signer has only its sign method', async () => {
    const { signer } = await keyPair();
    assert.deepEqual(Object.keys(signer), ['sign']);
    assert.equal(JSON.stringify(signer), '{}');
  });
});
