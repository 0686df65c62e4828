// What a browser meets at the service's own address (README, "Routes"): `GET /` leads to sign-in
// (and from there, once signed in, to the console), not to the API's JSON 404; `GET /favicon.ico`,
// which browsers ask for by themselves, is answered 204 and logs no error or warning.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, signedInUser } from '../helpers/pages.js';

for (const engine of transportEngines()) {
  describe(`the service's own address in a browser (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    /** the log lines written since `from` at level warn (40) or above */
    const complaints = (from: number) => t.logs.slice(from).filter((line) => (JSON.parse(line) as { level: number }).level >= 40);

    it('GET / leads to sign-in, and a signed-in person on from there to the console', async () => {
      const browser = new PageClient(t);
      const root = await browser.get('/');
      assert.equal(root.status, 302);
      assert.equal(root.headers.location, '/login');
      const signIn = await browser.get('/login');
      assert.equal(signIn.status, 200);
      assert.match(signIn.text, /<h1>Sign in<\/h1>/);

      const { client } = await signedInUser(t, 'root-page@example.com');
      const again = await client.get('/');
      assert.equal(again.headers.location, '/login');
      const on = await client.get('/login');
      assert.equal(on.status, 303);
      assert.equal(on.headers.location, '/console');
      assert.equal((await client.get('/console')).status, 200);

      const head = await t.request({ method: 'HEAD', url: '/' });
      assert.equal(head.status, 302);
      assert.equal(head.headers.location, '/login');
    });

    it('GET /favicon.ico is answered 204, cached for a day, with nothing logged above info', async () => {
      const from = t.logs.length;
      for (let i = 0; i < 2; i++) {
        const res = await t.request({ method: 'GET', url: '/favicon.ico' });
        assert.equal(res.status, 204);
        assert.equal(res.text, '');
        assert.equal(res.headers['cache-control'], 'public, max-age=86400');
      }
      assert.ok(t.logs.length > from, 'the requests were logged');
      assert.deepEqual(complaints(from), []);
    });

    it('other unknown addresses are still the API’s JSON 404', async () => {
      const res = await t.request({ method: 'GET', url: '/nothing-here' });
      assert.equal(res.status, 404);
      assert.equal(res.body.error, 'NOT_FOUND');
    });
  });
}
