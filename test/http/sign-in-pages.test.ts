// The sign-in pages over HTTP (docs/users.md, "Sign-in"), on both engines: a set-up link through
// password and authenticator enrolment to the console, later sign-in with a code, sign-out; the
// cookie's attributes, CSRF on every form, a new session id at sign-in, the headers every page
// sends. (In a real browser: test/browser/.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient as Browser, PASSWORD, signedInUser } from '../helpers/pages.js';

for (const engine of engines()) {
  describe(`sign-in pages (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    async function setupLink(email: string): Promise<string> {
      const res = await t.gql(await t.rootToken(), 'mutation($e: String!) { createUser(email: $e) { setup_url } }', { e: email });
      const url = new URL(res.body.data.createUser.setup_url);
      return url.pathname + url.search;
    }

    it('every page is no-store, unframeable, its one script the passkey button’s file; the cookie is HttpOnly and SameSite=Lax', async () => {
      const res = await t.request({ method: 'GET', url: '/login' });
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'.*frame-ancestors 'none'/);
      // the passkey button (docs/users.md "Passkeys"): this service's own file, nothing inline
      assert.match(String(res.headers['content-security-policy']), /script-src 'self'; require-trusted-types-for 'script'$/);
      assert.doesNotMatch(String(res.headers['content-security-policy']), /unsafe-inline/);
      assert.deepEqual(
        [...res.text.matchAll(/<script[^>]*>/gi)].map((m) => m[0]),
        ['<script src="/ui/passkey.js" defer>'],
      );
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.text, /<label for="email">E-mail address<\/label>/);
      assert.match(String(res.headers['set-cookie']), /^gatehouse_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
      const css = await t.request({ method: 'GET', url: '/ui/gatehouse.css' });
      assert.equal(css.status, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
      assert.equal(css.headers['cache-control'], 'public, max-age=3600', 'a stylesheet is not a page: it may be cached');
    });

    it('a set-up link leads through password and authenticator to the console, under a new session id', async () => {
      const b = new Browser(t);
      const link = await b.get(await setupLink('pages@example.com'));
      assert.equal(link.status, 303);
      assert.equal(link.headers.location, '/login', 'the token leaves the address bar');
      const anonymousCookie = b.cookie;
      let pageRes = await b.get('/login');
      assert.match(pageRes.text, /Choose your password/);

      const forged = await b.post('/login', { _csrf: 'x'.repeat(43), password: PASSWORD, confirmation: PASSWORD });
      assert.equal(forged.status, 403, 'no CSRF token, no action');
      const weak = await b.post('/login', { _csrf: b.csrf(pageRes), password: 'short', confirmation: 'short' });
      assert.equal(weak.status, 400);
      assert.match(weak.text, /role="alert">Use at least 12 characters/);
      assert.equal((await b.post('/login', { _csrf: b.csrf(weak), password: PASSWORD, confirmation: PASSWORD })).status, 303);

      pageRes = await b.get('/login');
      assert.match(pageRes.text, /Set up your authenticator/);
      assert.match(pageRes.text, /<svg[^>]*viewBox/);
      const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(pageRes.text)![1]!.replace(/ /g, '');
      const done = await b.post('/login', { _csrf: b.csrf(pageRes), code: totpCodeAt(key, t.clock.now()) });
      assert.equal(done.status, 200);
      assert.equal((done.text.match(/<li>[0-9a-z]{5}-[0-9a-z]{5}-[0-9a-z]{4}<\/li>/g) ?? []).length, 10, 'ten recovery codes, shown once');
      // their copy and download buttons: the copy script, the CSP that allows it and nothing inline
      assert.equal(done.headers['cache-control'], 'no-store');
      assert.match(String(done.headers['content-security-policy']), /default-src 'none'.*script-src 'self'; require-trusted-types-for 'script'$/);
      assert.match(done.text, /<script src="\/ui\/copy\.js" defer><\/script>/);
      assert.doesNotMatch(done.text, /<script>|style="|javascript:/, 'nothing inline');
      assert.match(done.text, /<ol class="codes" id="recovery-codes">/);
      assert.match(done.text, /<button type="button" class="secondary" data-copy="recovery-codes" hidden>Copy codes<\/button>/);
      assert.match(
        done.text,
        /<button type="button" class="secondary" data-download="recovery-codes" data-filename="vendor-recovery-codes\.txt" data-heading="Vendor recovery codes\. [^"]+" hidden>Download as \.txt<\/button>/,
      );
      assert.match(done.text, /<p id="recovery-codes-status" class="hint" role="status"><\/p>/);
      const script = await t.request({ method: 'GET', url: '/ui/copy.js' });
      assert.equal(script.status, 200);
      assert.match(String(script.headers['content-type']), /^text\/javascript/);
      assert.match(script.text, /data-download/);
      assert.notEqual(b.cookie, anonymousCookie, 'a new session id at sign-in');

      const consolePage = await b.get('/console');
      assert.equal(consolePage.status, 200);
      assert.match(consolePage.text, /Signed in as <strong>pages@example\.com<\/strong>/);
      const stale = new Browser(t);
      stale.cookie = anonymousCookie;
      assert.equal((await stale.get('/console')).headers.location, '/login?return_to=%2Fconsole', 'the old id signs nobody in');

      const out = await b.post('/logout', { _csrf: b.csrf(consolePage) });
      assert.equal(out.status, 303);
      assert.equal(b.cookie, undefined, 'the cookie is cleared');
      assert.equal((await b.get('/console')).status, 303);
      assert.equal((await b.get(await setupLink('pages2@example.com'))).status, 303);
    });

    it('later: e-mail, password, code; a wrong password says so without saying whether the account exists', async () => {
      const b = new Browser(t);
      let res = await b.get('/login');
      res = await b.post('/login', { _csrf: b.csrf(res), email: 'nobody@example.com' });
      res = await b.get('/login');
      const unknown = await b.post('/login', { _csrf: b.csrf(res), password: PASSWORD });
      assert.equal(unknown.status, 400);
      assert.match(unknown.text, /The e-mail address or the password is wrong/);
      const restarted = await b.post('/login/restart', { _csrf: b.csrf(unknown) });
      assert.equal(restarted.status, 303);
      res = await b.get('/login');
      assert.match(res.text, /E-mail address/);
    });

    it('a set-up link opened while signed in asks first, and keeps the signed-in session until the person confirms', async () => {
      const { client: alice } = await signedInUser(t, 'alice-switch@example.com');
      const aliceCookie = alice.cookie;
      const opened = await alice.get(await setupLink('bob-switch@example.com'));
      assert.equal(opened.status, 303);
      assert.equal(opened.headers.location, '/login/setup', 'the token leaves the address bar');
      assert.equal(alice.cookie, aliceCookie, 'nothing switched yet');
      assert.match((await alice.get('/console')).text, /Signed in as <strong>alice-switch@example\.com<\/strong>/);
      const ask = await alice.get('/login/setup');
      assert.match(
        ask.text,
        /You are signed in as <strong>alice-switch@example\.com<\/strong>\. This link sets up <strong>bob-switch@example\.com<\/strong>/,
      );

      // "stay": Alice goes on, and the link is forgotten by her session
      const stay = await alice.post('/login/setup/cancel', { _csrf: alice.csrf(ask) });
      assert.equal(stay.headers.location, '/console');
      assert.match((await alice.get('/console')).text, /Signed in as <strong>alice-switch@example\.com/);
      assert.equal((await alice.get('/login/setup')).status, 400, 'no link waiting any more');

      // opened again and confirmed: Alice is signed out, Bob's set-up begins under a new session
      await alice.get(await setupLink('carol-switch@example.com'));
      const again = await alice.get('/login/setup');
      const confirmed = await alice.post('/login/setup', { _csrf: alice.csrf(again) });
      assert.equal(confirmed.headers.location, '/login');
      assert.notEqual(alice.cookie, aliceCookie);
      const setup = await alice.get('/login');
      assert.match(setup.text, /Setting up <strong>carol-switch@example\.com<\/strong>/);
      assert.match(setup.text, /autocomplete="username" value="carol-switch@example\.com"/, 'the account for password managers');
      const stale = new Browser(t);
      stale.cookie = aliceCookie;
      assert.equal((await stale.get('/console')).status, 303, "Alice's session ended");
    });

    it('a session past the password but not the code reaches neither the device approval nor the console: it is sent to sign in, nothing is approved or made', async () => {
      const email = 'half-way@example.com';
      const { key } = await signedInUser(t, email);
      const started = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/device/code',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: email }).toString(),
        remoteAddress: '203.0.113.70',
      });
      assert.equal(started.status, 200, started.text);
      const { user_code, device_code } = started.body as { user_code: string; device_code: string };
      const poll = async () => {
        t.clock.advance(10_000);
        const res = await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/token',
          payload: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code, client_id: 'gatehouse-cli' },
          remoteAddress: '203.0.113.70',
        });
        return res.body.error ?? 'a token';
      };
      const clients = async () => (await t.gql(await t.rootToken(), '{ clients(perPage: 500) { name } }')).body.data.clients.length;
      const clientsBefore = await clients();

      // the code typed at /device, then the password of the account the CLI named; the code is not given
      const b = new Browser(t, undefined, '198.51.100.70');
      let page = await b.get(`/device?user_code=${user_code}`);
      assert.equal((await b.post('/device', { _csrf: b.csrf(page), user_code })).headers.location, '/login');
      page = await b.get('/login');
      assert.equal((await b.post('/login', { _csrf: b.csrf(page), password: PASSWORD })).status, 303);
      const codeStep = await b.get('/login');
      assert.match(codeStep.text, /Enter your code/);
      const csrf = b.csrf(codeStep);

      const approvePath = `/device/approve?user_code=${user_code.replace('-', '')}`;
      const shown = await b.get(approvePath);
      assert.equal(shown.status, 303);
      assert.equal(shown.headers.location, `/login?return_to=${encodeURIComponent(approvePath)}`);
      assert.doesNotMatch(shown.text, /Approve this device/);
      for (const decision of ['approve', 'deny']) {
        const posted = await b.post('/device/approve', { _csrf: csrf, user_code: user_code.replace('-', ''), decision });
        assert.equal(posted.status, 303, `${decision}: ${posted.text}`);
        assert.equal(posted.headers.location, '/login');
      }
      assert.equal(await poll(), 'authorization_pending', 'neither approved nor denied');

      for (const path of ['/console', '/console/account', '/console/credentials?tenant=1', '/console/credentials/new?tenant=1']) {
        const res = await b.get(path);
        assert.equal(res.status, 303, path);
        assert.equal(res.headers.location, `/login?return_to=${encodeURIComponent(path)}`, path);
      }
      const made = await b.post('/console/credentials/new', {
        _csrf: csrf,
        tenant: '1',
        name: 'half-way',
        [`role_${ROLE_IDS.Analyst}`]: ROLE_IDS.Analyst,
      });
      assert.equal(made.status, 303, made.text);
      assert.equal(made.headers.location, '/login?return_to=%2Fconsole');
      assert.equal(await clients(), clientsBefore, 'no client was made');

      // the control: still at the code step, and the code opens the approval (then the console)
      page = await b.get('/login');
      assert.match(page.text, /Enter your code/);
      t.clock.advance(30_000);
      const done = await b.post('/login', { _csrf: b.csrf(page), code: totpCodeAt(key, t.clock.now()) });
      assert.equal(done.headers.location, approvePath);
      const approval = await b.get(approvePath);
      assert.match(approval.text, /Approve this device\?/);
      assert.equal(
        (await b.post('/device/approve', { _csrf: b.csrf(approval), user_code: user_code.replace('-', ''), decision: 'approve' })).status,
        200,
      );
      assert.equal(await poll(), 'a token');
      assert.equal((await b.get('/console')).status, 200);
    });

    it('a set-up link that is wrong or used says so and signs nobody in', async () => {
      const b = new Browser(t);
      const res = await b.get(`/login/setup?token=${'A'.repeat(43)}`);
      assert.equal(res.status, 400);
      assert.match(res.text, /Ask your administrator for a new one/);
      assert.equal(b.cookie, undefined);
    });

    it('signing out of a session that already ended clears the cookie; /login when signed in goes where the link asks', async () => {
      const { client } = await signedInUser(t, 'ended@example.com');
      assert.equal((await client.get('/login?return_to=%2Fdevice')).headers.location, '/device');
      assert.equal((await client.get('/login')).headers.location, '/console', 'not where an earlier sign-in was going');
      t.clock.advance((t.config.sessionIdleSeconds + 1) * 1000);
      const out = await client.post('/logout', {});
      assert.equal(out.status, 303);
      assert.equal(out.headers.location, '/login');
      assert.match(String(out.headers['set-cookie']), /Max-Age=0/);
    });

    it('a request the pages cannot read is answered with a page, not JSON', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `email=${'a'.repeat(20_000)}`,
      });
      assert.equal(res.status, 413);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.text, /This request could not be read/);
      assert.match(res.text, /larger than the 16 KiB this page accepts/, 'the words name the limit');
      assert.equal(res.headers['cache-control'], 'no-store');
    });

    it('over https the cookie is __Host- prefixed and Secure', async () => {
      const secure = await startTestApp({ engine, env: { GATEHOUSE_BASE_URL: 'https://id.example.com' } });
      try {
        const res = await secure.request({ method: 'GET', url: '/login' });
        assert.match(String(res.headers['set-cookie']), /^__Host-gatehouse_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
      } finally {
        await secure.close();
      }
    });
  });
}
