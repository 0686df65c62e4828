// Invitations prove the address (docs/users.md "Invitations and proven addresses"), end to end
// through a real SMTP server: the set-up link arrives only in the mail and works; an account
// nobody proved does not block the same address in another tenant (the squatting case); the
// account that proves the address wins, the other gives way (its link stops working, its
// administrator sees why, its sessions end), and a proven address stays CONFLICT elsewhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD } from '../helpers/pages.js';
import { linkIn, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createTenant } from '../helpers/tenants.js';

const CREATE = `mutation($e: String!) {
  createUser(email: $e) { user { id email_verified email_status setup_pending } setup_url setup_link_mailed }
}`;
const USER = 'query($id: ID!) { user(id: $id) { id email_verified email_status setup_pending } }';

for (const engine of engines()) {
  describe(`e-mail proof and the squatting case (${engine})`, () => {
    let t: TestApp;
    let smtp: TestSmtp;
    before(async () => {
      smtp = await startSmtp();
      t = await startTestApp({ engine, env: { GATEHOUSE_SMTP_URL: smtp.url } });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    const create = async (email: string, tenant: string) => {
      const res = await t.gql(await t.rootToken(), CREATE, { e: email }, { tenant });
      return res;
    };
    /** the link of the newest mail to `email`, delivered now */
    const mailedLink = async (email: string) => {
      const before = smtp.received.length;
      await t.service.services.mail.deliverDue();
      await smtp.waitFor(before + 1);
      const mail = smtp.received
        .filter((m) => m.parsed.to && 'value' in m.parsed.to && m.parsed.to.value[0]?.address?.toLowerCase() === email)
        .at(-1);
      assert.ok(mail, `a mail to ${email}`);
      const url = new URL(linkIn(mail));
      return url.pathname + url.search;
    };
    /** follows a set-up link to the authenticator step; the page after the password */
    const setPassword = async (b: PageClient, link: string) => {
      assert.equal((await b.get(link)).status, 303);
      const page = await b.get('/login');
      assert.match(page.text, /Choose your password/);
      return b.post('/login', { _csrf: b.csrf(page), password: PASSWORD, confirmation: PASSWORD });
    };
    const finishSetup = async (b: PageClient) => {
      const page = await b.get('/login');
      const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(page.text)![1]!.replace(/ /g, '');
      assert.equal((await b.post('/login', { _csrf: b.csrf(page), code: totpCodeAt(key, t.clock.now()) })).status, 200);
      return key;
    };
    const signIn = async (email: string, password: string, key?: string) => {
      t.clock.advance(31_000); // a code of a later time step than the last one used
      const b = new PageClient(t, 'gatehouse_session', '203.0.113.77');
      let res = await b.get('/login');
      res = await b.post('/login', { _csrf: b.csrf(res), email });
      res = await b.get('/login');
      res = await b.post('/login', { _csrf: b.csrf(res), password });
      if (res.status !== 303 || !key) return { status: res.status, text: res.text, b };
      res = await b.get('/login');
      res = await b.post('/login', { _csrf: b.csrf(res), code: totpCodeAt(key, t.clock.now()) });
      return { status: res.status, text: res.text, b };
    };
    const events = (action: string) => t.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', action).execute();

    it('a squatter’s unproven account does not block the real tenant; the mailed link proves the address and wins', async () => {
      const squatter = await createTenant(t, '1', { name: 'Squatters' });
      const bigcorp = await createTenant(t, '1', { name: 'BigCorp' });
      const other = await createTenant(t, '1', { name: 'Other' });

      const first = await create('bob@bigcorp.example', squatter);
      assert.equal(first.body.errors, undefined, first.text);
      assert.equal(first.body.data.createUser.setup_url, null, 'the squatting administrator never holds the link');
      const squatterLink = await mailedLink('bob@bigcorp.example');

      const real = await create('Bob@BigCorp.example', bigcorp);
      assert.equal(real.body.errors, undefined, 'an unproven account elsewhere does not block the address');
      assert.equal(real.body.data.createUser.setup_link_mailed, true);
      const realLink = await mailedLink('bob@bigcorp.example');
      assert.notEqual(realLink, squatterLink);

      // Bob follows BigCorp's mail
      const bob = new PageClient(t);
      assert.equal((await setPassword(bob, realLink)).status, 303);
      const key = await finishSetup(bob);
      const proven = await t.gql(await t.rootToken(), USER, { id: real.body.data.createUser.user.id });
      assert.deepEqual(proven.body.data.user, {
        id: real.body.data.createUser.user.id,
        email_verified: true,
        email_status: 'verified',
        setup_pending: false,
      });

      // the squatter's account gave way: its administrator sees it; its link says why
      const gaveWay = await t.gql(await t.rootToken(), USER, { id: first.body.data.createUser.user.id });
      assert.deepEqual([gaveWay.body.data.user.email_verified, gaveWay.body.data.user.email_status], [false, 'claimed_elsewhere']);
      const stale = await new PageClient(t).get(squatterLink);
      assert.equal(stale.status, 400);
      assert.match(stale.text, /another account proved that it owns this e-mail address first/);
      const claimed = await events('user.email_claimed_elsewhere');
      assert.deepEqual(
        claimed.map((e) => [String(e.tenant_id), e.target_id]),
        [[squatter, first.body.data.createUser.user.id]],
      );
      assert.equal((await events('user.email_verified')).length, 1);

      // the address is now the proven account's: CONFLICT elsewhere, without naming the tenant
      const third = await create('bob@bigcorp.example', other);
      assert.equal(third.body.errors[0].extensions.code, 'CONFLICT');
      assert.match(third.body.errors[0].message, /proved the address/);
      assert.doesNotMatch(third.body.errors[0].message, /BigCorp|Squatters/);

      // and sign-in reaches Bob's account
      const signedIn = await signIn('bob@bigcorp.example', PASSWORD, key);
      assert.equal(signedIn.status, 303, 'signed in');
      assert.match((await signedIn.b.get('/console')).text, /Signed in as <strong>Bob@BigCorp\.example<\/strong>/);
    });

    it('an account set up through a link shown to its administrator proves nothing, signs in until the address is proven, then no more', async () => {
      const squatter = await createTenant(t, '1', { name: 'Squatters 2' });
      const real = await createTenant(t, '1', { name: 'RealCorp' });
      // the operator's break-glass link is shown, not mailed
      const made = await t.service.services.users.createAsOperator({ kind: 'operator', id: 'root' }, squatter, { email: 'carol@realcorp.example' });
      assert.equal(made.mailed, false);
      const s = new PageClient(t);
      const link = new URL(made.setupUrl!);
      assert.equal((await setPassword(s, link.pathname + link.search)).status, 303);
      const squatterKey = await finishSetup(s);
      assert.equal((await t.gql(await t.rootToken(), USER, { id: made.user.id })).body.data.user.email_status, 'unverified');
      assert.equal((await signIn('carol@realcorp.example', PASSWORD, squatterKey)).status, 303, 'the only account with the address signs in');

      const invited = await create('carol@realcorp.example', real);
      assert.equal(invited.body.errors, undefined, invited.text);
      const carol = new PageClient(t);
      assert.equal((await setPassword(carol, await mailedLink('carol@realcorp.example'))).status, 303);
      await finishSetup(carol);

      // the squatter's session ended and its password no longer reaches any account
      assert.equal((await s.get('/console')).status, 303);
      assert.equal((await signIn('carol@realcorp.example', PASSWORD, squatterKey)).status, 400);
      assert.equal((await t.gql(await t.rootToken(), USER, { id: made.user.id })).body.data.user.email_status, 'claimed_elsewhere');
    });

    it('resetUserSignIn mails the new link too (setup_url null); a reset keeps a proven address proven', async () => {
      const tenant = await createTenant(t, '1');
      const made = await create('erin@example.net', tenant);
      const erin = new PageClient(t);
      assert.equal((await setPassword(erin, await mailedLink('erin@example.net'))).status, 303);
      await finishSetup(erin);
      const reset = await t.gql(
        await t.rootToken(),
        'mutation($id: ID!) { resetUserSignIn(id: $id) { user { email_status setup_pending } setup_url setup_link_mailed } }',
        { id: made.body.data.createUser.user.id },
        { tenant },
      );
      assert.equal(reset.body.errors, undefined, reset.text);
      assert.deepEqual(reset.body.data.resetUserSignIn, {
        user: { email_status: 'verified', setup_pending: true },
        setup_url: null,
        setup_link_mailed: true,
      });
      const n = smtp.received.length;
      const link = await mailedLink('erin@example.net');
      assert.match(smtp.received[n]!.parsed.subject ?? '', /Set up your sign-in to .* again/);
      assert.equal((await setPassword(new PageClient(t), link)).status, 303, 'the mailed reset link works');
    });

    it('two unproven accounts: sign-in tries the password against the older one only', async () => {
      const a = await createTenant(t, '1');
      const b = await createTenant(t, '1');
      const older = await t.service.services.users.createAsOperator({ kind: 'operator', id: 'root' }, a, { email: 'dan@example.org' });
      t.clock.advance(1000);
      const newer = await t.service.services.users.createAsOperator({ kind: 'operator', id: 'root' }, b, { email: 'dan@example.org' });
      const olderClient = new PageClient(t);
      const u1 = new URL(older.setupUrl!);
      assert.equal((await setPassword(olderClient, u1.pathname + u1.search)).status, 303);
      await finishSetup(olderClient);
      const newerClient = new PageClient(t);
      const u2 = new URL(newer.setupUrl!);
      const other = 'another long and unusual passphrase';
      assert.equal((await newerClient.get(u2.pathname + u2.search)).status, 303);
      let page = await newerClient.get('/login');
      assert.equal((await newerClient.post('/login', { _csrf: newerClient.csrf(page), password: other, confirmation: other })).status, 303);
      page = await newerClient.get('/login');
      // the newer account's password is never tried: the address names the older account
      assert.equal((await signIn('dan@example.org', other)).status, 400);
      assert.equal((await signIn('dan@example.org', PASSWORD)).status, 303);
    });
  });
}
