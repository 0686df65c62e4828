// The person's own account page over HTTP (src/http/pages/console/account.ts): the page and the
// header's link to it; a password change (the current password first, the set-up policy; a refusal
// shown again in words, nothing written; the new password signs in and the old does not); their
// authenticator replaced (a current code, the new key, a code from it: the new key signs in, the
// old does not); new recovery codes (a current code; shown once; they sign in); their sessions,
// and "sign out everywhere" ending every other one; CSRF; signed out, the way to sign in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { rowCounts } from '../helpers/seed.js';

const NEW_PASSWORD = 'a different and longer passphrase';

/** Signs in at /login with e-mail, password and code (from `key`, or a recovery code): the status
 *  of the password step's answer, and the client; `codeStatus` of the last step. */
async function signIn(
  t: TestApp,
  email: string,
  password: string,
  key: string,
  opts: { recoveryCode?: string; expectCode?: number } = {},
): Promise<{ passwordStatus: number; client: PageClient }> {
  const client = new PageClient(t);
  let page = await client.get('/login');
  await client.post('/login', { _csrf: client.csrf(page), email });
  page = await client.get('/login');
  const res = await client.post('/login', { _csrf: client.csrf(page), password });
  if (res.status !== 303) return { passwordStatus: res.status, client };
  t.clock.advance(30_000);
  page = await client.get('/login');
  const done = await client.post('/login', { _csrf: client.csrf(page), code: opts.recoveryCode ?? totpCodeAt(key, t.clock.now()) });
  assert.equal(done.status, opts.expectCode ?? 303, done.text.slice(0, 300));
  return { passwordStatus: res.status, client };
}

const events = async (t: TestApp, action: string) =>
  Number((await sql<{ n: string }>`select count(*)::text as n from audit_events where action = ${action}`.execute(t.db.kysely)).rows[0]!.n);

const passwordHash = async (t: TestApp, email: string) =>
  (await sql<{ h: string }>`select password_hash as h from users where email = ${email}`.execute(t.db.kysely)).rows[0]!.h;

