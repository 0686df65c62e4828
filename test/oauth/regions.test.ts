// Two regions side by side (docs/operations.md "Regions"): us1 and eu1, each its own deployment
// with its own database and address, as the specification has it (credentials are valid in one
// region only). What one issues, the other refuses, saying which region it is: an access token, a
// client's secret, a browser's session cookie, a device code.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { signedInUser } from '../helpers/pages.js';
import { createClient } from '../helpers/seed.js';

const US1 = 'https://us1.gatehouse.test';
const EU1 = 'https://eu1.gatehouse.test';

for (const engine of engines()) {
  describe(`two regions, two deployments (${engine})`, () => {
    let us: TestApp;
    let eu: TestApp;
    before(async () => {
      us = await startTestApp({ engine, env: { GATEHOUSE_REGION: 'us1', GATEHOUSE_BASE_URL: US1 } });
      eu = await startTestApp({ engine, env: { GATEHOUSE_REGION: 'eu1', GATEHOUSE_BASE_URL: EU1 } });
    });
    after(async () => {
      await us?.close();
      await eu?.close();
    });

    it("a us1 token is refused by eu1, naming both regions, and is not active in eu1's introspection", async () => {
      const token = await us.rootToken();
      assert.equal((await us.gql(token, '{ clients { client_id } }')).status, 200);
      const there = await eu.gql(token, '{ clients { client_id } }');
      assert.equal(there.status, 401);
      assert.match(
        there.text,
        /the token was issued in region us1 and this server is region eu1: a token works only in the region whose deployment issued it/,
      );
      assert.match(there.text, /Obtain a new access token from the token endpoint/);
      const res = await eu.request({
        method: 'POST',
        url: '/auth/api/v2/auth/introspect',
        headers: {
          authorization: `Basic ${Buffer.from('root-admin:gatehouse_test_root_secret_0123456789abcdefghij').toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({ token }).toString(),
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { active: false });
    });

    it("a us1 client's secret is refused by eu1's token endpoint, naming eu1", async () => {
      const c = await createClient(us, await us.rootToken(), 'us-only', { roles: [ROLE_IDS.Auditor] });
      assert.equal((await us.tokenResponse(c.clientId, c.secret)).status, 200);
      const there = await eu.tokenResponse(c.clientId, c.secret);
      assert.equal(there.status, 401);
      assert.equal(there.body.error, 'invalid_client');
      assert.match(
        there.body.error_description,
        /this deployment \(region eu1\) has no live client with these credentials; credentials work only in the region whose deployment issued them/,
      );
      // the same words at eu1's other endpoints that take a secret (introspection, revocation)
      for (const url of ['/auth/api/v2/auth/introspect', '/auth/api/v2/auth/revoke']) {
        const refused = await eu.request({
          method: 'POST',
          url,
          headers: {
            authorization: `Basic ${Buffer.from(`${c.clientId}:${c.secret}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          payload: new URLSearchParams({ token: 'anything' }).toString(),
        });
        assert.equal(refused.status, 401, `${url}: ${refused.text}`);
        assert.equal(refused.body.error, 'invalid_client');
        assert.match(refused.body.error_description, /this deployment \(region eu1\) has no live client/, url);
      }
    });

    it("a us1 session cookie does not sign in to eu1: its console sends the browser to eu1's sign-in, which names eu1", async () => {
      const { client } = await signedInUser(us, 'regional@example.com');
      const cookie = client.jar.get('__Host-gatehouse_session')!;
      assert.ok(cookie, 'https: the session cookie has the __Host- prefix');
      const home = await us.request({ method: 'GET', url: '/console', headers: { cookie: `__Host-gatehouse_session=${cookie}` } });
      assert.equal(home.status, 200, 'signed in at us1');
      assert.match(home.text, /region us1/);
      const there = await eu.request({ method: 'GET', url: '/console', headers: { cookie: `__Host-gatehouse_session=${cookie}` } });
      assert.equal(there.status, 303);
      assert.match(String(there.headers.location), /^\/login/);
      const signIn = await eu.request({
        method: 'GET',
        url: String(there.headers.location),
        headers: { cookie: `__Host-gatehouse_session=${cookie}` },
      });
      assert.equal(signIn.status, 200);
      assert.match(signIn.text, /<p class="brand">Vendor · region eu1<\/p>/);
      assert.doesNotMatch(signIn.text, /regional@example\.com/, 'nothing of the us1 session shows in eu1');
    });

    it("a us1 device code is refused by eu1's token endpoint, naming eu1", async () => {
      const started = await us.request({
        method: 'POST',
        url: '/auth/api/v2/auth/device/code',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: 'traveller@example.com' }).toString(),
      });
      assert.equal(started.status, 200, started.text);
      const poll = (t: TestApp) =>
        t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
            client_id: 'gatehouse-cli',
            device_code: started.body.device_code,
          }).toString(),
        });
      assert.equal((await poll(us)).body.error, 'authorization_pending', 'pending at us1');
      const there = await poll(eu);
      assert.equal(there.status, 400);
      assert.equal(there.body.error, 'invalid_grant');
      assert.match(there.body.error_description, /not valid in this deployment \(region eu1\)/);
    });
  });
}
