// Why revocation keys on claims and never on a token's text. An ECDSA signature (r, s) has a
// twin: (r, n - s) verifies for the same message and key, where n is the order of the curve
// (P-256 here), and verifiers, WebCrypto's included, accept both. So anyone holding a token can
// make a second token text that is just as valid. A revocation list or cache keyed on the token's
// text (or its hash) would end one encoding and let the other through; ending tokens by what they
// name (the principal, the secret they were obtained with, later the jti) ends both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { clientWithRoles } from '../helpers/seed.js';

/** the order n of the P-256 group */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const toBigInt = (bytes: Buffer) => BigInt(`0x${bytes.toString('hex')}`);
const toBytes32 = (value: bigint) => Buffer.from(value.toString(16).padStart(64, '0'), 'hex');

/** The same token with its signature's other valid encoding, (r, n - s). */
function twin(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const raw = Buffer.from(signature, 'base64url');
  assert.equal(raw.length, 64, 'an ES256 JWS signature is r || s, 32 bytes each');
  const s = toBigInt(raw.subarray(32));
  const other = Buffer.concat([raw.subarray(0, 32), toBytes32(P256_ORDER - s)]);
  return `${header}.${payload}.${other.toString('base64url')}`;
}

for (const engine of transportEngines()) {
  describe(`both encodings of an ECDSA signature (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    async function statuses(token: string) {
      const version = await t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${token}` } });
      const graphql = await t.gql(token, '{ clients { id } }');
      return [version.status, graphql.status];
    }

    async function bothEncodings(tenant: string) {
      const client = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
      const other = twin(client.token);
      assert.notEqual(other, client.token);
      // a genuine second encoding: accepted like the original while the token is valid
      assert.deepEqual(await statuses(client.token), [200, 200]);
      assert.deepEqual(await statuses(other), [200, 200]);
      return { client, tokens: [client.token, other] };
    }

    it('refuses both encodings once the client is deleted', async () => {
      const { client, tokens } = await bothEncodings('1');
      const del = await t.gql(await t.rootToken(), 'mutation($id: ID!) { deleteClient(id: $id) { revoked_at } }', { id: client.id });
      assert.ok(del.body.data.deleteClient.revoked_at, del.text);
      for (const token of tokens) assert.deepEqual(await statuses(token), [401, 401]);
    });

    it("refuses both encodings once the client's secret is force-rotated", async () => {
      const { client, tokens } = await bothEncodings('1');
      const rotated = await t.gql(await t.rootToken(), 'mutation($id: ID!) { forceRotateClientSecret(id: $id) { client_secret } }', {
        id: client.id,
      });
      assert.ok(rotated.body.data.forceRotateClientSecret.client_secret, rotated.text);
      for (const token of tokens) assert.deepEqual(await statuses(token), [401, 401]);
    });
  });
}