for (const engine of transportEngines()) {
  describe(`console account page (${engine})`, () => {
    let t: TestApp;
    let me: PageClient;
    let key: string;

    before(async () => {
      t = await startTestApp({ engine });
      ({ client: me, key } = await signedInUser(t, 'me@acme.test'));
    });
    after(() => t.close());

    it('signed out, leads to sign-in; its forms too', async () => {
      const anonymous = new PageClient(t);
      const res = await anonymous.get('/console/account');
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, `/login?return_to=${encodeURIComponent('/console/account')}`);
    });

    it('shows who is signed in, the password form and the sessions, with a link in the header', async () => {
      const home = await me.get('/console');
      assert.match(home.text, /<a href="\/console\/account">Your account<\/a>/);
      const res = await me.get('/console/account');
      assert.equal(res.status, 200);
      assert.match(res.text, /<h1>Your account<\/h1>/);
      assert.match(res.text, /Signed in as <strong>me@acme\.test<\/strong>\./);
      assert.match(res.text, /action="\/console\/account\/password"/);
      assert.match(res.text, /<th scope="row">This browser<\/th>/);
      assert.match(res.text, /You are signed in nowhere else\./);
    });

    it('refuses a wrong current password, a mismatch and a weak one: the form again in words, nothing written', async () => {
      const page = await me.get('/console/account');
      const before = await rowCounts(t);
      const hashBefore = await passwordHash(t, 'me@acme.test');
      const cases: [Record<string, string>, RegExp][] = [
        [{ current: 'wrong password entirely', password: NEW_PASSWORD, confirmation: NEW_PASSWORD }, /Your current password is not right\./],
        [{ current: PASSWORD, password: NEW_PASSWORD, confirmation: 'something else here' }, /The two new passwords differ\./],
        [{ current: PASSWORD, password: 'short', confirmation: 'short' }, /Use at least 12 characters/],
        [{ current: PASSWORD, password: 'me@acme.test is me', confirmation: 'me@acme.test is me' }, /Do not use your e-mail address/],
      ];
      for (const [form, words] of cases) {
        const res = await me.post('/console/account/password', { _csrf: me.csrf(page), ...form });
        assert.equal(res.status, 400, JSON.stringify(form));
        assert.match(res.text, /role="alert"/);
        assert.match(res.text, words);
        assert.match(res.text, /action="\/console\/account\/password"/, 'the form again');
      }
      const after = await rowCounts(t);
      // a wrong current password is a failed attempt (its count and audit event), as at sign-in
      assert.deepEqual({ ...after, audit_events: 0 }, { ...before, audit_events: 0 });
      assert.equal(await passwordHash(t, 'me@acme.test'), hashBefore, 'the password is unchanged');
      assert.equal(await events(t, 'user.password_changed'), 0);
      const csrf = await me.post('/console/account/password', { current: PASSWORD, password: NEW_PASSWORD, confirmation: NEW_PASSWORD });
      assert.equal(csrf.status, 403, 'no CSRF token');
      assert.equal(await events(t, 'user.password_changed'), 0);
    });

    it('changes the password: the new one signs in, the old one does not, and every other session ends', async () => {
      // another browser of the same person, signed in with the old password
      t.clock.advance(30_000);
      const other = (await signIn(t, 'me@acme.test', PASSWORD, key)).client;
      assert.equal((await other.get('/console/account')).status, 200, 'another session, signed in');
      const page = await me.get('/console/account');
      const res = await me.post('/console/account/password', {
        _csrf: me.csrf(page),
        current: PASSWORD,
        password: NEW_PASSWORD,
        confirmation: NEW_PASSWORD,
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, '/console/account');
      const after = await me.get('/console/account');
      assert.match(after.text, /Your password was changed, and every other session of yours was signed out\./);
      assert.equal(await events(t, 'user.password_changed'), 1);
      assert.equal((await other.get('/console/account')).status, 303, 'the other session was signed out with the old password');
      const [event] = (await sql<{ details: unknown }>`select details from audit_events where action = 'user.password_changed'`.execute(t.db.kysely))
        .rows;
      assert.ok(Number((typeof event!.details === 'string' ? JSON.parse(event!.details) : event!.details).other_sessions_ended) >= 1);
      assert.equal((await signIn(t, 'me@acme.test', PASSWORD, key)).passwordStatus, 400, 'the old password is refused');
      assert.equal((await signIn(t, 'me@acme.test', NEW_PASSWORD, key)).passwordStatus, 303, 'the new one passes');
    });

    it('replaces the authenticator: a current code, then the new key and a code from it; every other session ends', async () => {
      t.clock.advance(30_000);
      const other = (await signIn(t, 'me@acme.test', NEW_PASSWORD, key)).client;
      assert.equal((await other.get('/console/account')).status, 200, 'another session, signed in with the old authenticator');
      let page = await me.get('/console/account');
      assert.match(page.text, /action="\/console\/account\/authenticator"/);
      // a wrong current code: the page again, nothing begun
      t.clock.advance(30_000);
      let res = await me.post('/console/account/authenticator', { _csrf: me.csrf(page), code: '000000' });
      assert.equal(res.status, 400);
      assert.match(res.text, /role="alert"><p>That code is not right, or it was already used\./);
      assert.equal((await me.get('/console/account/authenticator')).status, 303, 'nothing pending');
      assert.equal((await me.post('/console/account/authenticator', { code: totpCodeAt(key, t.clock.now()) })).status, 403, 'no CSRF token');

      res = await me.post('/console/account/authenticator', { _csrf: me.csrf(page), code: totpCodeAt(key, t.clock.now()) });
      assert.equal(res.status, 200, res.text.slice(0, 500));
      assert.match(res.text, /<h1>Your new authenticator<\/h1>/);
      assert.match(res.text, /<svg/);
      const newKey = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(res.text)![1]!.replace(/ /g, '');
      assert.notEqual(newKey, key);
      // shown again while pending; a wrong code from it keeps the old one
      page = await me.get('/console/account/authenticator');
      assert.match(page.text, new RegExp(newKey.slice(0, 4)));
      res = await me.post('/console/account/authenticator/confirm', { _csrf: me.csrf(page), code: '000000' });
      assert.equal(res.status, 400);
      assert.match(res.text, /Enter the code the new authenticator shows now/);
      assert.equal(await events(t, 'user.totp_reenrolled'), 0);

      t.clock.advance(30_000);
      res = await me.post('/console/account/authenticator/confirm', { _csrf: me.csrf(page), code: totpCodeAt(newKey, t.clock.now()) });
      assert.equal(res.status, 303);
      page = await me.get('/console/account');
      assert.match(page.text, /Your authenticator was replaced/);
      assert.doesNotMatch(page.text, /waiting for its first code/);
      assert.equal(await events(t, 'user.totp_reenrolled'), 1);
      assert.equal((await other.get('/console/account')).status, 303, 'the session opened with the old authenticator ended');
      assert.equal((await me.get('/console/account')).status, 200, 'this one goes on');
      await signIn(t, 'me@acme.test', NEW_PASSWORD, key, { expectCode: 400 });
      await signIn(t, 'me@acme.test', NEW_PASSWORD, newKey);
      key = newKey;
    });

    it('a new authenticator waits 10 minutes for its first code, then is gone from the session', async () => {
      let page = await me.get('/console/account');
      t.clock.advance(30_000);
      let res = await me.post('/console/account/authenticator', { _csrf: me.csrf(page), code: totpCodeAt(key, t.clock.now()) });
      assert.equal(res.status, 200, res.text.slice(0, 300));
      const pendingKey = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(res.text)![1]!.replace(/ /g, '');
      t.clock.advance(9 * 60_000);
      assert.equal((await me.get('/console/account/authenticator')).status, 200, 'still pending after 9 minutes');
      t.clock.advance(2 * 60_000);
      assert.equal((await me.get('/console/account/authenticator')).status, 303, 'no longer shown after 11');
      page = await me.get('/console/account');
      res = await me.post('/console/account/authenticator/confirm', { _csrf: me.csrf(page), code: totpCodeAt(pendingKey, t.clock.now()) });
      assert.equal(res.status, 400);
      assert.match(res.text, /Nothing is being replaced \(a new authenticator waits 10 minutes for its first code\)/);
      assert.equal(await events(t, 'user.totp_reenrolled'), 1, 'only the replacement made earlier');
    });

    it('makes new recovery codes: a current code first, shown once, and they sign in', async () => {
      const page = await me.get('/console/account');
      t.clock.advance(30_000);
      let res = await me.post('/console/account/recovery-codes', { _csrf: me.csrf(page), code: '123456' });
      assert.equal(res.status, 400);
      assert.match(res.text, /That code is not right/);
      assert.equal(await events(t, 'user.recovery_codes_renewed'), 0);
      assert.equal((await me.post('/console/account/recovery-codes', { code: totpCodeAt(key, t.clock.now()) })).status, 403, 'no CSRF token');

      res = await me.post('/console/account/recovery-codes', { _csrf: me.csrf(page), code: totpCodeAt(key, t.clock.now()) });
      assert.equal(res.status, 200);
      assert.match(res.text, /shown only on this page/);
      assert.match(res.text, /<script src="\/ui\/copy\.js"/);
      const codes = [...res.text.matchAll(/<li>([^<]+)<\/li>/g)].map((m) => m[1]!);
      assert.equal(codes.length, 10);
      assert.equal(await events(t, 'user.recovery_codes_renewed'), 1);
      assert.doesNotMatch((await me.get('/console/account')).text, new RegExp(codes[0]!), 'not shown again');
      await signIn(t, 'me@acme.test', NEW_PASSWORD, key, { recoveryCode: codes[0]! });
    });

    it('signs out everywhere else: the other sessions end, this one goes on', async () => {
      const { client: other } = await signIn(t, 'me@acme.test', NEW_PASSWORD, key);
      assert.equal((await other.get('/console')).status, 200);
      let page = await me.get('/console/account');
      assert.match(page.text, /Another browser/);
      assert.doesNotMatch(page.text, /You are signed in nowhere else/);
      const forged = await me.post('/console/account/sessions', {});
      assert.equal(forged.status, 403, 'no CSRF token');
      assert.equal((await other.get('/console')).status, 200, 'nothing ended');

      const res = await me.post('/console/account/sessions', { _csrf: me.csrf(page) });
      assert.equal(res.status, 303);
      page = await me.get('/console/account');
      assert.match(page.text, /You were signed out of \d+ other sessions?\./);
      assert.match(page.text, /You are signed in nowhere else\./);
      assert.equal((await other.get('/console')).status, 303, 'the other browser is signed out');
      assert.equal((await me.get('/console')).status, 200, 'this one goes on');
      assert.equal(await events(t, 'user.sessions_ended'), 1);
    });
  });
}
