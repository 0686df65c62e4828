// The device approval page over HTTP, on both engines: it names where and when the device login
// was started, with a warning against approving someone else's (RFC 8628 section 5.4); and codes
// looked up there count against the address like typed ones, so a signed-in account cannot probe
// which codes are live. Every device page, refusals included, is unframeable; a code is refused
// once expired; the CLI's poll stays pending until Approve is posted; the token is the approver's,
// in their home tenant, whatever tenant the form adds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { createTenant } from '../helpers/tenants.js';

for (const engine of transportEngines()) {
  describe(`device approval page (${engine})`, () => {
    let t: TestApp;
    let person: PageClient;
    let key: string;
    before(async () => {
      t = await startTestApp({ engine });
      ({ client: person, key } = await signedInUser(t, 'approver@example.com'));
    });
    after(() => t.close());

    const start = async (remoteAddress: string) =>
      (
        await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/device/code',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: 'approver@example.com' }).toString(),
          remoteAddress,
        })
      ).body as { user_code: string; device_code: string };
    /** the CLI's poll of the token endpoint */
    const poll = (deviceCode: string) =>
      t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: deviceCode,
          client_id: 'gatehouse-cli',
        }).toString(),
      });
    /** the signed-in person's browser, from another address (wrong codes count per address) */
    const personAt = (address: string) => {
      const c = new PageClient(t, undefined, address);
      for (const [k, v] of person.jar) c.jar.set(k, v);
      return c;
    };
    /** RFC 9700 section 4.16: no page may be framed (clickjacking); none is cached */
    const assertUnframeable = (res: Response, what: string) => {
      assert.match(String(res.headers['content-security-policy']), /(^|; )frame-ancestors 'none'(;|$)/, what);
      assert.equal(res.headers['x-frame-options'], 'DENY', what);
      assert.equal(res.headers['cache-control'], 'no-store', what);
    };

    it('names the address and time the login was started from, and warns against approving a stranger’s', async () => {
      const { user_code } = await start('203.0.113.9');
      t.clock.advance(3 * 60_000);
      const page = await person.get(`/device/approve?user_code=${user_code}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Requested from <strong>203\.0\.113\.9<\/strong> at 10:00 UTC \(3 minutes ago\)/);
      assert.match(page.text, /Approve only if you started this yourself, just now/);
      // RFC 8628 section 5.4: the client, the tenant and what the token may do, named
      assert.match(
        page.text,
        /A device \(a command line or notebook, client <code>gatehouse-cli<\/code>\) asks to act as <strong>approver@example\.com<\/strong> in tenant <strong>Vendor<\/strong> \(id 1\), with your roles \(Analyst\)/,
      );
    });

    it('probing codes on the approval page slows the address down after 10 wrong ones, as typing them does', async () => {
      const { user_code } = await start('203.0.113.10');
      for (let i = 0; i < 10; i++) assert.equal((await person.get(`/device/approve?user_code=BBBBBBB${'CDFGHJKLMN'[i]}`)).status, 400);
      const blocked = await person.get(`/device/approve?user_code=${user_code}`);
      assert.equal(blocked.status, 429, 'even a live code waits');
      assert.match(blocked.text, /Too many wrong codes/);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
      assertUnframeable(blocked, 'the 429 page');
    });

    it('a person not signed in signs in as the account the CLI named: the address is not asked, another one is refused before any password; the CLI waits until Approve is posted', async () => {
      const { user_code, device_code } = await start('203.0.113.11');
      const browser = new PageClient(t, undefined, '198.51.100.40');
      let page = await browser.get(`/device?user_code=${user_code}`);
      assert.equal((await browser.post('/device', { _csrf: browser.csrf(page), user_code })).headers.location, '/login');
      page = await browser.get('/login');
      assert.match(page.text, /Enter your password/, 'straight to the password: the CLI named the account');
      assert.match(page.text, new RegExp(`Sign in as <strong>approver@example\\.com</strong> to approve <strong[^>]*>${user_code}</strong>`));
      assert.doesNotMatch(page.text, /Use another e-mail address/);
      assert.match(page.text, /autocomplete="username"/, 'the account is there for password managers');

      // another browser on the same code, sent back to the e-mail step
      const other = new PageClient(t, undefined, '198.51.100.41');
      page = await other.get(`/device?user_code=${user_code}`);
      await other.post('/device', { _csrf: other.csrf(page), user_code });
      page = await other.get('/login');
      // a person who types another address at the e-mail step (reached by going back) is refused before a password is asked
      const session = await t.service.services.sessions.find(other.cookie);
      await t.service.services.signIn.restart(session!);
      page = await other.get('/login');
      assert.match(page.text, /value="approver@example\.com"/, 'the e-mail step comes filled in');
      const refused = await other.post('/login', { _csrf: other.csrf(page), email: 'someone-else@example.com' });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /This sign-in is for approver@example\.com only/);
      page = await other.get('/login');
      assert.match(page.text, /E-mail address/, 'still at the e-mail step: no password asked');
      // giving this account up makes it an ordinary sign-in, which no longer returns to the approval
      assert.equal((await other.post('/login/restart', { _csrf: other.csrf(page), forget: '1' })).status, 303);
      page = await other.get('/login');
      assert.doesNotMatch(page.text, /value="approver@example\.com"/);
      assert.equal((await other.post('/login', { _csrf: other.csrf(page), email: 'someone-else@example.com' })).status, 303);
      assert.match((await other.get('/login')).text, /Enter your password/);

      // the named account signs in and lands on the approval page
      page = await browser.get('/login');
      assert.equal((await browser.post('/login', { _csrf: browser.csrf(page), password: PASSWORD })).status, 303);
      page = await browser.get('/login');
      t.clock.advance(30_000);
      const done = await browser.post('/login', { _csrf: browser.csrf(page), code: totpCodeAt(key, t.clock.now()) });
      assert.equal(done.status, 303);
      assert.equal(done.headers.location, `/device/approve?user_code=${user_code.replace('-', '')}`);
      page = await browser.get(String(done.headers.location));
      assert.match(page.text, /Approve this device\?/);
      // signed in and shown the question: nothing is approved until the person answers it
      let polled = await poll(device_code);
      assert.deepEqual([polled.status, polled.body.error], [400, 'authorization_pending'], 'signing in approves nothing');
      const approved = await browser.post('/device/approve', { _csrf: browser.csrf(page), user_code, decision: 'approve' });
      assert.match(approved.text, /Device approved/);
      t.clock.advance(5_000);
      polled = await poll(device_code);
      assert.equal(polled.status, 200, polled.text);
    });

    it('every device page is unframeable: the code form, the code to confirm, the approval, its answer, a wrong code', async () => {
      const { user_code } = await start('203.0.113.12');
      const browser = new PageClient(t, undefined, '198.51.100.42');
      let page = await browser.get('/device');
      assert.match(page.text, /Code shown at your command line/);
      assertUnframeable(page, 'GET /device');
      page = await browser.get(`/device?user_code=${user_code}`);
      assert.match(page.text, /Is this your code\?/);
      assertUnframeable(page, 'GET /device?user_code=…');
      const wrong = await browser.post('/device', { _csrf: browser.csrf(page), user_code: 'BBBB-BBBB' });
      assert.equal(wrong.status, 400);
      assert.match(wrong.text, /That code is not valid, or it expired/);
      assertUnframeable(wrong, 'POST /device, a wrong code');

      const signedIn = personAt('203.0.113.61');
      const refused = await signedIn.get('/device/approve?user_code=BBBBBBBB');
      assert.equal(refused.status, 400);
      assert.match(refused.text, /This code no longer works/);
      assertUnframeable(refused, 'GET /device/approve, a wrong code');
      page = await signedIn.get(`/device/approve?user_code=${user_code}`);
      assert.match(page.text, /Approve this device\?/);
      assertUnframeable(page, 'GET /device/approve');
      const denied = await signedIn.post('/device/approve', { _csrf: signedIn.csrf(page), user_code, decision: 'deny' });
      assert.equal(denied.status, 200);
      assert.match(denied.text, /Device denied/);
      assertUnframeable(denied, 'POST /device/approve');
    });

    it('a code 600 s old is refused on the approval page and when typed, with the same words as a wrong one', async () => {
      const { user_code, device_code } = await start('203.0.113.13');
      const signedIn = personAt('203.0.113.62');
      t.clock.advance(599_000);
      assert.match((await signedIn.get(`/device/approve?user_code=${user_code}`)).text, /Approve this device\?/, 'still good at 599 s');
      t.clock.advance(1_000);
      const page = await signedIn.get(`/device/approve?user_code=${user_code}`);
      assert.equal(page.status, 400);
      assert.match(page.text, /This code no longer works/);
      assert.match(page.text, /That code is not valid, or it expired/);
      assert.doesNotMatch(page.text, /name="decision"/, 'nothing to approve');
      const browser = new PageClient(t, undefined, '198.51.100.43');
      const form = await browser.get('/device');
      const typed = await browser.post('/device', { _csrf: browser.csrf(form), user_code });
      assert.equal(typed.status, 400);
      assert.match(typed.text, /That code is not valid, or it expired/);
      const polled = await poll(device_code);
      assert.deepEqual([polled.status, polled.body.error], [400, 'expired_token']);
    });

    it('a code typed with over 64 characters is refused whole, not cut to the code it starts with', async () => {
      const { user_code } = await start('203.0.113.14');
      const browser = new PageClient(t, undefined, '198.51.100.44');
      let page = await browser.get('/device');
      const long = await browser.post('/device', { _csrf: browser.csrf(page), user_code: `${user_code}${' '.repeat(55)}x` });
      assert.equal(long.status, 400);
      assert.match(long.text, /That code is not valid, or it expired/);
      page = await browser.get('/device');
      const fits = await browser.post('/device', { _csrf: browser.csrf(page), user_code: `${user_code}${' '.repeat(55)}` });
      assert.equal(fits.status, 303, '64 characters are read');
    });

    it('a tenant added to the approval form changes nothing: the token is the approver’s, in their home tenant', async () => {
      const other = await createTenant(t, '1');
      const approver = await t.db.kysely
        .selectFrom('users')
        .select(['id', 'tenant_id'])
        .where('email', '=', 'approver@example.com')
        .executeTakeFirstOrThrow();
      assert.notEqual(String(approver.tenant_id), other);
      const { user_code, device_code } = await start('203.0.113.15');
      const signedIn = personAt('203.0.113.63');
      const page = await signedIn.get(`/device/approve?user_code=${user_code}`);
      const approved = await signedIn.post('/device/approve', {
        _csrf: signedIn.csrf(page),
        user_code,
        decision: 'approve',
        tenant: other,
        tenant_id: other,
      });
      assert.match(approved.text, /Device approved/);
      const polled = await poll(device_code);
      assert.equal(polled.status, 200, polled.text);
      const claims = decodeJwt(polled.body.access_token);
      assert.deepEqual([claims.sub, claims.pty, claims.tid], [approver.id, 'user', String(approver.tenant_id)]);
    });
  });
}
