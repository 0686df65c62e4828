import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as client from 'openid-client';
import { ROOT_CLIENT_ID, startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { createClient } from '../helpers/seed.js';
import { ROLE_IDS } from '../../src/access/roles.js';

// A secret that needs RFC 6749 section 2.3.1 encoding in HTTP Basic, so the interop run proves
// that a real client library's encoding and ours agree.
const ROOT_SECRET = 'interop+secret%25with:colons and spaces-0123456789';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      server.close(() => resolve(address.port));
    });
  });
}

for (const engine of transportEngines()) {
  describe(`openid-client interoperability (${engine})`, () => {
    let t: TestApp;
    let issuer: string;
    before(async () => {
      const port = await freePort();
      issuer = `http://127.0.0.1:${port}`;
      t = await startTestApp({
        engine,
        env: { GATEHOUSE_BASE_URL: issuer, GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_SECRET },
      });
      await t.service.app.listen({ port, host: '127.0.0.1' });
    });
    after(() => t.close());

    const discover = (clientId: string, secret: string, auth?: client.ClientAuth) =>
      client.discovery(new URL(issuer), clientId, secret, auth, { algorithm: 'oauth2', execute: [client.allowInsecureRequests] });

    async function version(accessToken: string) {
      return fetch(`${issuer}/assets/version`, { headers: { authorization: `Bearer ${accessToken}` } });
    }

    it('publishes RFC 8414 metadata naming this address as the issuer', async () => {
      const res = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const metadata = (await res.json()) as Record<string, unknown>;
      assert.equal(metadata.issuer, issuer);
      assert.equal(metadata.token_endpoint, `${issuer}/auth/api/v2/auth/token`);
      assert.equal(metadata.jwks_uri, `${issuer}/.well-known/jwks.json`);
      assert.ok(Array.isArray(metadata.grant_types_supported));
      assert.ok((metadata.grant_types_supported as string[]).includes('client_credentials'));
      assert.ok(!(metadata.grant_types_supported as string[]).includes('password'));
      assert.deepEqual([...(metadata.token_endpoint_auth_methods_supported as string[])].sort(), [
        'client_secret_basic',
        'client_secret_post',
        'none',
      ]);
      assert.deepEqual(metadata.scopes_supported, ['Administrator', 'Analyst', 'Responder', 'Auditor', 'Operations', 'Support']);
      // the advertised JWKS is reachable and holds public keys only
      const jwks = (await (await fetch(metadata.jwks_uri as string)).json()) as { keys: Record<string, unknown>[] };
      assert.ok(jwks.keys.length >= 1);
      for (const key of jwks.keys) {
        assert.equal(typeof key.kid, 'string');
        assert.equal(key.d, undefined);
      }
    });

    it('discovery() reads the metadata', async () => {
      const config = await discover(ROOT_CLIENT_ID, ROOT_SECRET);
      const metadata = config.serverMetadata();
      assert.equal(metadata.issuer, issuer);
      assert.equal(metadata.token_endpoint, `${issuer}/auth/api/v2/auth/token`);
      assert.equal(metadata.jwks_uri, `${issuer}/.well-known/jwks.json`);
      assert.ok(metadata.grant_types_supported?.includes('client_credentials'));
      assert.ok(metadata.token_endpoint_auth_methods_supported?.includes('client_secret_basic'));
      assert.ok(metadata.token_endpoint_auth_methods_supported?.includes('client_secret_post'));
    });

    it('clientCredentialsGrant() obtains a token that the API accepts (default client authentication)', async () => {
      const config = await discover(ROOT_CLIENT_ID, ROOT_SECRET);
      const tokens = await client.clientCredentialsGrant(config);
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.expires_in, 36000);
      assert.equal(tokens.refresh_token, undefined);
      assert.equal(tokens.expiry, new Date(t.clock.now().getTime() + 36000_000).toISOString());
      const res = await version(tokens.access_token);
      assert.equal(res.status, 200);
      const body = (await res.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['revision', 'tag', 'timestamp']);
    });

    it('works with client_secret_basic and client_secret_post, for the bootstrap client and a created one', async () => {
      const created = await createClient(t, await t.token(ROOT_CLIENT_ID, ROOT_SECRET), 'interop-client');
      for (const [clientId, secret] of [
        [ROOT_CLIENT_ID, ROOT_SECRET],
        [created.clientId, created.secret],
      ] as const) {
        for (const auth of [client.ClientSecretBasic(secret), client.ClientSecretPost(secret)]) {
          const config = await discover(clientId, secret, auth);
          const tokens = await client.clientCredentialsGrant(config);
          assert.equal((await version(tokens.access_token)).status, 200, clientId);
        }
      }
    });

    it('clientCredentialsGrant() with a scope gets a token narrowed to it', async () => {
      const root = await t.token(ROOT_CLIENT_ID, ROOT_SECRET);
      const created = await createClient(t, root, 'interop-scoped', { roles: [ROLE_IDS.Administrator, ROLE_IDS.Auditor] });
      const config = await discover(created.clientId, created.secret);
      const tokens = await client.clientCredentialsGrant(config, { scope: 'Auditor' });
      assert.equal(tokens.scope, 'Auditor');
      assert.equal((await version(tokens.access_token)).status, 200);
      const gql = (query: string) =>
        fetch(`${issuer}/graphql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        }).then((res) => res.json() as Promise<any>);
      assert.equal((await gql('{ clients { id } }')).errors, undefined);
      assert.equal((await gql('mutation { createClient(name: "scoped-create") { client_secret } }')).errors[0].extensions.code, 'FORBIDDEN');
      // a scope the client does not hold is refused, as the library reports it
      await assert.rejects(client.clientCredentialsGrant(config, { scope: 'Responder' }), (err: any) => err.error === 'invalid_scope');
    });

    it('surfaces a wrong secret as a 401 Basic challenge with invalid_client', async () => {
      for (const auth of [client.ClientSecretBasic(ROOT_SECRET + 'x'), client.ClientSecretPost(ROOT_SECRET + 'x')]) {
        const config = await discover(ROOT_CLIENT_ID, ROOT_SECRET + 'x', auth);
        let caught: any;
        await assert.rejects(
          client.clientCredentialsGrant(config).catch((err) => {
            caught = err;
            throw err;
          }),
        );
        // oauth4webapi reports a 401 that carries WWW-Authenticate as a challenge error
        assert.equal(caught.code, 'OAUTH_WWW_AUTHENTICATE_CHALLENGE', String(caught));
        assert.equal(caught.status, 401);
        assert.equal(caught.cause[0].scheme, 'basic');
        assert.equal((await caught.response.json()).error, 'invalid_client');
      }
    });

    it('issues tokens whose iss and aud equal the discovered issuer', async () => {
      const config = await discover(ROOT_CLIENT_ID, ROOT_SECRET);
      const tokens = await client.clientCredentialsGrant(config);
      const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
      assert.equal(claims.iss, config.serverMetadata().issuer);
      assert.equal(claims.aud, issuer);
    });
  });
}
