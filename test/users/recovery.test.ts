// Self-service recovery and notices (docs/users.md "Forgotten password", "Lost authenticator",
// "Notices"), over HTTP with a real SMTP server in the test process: the reset link arrives only in
// the mail, works once, dies after its time and when the password changes otherwise; the answer is
// the same whatever the address, and only an account with a password gets a link; the requests are
// throttled even when made all at once; each change of a password, authenticator, recovery codes or
// address, and each device approval, mails a notice; no reset link is kept in clear anywhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { canonicalUserCode } from '../../src/device/model.js';
import { smtpTransport } from '../../src/mail/transports.js';
import { RESET_ANSWER_MS } from '../../src/signin/service.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, setupLink, signedInUser } from '../helpers/pages.js';
import { type ReceivedMail, startSmtp, type TestSmtp } from '../helpers/smtp.js';

const NEW_PASSWORD = 'another quite unusual passphrase';

for (const engine of engines()) {
  describe(`password reset, lost authenticator and notices (${engine})`, () => {
    let t: TestApp;
    let smtp: TestSmtp;
    /** every reset link mailed during the run: none may be found in clear at rest or in the logs */
    const links: string[] = [];
    before(async () => {
      smtp = await startSmtp();
      // the transport goes to the test server; without GATEHOUSE_SMTP_URL createUser still shows
      // the set-up link, so the accounts are set up as the other page tests do
      t = await startTestApp({ engine, mailTransport: smtpTransport(smtp.url) });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    const toOf = (m: ReceivedMail) => (m.parsed.to && 'value' in m.parsed.to ? (m.parsed.to.value[0]?.address ?? '') : '').toLowerCase();
    /** delivers what is queued; the messages that arrived for `email` since `from` */
    const deliver = async (email: string, from: number): Promise<ReceivedMail[]> => {
      await t.service.services.mail.deliverDue(100);
      return smtp.received.slice(from).filter((m) => toOf(m) === email);
    };
    /** delivers everything queued so far; how many messages arrived until now (what comes after is new) */
    const mark = async (): Promise<number> => {
      await t.service.services.mail.deliverDue(100);
      return smtp.received.length;
    };
    const resetLinkIn = (m: ReceivedMail): string => {
      const found = /https?:\/\/\S+\/login\/reset\?token=[A-Za-z0-9_-]+/.exec(m.parsed.text ?? '');
      assert.ok(found, `a reset link in: ${m.parsed.text}`);
      links.push(found[0]);
      const u = new URL(found[0]);
      return u.pathname + u.search;
    };
    /** asks for a reset of `email` from a fresh browser at `address`; the answer */
    const requestReset = async (email: string, address = '198.51.100.20') => {
      const b = new PageClient(t, 'gatehouse_session', address);
      const form = await b.get('/login/forgot');
      assert.equal(form.status, 200);
      return b.post('/login/forgot', { _csrf: b.csrf(form), email });
    };
    /** the reset link mailed to `email` for a request made now */
    const mailedResetLink = async (email: string) => {
      const from = await mark();
      assert.equal((await requestReset(email)).status, 200);
      const mails = await deliver(email, from);
      assert.equal(mails.length, 1, 'one mail');
      return resetLinkIn(mails[0]!);
    };
    /** follows a reset link and sets `password`: the answer to the form */
    const followReset = async (link: string, password = NEW_PASSWORD) => {
      const b = new PageClient(t, 'gatehouse_session', '198.51.100.21');
      const opened = await b.get(link);
      if (opened.status !== 303) return { b, res: opened };
      const page = await b.get('/login');
      assert.match(page.text, /Choose a new password/);
      assert.match(page.text, /Your authenticator app stays as it is/);
      return { b, res: await b.post('/login', { _csrf: b.csrf(page), password, confirmation: password }) };
    };
    /** a full sign-in; the last answer */
    const signIn = async (email: string, password: string, code: string, address = '203.0.113.60') => {
      const b = new PageClient(t, 'gatehouse_session', address);
      let res = await b.get('/login');
      res = await b.post('/login', { _csrf: b.csrf(res), email });
      res = await b.get('/login');
      res = await b.post('/login', { _csrf: b.csrf(res), password });
      if (res.status !== 303) return { b, res };
      res = await b.get('/login');
      if (!/Enter your code/.test(res.text)) return { b, res };
      return { b, res: await b.post('/login', { _csrf: b.csrf(res), code }) };
    };
    const nextCode = (key: string) => {
      t.clock.advance(31_000);
      return totpCodeAt(key, t.clock.now());
    };

    it('the reset link arrives by mail and works once; the other sessions end, the authenticator stays; a notice follows', async () => {
      const email = 'reset@example.com';
      const { client, key } = await signedInUser(t, email);
      assert.equal((await client.get('/console')).status, 200, 'signed in before');
      // a token the person got before (a CLI's device login): whoever reset may not be the owner
      const row = await t.db.kysely.selectFrom('users').select(['id', 'tenant_id']).where('email_normalized', '=', email).executeTakeFirstOrThrow();
      const cliToken = (await t.service.services.tokens.issue({ kind: 'user', id: row.id, tenantId: String(row.tenant_id) })).token;
      const me = async () => (await t.gql(cliToken, '{ me { id } }', {})).body;
      assert.equal((await me()).data?.me?.id, row.id);
      t.clock.advance(1000);
      const link = await mailedResetLink(email);
      const from = await mark();
      const { res } = await followReset(link);
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, '/login?password_reset=1');
      assert.notEqual((await client.get('/console')).status, 200, 'the session from before the reset ended');
      assert.equal((await me()).errors?.[0]?.extensions?.code, 'UNAUTHENTICATED', 'and the tokens from before it');

      // the old password no longer works; the new one does, and the code is still asked
      assert.equal((await signIn(email, PASSWORD, nextCode(key))).res.status, 400);
      const { res: done, b } = await signIn(email, NEW_PASSWORD, nextCode(key));
      assert.equal(done.status, 303, done.text);
      assert.equal((await b.get('/console')).status, 200);

      const [notice, ...more] = await deliver(email, from);
      assert.equal(more.length, 0);
      assert.match(notice!.parsed.subject ?? '', /Your password was changed/);
      assert.match(notice!.parsed.text ?? '', /with a password reset link/);
      assert.match(notice!.parsed.text ?? '', /198\.51\.100\.21/, 'from where');
      assert.doesNotMatch(notice!.parsed.text ?? '', /token=/, 'no link that does anything');

      // second use
      const again = await followReset(link);
      assert.equal(again.res.status, 400);
      assert.match(again.res.text, /This password reset link is not valid/);
    });

    it('the link is refused after its 30 minutes, and after the password changed another way', async () => {
      const email = 'expiry@example.com';
      const { client } = await signedInUser(t, email);
      const changed = await mailedResetLink(email);
      const page = await client.get('/console/account');
      const res = await client.post('/console/account/password', {
        _csrf: client.csrf(page),
        current: PASSWORD,
        password: NEW_PASSWORD,
        confirmation: NEW_PASSWORD,
      });
      assert.equal(res.status, 303, res.text);
      const refused = await followReset(changed);
      assert.equal(refused.res.status, 400, 'the password changed since the link was mailed');
      assert.match(refused.res.text, /the password was changed since/);

      // a newer request replaces the link before it
      const older = await mailedResetLink(email);
      const newer = await mailedResetLink(email);
      assert.equal((await followReset(older)).res.status, 400, 'replaced');
      assert.equal((await followReset(newer, 'yet another unusual passphrase')).res.status, 303);

      // three requests an hour for one address go through at once (then waits grow: see below)
      t.clock.advance(61 * 60_000);
      // 30 minutes (GATEHOUSE_PASSWORD_RESET_TTL's default): a second before it works, after it not
      const late = await mailedResetLink(email);
      const second = await mailedResetLink(email);
      t.clock.advance(30 * 60_000 - 1000);
      assert.equal((await new PageClient(t).get(second)).status, 303, 'still valid');
      t.clock.advance(2000);
      assert.equal((await followReset(late)).res.status, 400, 'replaced');
      assert.equal((await followReset(second)).res.status, 400, 'expired');
    });

    it('the answer does not say whether the address has an account: same status, same page; a mail only for the known one', async () => {
      const known = 'known@example.com';
      await signedInUser(t, known);
      const from = await mark();
      const timed = async (email: string, address: string) => {
        const started = performance.now();
        const res = await requestReset(email, address);
        return { res, ms: performance.now() - started };
      };
      const { res: a, ms: knownMs } = await timed(known, '198.51.100.30');
      const { res: b, ms: unknownMs } = await timed('nobody-here@example.com', '198.51.100.31');
      assert.equal(a.status, 200);
      assert.equal(a.status, b.status);
      // both answered no sooner than RESET_ANSWER_MS: the work for a real account is hidden under it
      assert.ok(knownMs >= RESET_ANSWER_MS && unknownMs >= RESET_ANSWER_MS, `${knownMs} ms, ${unknownMs} ms`);
      const strip = (s: string) => s.replace(/value="[A-Za-z0-9_-]{43}"/g, '').replace(/nonce="[^"]*"/g, '');
      assert.equal(strip(a.text), strip(b.text), 'the same page');
      assert.match(a.text, /If an account signs in with a password at this address/);
      await t.service.services.mail.deliverDue(100);
      const arrived = smtp.received.slice(from).map(toOf);
      assert.deepEqual(arrived, [known]);
      resetLinkIn(smtp.received.at(-1)!);
    });

    it('an account without a password is told how it signs in; a disabled one gets nothing', async () => {
      const pending = 'pending@example.com';
      await setupLink(t, pending); // set-up not finished: no password
      const from = await mark();
      assert.equal((await requestReset(pending)).status, 200);
      const [mail] = await deliver(pending, from);
      assert.match(mail!.parsed.subject ?? '', /How you sign in/);
      assert.match(mail!.parsed.text ?? '', /set-up was not finished/);
      assert.doesNotMatch(mail!.parsed.text ?? '', /login\/reset/);

      const disabled = 'disabled@example.com';
      await signedInUser(t, disabled);
      const user = await t.db.kysely.selectFrom('users').select('id').where('email_normalized', '=', disabled).executeTakeFirstOrThrow();
      const res = await t.gql(await t.rootToken(), 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: user.id });
      assert.equal(res.body.errors, undefined, res.text);
      const before = await mark();
      assert.equal((await requestReset(disabled)).status, 200);
      assert.deepEqual(await deliver(disabled, before), [], 'no mail for a disabled account');
    });

    it('throttles requests made all at once: per address typed, and per client address', async () => {
      const email = 'flood@example.com';
      await signedInUser(t, email);
      const from = await mark();
      // 24 at once for one address, from 24 client addresses: 3 go through (resetAccount)
      const answers = await Promise.all(Array.from({ length: 24 }, (_, i) => requestReset(email, `192.0.2.${100 + i}`)));
      const ok = answers.filter((r) => r.status === 200).length;
      const waited = answers.filter((r) => r.status === 429);
      assert.equal(ok, 3);
      assert.equal(waited.length, 21);
      for (const r of waited) {
        assert.match(r.text, /Too many requests\. Try again in \d+ seconds?\./);
        assert.ok(Number(r.headers['retry-after']) > 0);
      }
      const mails = await deliver(email, from);
      assert.equal(mails.length, 3, 'a mailbox is not flooded');
      for (const m of mails) resetLinkIn(m);

      // 24 at once from one client address, each for another address: 10 go through (resetAddress)
      const one = await Promise.all(Array.from({ length: 24 }, (_, i) => requestReset(`someone${i}@example.net`, '192.0.2.250')));
      assert.equal(one.filter((r) => r.status === 200).length, 10);
      assert.equal(one.filter((r) => r.status === 429).length, 14);
    });

    it('a lost authenticator: a recovery code signs in, leads to the account page, and replaces the authenticator; notices follow', async () => {
      const email = 'lost@example.com';
      const client = new PageClient(t, 'gatehouse_session', '203.0.113.70');
      assert.equal((await client.get(await setupLink(t, email))).status, 303);
      let page = await client.get('/login');
      await client.post('/login', { _csrf: client.csrf(page), password: PASSWORD, confirmation: PASSWORD });
      page = await client.get('/login');
      const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(page.text)![1]!.replace(/ /g, '');
      const shown = await client.post('/login', { _csrf: client.csrf(page), code: totpCodeAt(key, t.clock.now()) });
      const codes = [...shown.text.matchAll(/<li>([0-9a-z]{5}-[0-9a-z]{5}-[0-9a-z]{4})<\/li>/g)].map((m) => m[1]!);
      assert.equal(codes.length, 10);

      const from = await mark();
      const { b, res } = await signIn(email, PASSWORD, codes[0]!);
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, '/console/account', 'led to the account page');
      const account = await b.get('/console/account');
      assert.match(account.text, /You used a recovery code: 9 are left/);
      assert.match(account.text, /Lost your authenticator app\? Replace it now/);
      // the authenticator replaced with a second recovery code in place of the app's code
      const begun = await b.post('/console/account/authenticator', { _csrf: b.csrf(account), code: codes[1]! });
      assert.equal(begun.status, 200, begun.text);
      const newKey = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(begun.text)![1]!.replace(/ /g, '');
      const confirmed = await b.post('/console/account/authenticator/confirm', { _csrf: b.csrf(begun), code: totpCodeAt(newKey, t.clock.now()) });
      assert.equal(confirmed.status, 303, confirmed.text);
      // new recovery codes, with the new authenticator
      const again = await b.get('/console/account');
      const renewed = await b.post('/console/account/recovery-codes', { _csrf: b.csrf(again), code: nextCode(newKey) });
      assert.equal(renewed.status, 200, renewed.text);

      const subjects = (await deliver(email, from)).map((m) => m.parsed.subject ?? '');
      assert.equal(subjects.length, 2, subjects.join(' | '));
      assert.match(subjects[0]!, /Your authenticator app was changed/);
      assert.match(subjects[1]!, /Your recovery codes were replaced/);
      assert.equal((await signIn(email, PASSWORD, totpCodeAt(key, t.clock.now()), '203.0.113.71')).res.status, 400, 'the old app no longer works');
    });

    it('notices: a password changed on the account page, an address changed (to the old one), a device approved', async () => {
      const email = 'noticed@example.com';
      const { client, key } = await signedInUser(t, email);
      const from = await mark();
      let page = await client.get('/console/account');
      const changed = await client.post('/console/account/password', {
        _csrf: client.csrf(page),
        current: PASSWORD,
        password: NEW_PASSWORD,
        confirmation: NEW_PASSWORD,
      });
      assert.equal(changed.status, 303);
      const [pw, ...none] = await deliver(email, from);
      assert.equal(none.length, 0);
      assert.match(pw!.parsed.subject ?? '', /Your password was changed/);
      assert.match(pw!.parsed.text ?? '', /It was done while signed in to your account/);
      assert.match(pw!.parsed.text ?? '', /203\.0\.113\.50/, 'the address of the change');
      assert.match(pw!.parsed.text ?? '', /If this was not you/);

      // the address: the confirmation link goes to the new address, the notice to the old one
      page = await client.get('/console/account');
      const asked = await client.post('/console/account/email', { _csrf: client.csrf(page), email: 'moved@example.com', code: nextCode(key) });
      assert.equal(asked.status, 303, asked.text);
      const [confirm] = await deliver('moved@example.com', from);
      const url = new URL(/https?:\/\/\S+\/console\/account\/email\/confirm\?token=[A-Za-z0-9_-]+/.exec(confirm!.parsed.text ?? '')![0]);
      const marked = await mark();
      const opened = await client.get(url.pathname + url.search);
      assert.ok([200, 303].includes(opened.status), opened.text);
      if (opened.status === 200 && /name="_csrf"/.test(opened.text))
        await client.post(url.pathname, { _csrf: client.csrf(opened), token: url.searchParams.get('token')! });
      const [moved] = await deliver(email, marked);
      assert.ok(moved, 'a notice to the old address');
      assert.match(moved.parsed.subject ?? '', /Your e-mail address was changed/);
      assert.match(moved.parsed.text ?? '', /to moved@example\.com/);

      // a device approval
      const user = await t.db.kysely
        .selectFrom('users')
        .select(['id', 'tenant_id'])
        .where('email_normalized', '=', 'moved@example.com')
        .executeTakeFirstOrThrow();
      const started = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/device/code',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: 'moved@example.com' }).toString(),
      });
      assert.equal(started.status, 200, started.text);
      const before = await mark();
      const decided = await t.service.services.device.decide(
        canonicalUserCode(started.body.user_code)!,
        { id: user.id, email: 'moved@example.com', tenantId: String(user.tenant_id) },
        true,
        undefined,
        { id: 'req-device', address: '192.0.2.88' },
        'TestBrowser/1.0',
      );
      assert.equal(decided.kind, 'done');
      const [device] = await deliver('moved@example.com', before);
      assert.match(device!.parsed.subject ?? '', /A device was signed in to your account/);
      assert.match(device!.parsed.text ?? '', /client gatehouse-cli/);
      assert.match(device!.parsed.text ?? '', /192\.0\.2\.88/);
      assert.match(device!.parsed.text ?? '', /TestBrowser\/1\.0/);
    });

    it('an administrator’s reset of the sign-in mails the person, and kills a pending reset link', async () => {
      const email = 'admin-reset@example.com';
      await signedInUser(t, email, { roles: [ROLE_IDS.Analyst] });
      const link = await mailedResetLink(email);
      const user = await t.db.kysely.selectFrom('users').select('id').where('email_normalized', '=', email).executeTakeFirstOrThrow();
      const from = await mark();
      const res = await t.gql(await t.rootToken(), 'mutation($id: ID!) { resetUserSignIn(id: $id) { user { id } } }', { id: user.id });
      assert.equal(res.body.errors, undefined, res.text);
      const [mail] = await deliver(email, from);
      assert.match(mail!.parsed.subject ?? '', /Set up your sign-in/);
      assert.match(mail!.parsed.text ?? '', /your password and authenticator were cleared/);
      assert.equal((await followReset(link)).res.status, 400, 'the reset link died with the password');
    });

    it('one link used from 10 browsers at once: one new password, one notice; 5 password changes at once: one, one notice', async () => {
      const email = 'race@example.com';
      const { key } = await signedInUser(t, email);
      const link = await mailedResetLink(email);
      // 10 browsers at the reset step with the same link, then all posting at once
      const opened = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const b = new PageClient(t, 'gatehouse_session', `198.51.100.${40 + i}`);
          assert.equal((await b.get(link)).status, 303);
          return { b, page: await b.get('/login') };
        }),
      );
      const from = await mark();
      const answers = await Promise.all(
        opened.map(({ b, page }, i) =>
          b.post('/login', { _csrf: b.csrf(page), password: `${NEW_PASSWORD} ${i}`, confirmation: `${NEW_PASSWORD} ${i}` }),
        ),
      );
      assert.equal(answers.filter((r) => r.status === 303).length, 1, 'one use');
      assert.equal(answers.filter((r) => r.status === 400 && /no longer works/.test(r.text)).length, 9);
      const notices = await deliver(email, from);
      assert.equal(notices.length, 1, 'one notice, for the one change');

      // the password changes at once from one current password: one wins, one notice
      const winner = answers.findIndex((r) => r.status === 303);
      const current = `${NEW_PASSWORD} ${winner}`;
      const { res: signedIn, b: other } = await signIn(email, current, nextCode(key), '203.0.113.90');
      assert.equal(signedIn.status, 303, signedIn.text);
      const page = await other.get('/console/account');
      const mark2 = await mark();
      const changes = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          other.post('/console/account/password', {
            _csrf: other.csrf(page),
            current,
            password: `changed at once ${i} xyz`,
            confirmation: `changed at once ${i} xyz`,
          }),
        ),
      );
      assert.equal(changes.filter((r) => r.status === 303).length, 1, changes.map((r) => r.status).join(','));
      assert.equal((await deliver(email, mark2)).length, 1, 'one notice');
    });

    it('no reset link in clear in the outbox table, the audit trail or the logs', async () => {
      assert.ok(links.length >= 5, `links seen: ${links.length}`);
      const outbox = JSON.stringify(await t.db.kysely.selectFrom('mail_outbox').selectAll().execute());
      const audit = JSON.stringify(await t.db.kysely.selectFrom('audit_events').selectAll().execute());
      const users = JSON.stringify(await t.db.kysely.selectFrom('users').selectAll().execute());
      const logs = t.logs.join('\n');
      for (const link of links) {
        const token = new URL(link).searchParams.get('token')!;
        for (const [where, text] of Object.entries({ outbox, audit, users, logs }))
          assert.ok(!text.includes(token), `a reset token in clear in ${where}`);
      }
    });
  });
}
