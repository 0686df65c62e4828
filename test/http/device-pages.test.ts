// The device approval page over HTTP, on both engines: it names where and when the device login
// was started, with a warning against approving someone else's (RFC 8628 section 5.4); and codes
// looked up there count against the address like typed ones, so a signed-in account cannot probe
// which codes are live.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';

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
      ).body as { user_code: string };

    it('names the address and time the login was started from, and warns against approving a stranger’s', async () => {
      const { user_code } = await start('203.0.113.9');
      t.clock.advance(3 * 60_000);
      const page = await person.get(`/device/approve?user_code=${user_code}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Requested from <strong>203\.0\.113\.9<\/strong> at 10:00 UTC \(3 minutes ago\)/);
      assert.match(page.text, /Approve only if you started this yourself, just now/);
    });

    it('probing codes on the approval page slows the address down after 10 wrong ones, as typing them does', async () => {
      const { user_code } = await start('203.0.113.10');
      for (let i = 0; i < 10; i++) assert.equal((await person.get(`/device/approve?user_code=BBBBBBB${'CDFGHJKLMN'[i]}`)).status, 400);
      const blocked = await person.get(`/device/approve?user_code=${user_code}`);
      assert.equal(blocked.status, 429, 'even a live code waits');
      assert.match(blocked.text, /Too many wrong codes/);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
    });

    it('a person not signed in signs in as the account the CLI named: the address is not asked, another one is refused before any password', async () => {
      const { user_code } = await start('203.0.113.11');
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
      assert.match((await browser.get(String(done.headers.location))).text, /Approve this device\?/);
    });
  });
}
