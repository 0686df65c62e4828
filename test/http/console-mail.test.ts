// The console with mail (docs/users.md "Invitations and proven addresses"): with an SMTP server
// the invite says where the link went and shows none, the mailed link works and proves the
// address; without one the link is shown, with a word that it proves nothing. On the account
// page a new address takes effect only once the link mailed to it is followed, signed in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { PageClient, PASSWORD } from '../helpers/pages.js';
import { linkIn, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createTenant } from '../helpers/tenants.js';
import type { Envelope } from '../../src/mail/transports.js';

const OPERATOR = { kind: 'operator', id: 'root' } as const;

/** Sets up an account through a link: password, authenticator; the signed-in browser. */
async function enrol(t: TestApp, link: string): Promise<{ client: PageClient; key: string }> {
  const client = new PageClient(t);
  assert.equal((await client.get(link)).status, 303);
  let page = await client.get('/login');
  assert.equal((await client.post('/login', { _csrf: client.csrf(page), password: PASSWORD, confirmation: PASSWORD })).status, 303);
  page = await client.get('/login');
  const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(page.text)![1]!.replace(/ /g, '');
  assert.equal((await client.post('/login', { _csrf: client.csrf(page), code: totpCodeAt(key, t.clock.now()) })).status, 200);
  return { client, key };
}

const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

async function invite(admin: PageClient, tenant: string, email: string): Promise<Response> {
  const form = await admin.get(`/console/users/invite?tenant=${tenant}`);
  return admin.post('/console/users/invite', { _csrf: admin.csrf(form), tenant, email, display_name: '', role: ROLE_IDS.Analyst });
}

describe('console with an SMTP server', () => {
  let t: TestApp;
  let smtp: TestSmtp;
  let tenant: string;
  let admin: PageClient;
  let adminKey: string;
  before(async () => {
    smtp = await startSmtp();
    t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_SMTP_URL: smtp.url } });
    tenant = await createTenant(t, '1', { name: 'Acme' });
    const made = await t.service.services.users.createAsOperator(OPERATOR, tenant, { email: 'admin@acme.test', roles: [ROLE_IDS.Administrator] });
    ({ client: admin, key: adminKey } = await enrol(t, pathOf(made.setupUrl!)));
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  /** the newest message to `email`, delivered now */
  const mailTo = async (email: string) => {
    const n = smtp.received.length;
    await t.service.services.mail.deliverDue();
    await smtp.waitFor(n + 1);
    const m = smtp.received.at(-1)!;
    assert.deepEqual(
      m.rcptTo.map((a) => a.toLowerCase()),
      [email.toLowerCase()],
    );
    return m;
  };

  it('invite says "sent to" the address and shows no link; the mailed link sets the account up and proves the address', async () => {
    const res = await invite(admin, tenant, 'carla@acme.test');
    assert.equal(res.status, 200);
    assert.match(res.text, /Set-up link sent to carla@acme\.test/);
    assert.doesNotMatch(res.text, /id="setup_url"|token=/);
    const mail = await mailTo('carla@acme.test');
    assert.match(mail.parsed.subject ?? '', /You are invited to Acme/);
    await enrol(t, pathOf(linkIn(mail)));
    const list = await admin.get(`/console/users?tenant=${tenant}&email=carla%40acme.test`);
    const id = /\/console\/users\/user\?tenant=\d+&(?:amp;)?user=([0-9a-f-]{36})/.exec(list.text)?.[1];
    assert.ok(id, list.text.slice(0, 500));
    const page = await admin.get(`/console/users/user?tenant=${tenant}&user=${id}`);
    assert.match(
      page.text,
      /<dt>Address<\/dt><dd>Proven: the person followed a link mailed to it, or signed in through single sign-on in a domain this organisation proved<\/dd>/,
    );
  });

  /** a code from the admin's authenticator, for a step that asks for one (each code is used once) */
  const adminCode = () => {
    t.clock.advance(31_000);
    return totpCodeAt(adminKey, t.clock.now());
  };

  it('a new address of one’s own takes effect only after the link mailed to it is followed, signed in', async () => {
    let page = await admin.get('/console/account');
    // a current code is asked first: a session left open does not move the account elsewhere
    let res = await admin.post('/console/account/email', { _csrf: admin.csrf(page), email: 'Boss@Acme.test' });
    assert.equal(res.status, 400);
    assert.match(res.text, /That code is not right/);
    res = await admin.post('/console/account/email', { _csrf: admin.csrf(page), email: 'Boss@Acme.test', code: adminCode() });
    assert.equal(res.status, 303);
    page = await admin.get('/console/account');
    assert.match(page.text, /If Boss@Acme\.test can be yours, a confirmation link was mailed to it/);
    assert.match(page.text, /You asked to use <strong>Boss@Acme\.test<\/strong>/);
    assert.match(page.text, /Signed in as <strong>admin@acme\.test<\/strong>/, 'nothing changed yet');
    const mail = await mailTo('Boss@acme.test');
    const link = /https?:\/\/\S+\/console\/account\/email\/confirm\?token=[A-Za-z0-9_-]+/.exec(mail.parsed.text ?? '')![0];

    // opened without the account's session: nothing happens, and the token goes nowhere
    const stranger = await new PageClient(t).get(pathOf(link));
    assert.equal(stranger.status, 200);
    assert.match(stranger.text, /Sign in as that account/);
    assert.doesNotMatch(stranger.text, /token=/);

    // opened signed in: what it will do, and a button; nothing changed by the visit alone (a page
    // elsewhere that sends the browser to the link confirms nothing)
    const shown = await admin.get(pathOf(link));
    assert.equal(shown.status, 200);
    assert.match(shown.text, /From now on, sign in with <strong>Boss@Acme\.test<\/strong>/);
    assert.match((await admin.get('/console/account')).text, /Signed in as <strong>admin@acme\.test<\/strong>/, 'not yet');
    const token = new URL(link).searchParams.get('token')!;
    assert.equal((await admin.post('/console/account/email/confirm', { token })).status, 403, 'no CSRF token: refused');
    res = await admin.post('/console/account/email/confirm', { _csrf: admin.csrf(shown), token });
    assert.equal(res.status, 303);
    page = await admin.get('/console/account');
    assert.match(page.text, /Your e-mail address is now Boss@Acme\.test/);
    assert.equal((await admin.get(pathOf(link))).status, 400, 'the link works once');
    assert.equal((await admin.post('/console/account/email/confirm', { _csrf: admin.csrf(page), token })).status, 400);

    const events = await t.db.kysely.selectFrom('audit_events').select('action').where('action', 'like', 'user.email_change%').execute();
    assert.deepEqual(events.map((e) => e.action).sort(), ['user.email_change_requested', 'user.email_changed']);
    const row = await t.db.kysely.selectFrom('users').selectAll().where('email_normalized', '=', 'boss@acme.test').executeTakeFirstOrThrow();
    assert.ok(row.email_verified_at, 'the new address is proven');

    // the new address signs in; the old one no longer does
    t.clock.advance(31_000);
    const b = new PageClient(t, 'gatehouse_session', '203.0.113.9');
    let r = await b.get('/login');
    r = await b.post('/login', { _csrf: b.csrf(r), email: 'boss@acme.test' });
    r = await b.get('/login');
    r = await b.post('/login', { _csrf: b.csrf(r), password: PASSWORD });
    assert.equal(r.status, 303);
    r = await b.get('/login');
    assert.equal((await b.post('/login', { _csrf: b.csrf(r), code: totpCodeAt(adminKey, t.clock.now()) })).status, 303);
    const old = new PageClient(t, 'gatehouse_session', '203.0.113.10');
    r = await old.get('/login');
    r = await old.post('/login', { _csrf: old.csrf(r), email: 'admin@acme.test' });
    r = await old.get('/login');
    assert.equal((await old.post('/login', { _csrf: old.csrf(r), password: PASSWORD })).status, 400);
  });

  it('an address another account proved gets the same answer as any other, and no mail: the page tells no one which addresses have accounts', async () => {
    await t.service.services.mail.deliverDue();
    let page = await admin.get('/console/account');
    const res = await admin.post('/console/account/email', { _csrf: admin.csrf(page), email: 'carla@acme.test', code: adminCode() });
    assert.equal(res.status, 303);
    page = await admin.get('/console/account');
    assert.match(page.text, /If carla@acme\.test can be yours, a confirmation link was mailed to it/);
    const before = smtp.received.length;
    await t.service.services.mail.deliverDue();
    assert.equal(smtp.received.length, before, 'nothing mailed to the owner of the address');
    const queued = await t.db.kysely.selectFrom('mail_outbox').select('to_address').where('to_address', '=', 'carla@acme.test').execute();
    assert.equal(queued.length, 1, 'only carla’s invitation, from before');
  });

  it('a new address asked for before a reset of the sign-in cannot be confirmed after it', async () => {
    const made = await t.service.services.users.createAsOperator(OPERATOR, tenant, { email: 'victim@acme.test' });
    const victim = await enrol(t, pathOf(made.setupUrl!));
    // whoever held the session and a code asks for their own mailbox, and keeps the link
    t.clock.advance(31_000);
    let page = await victim.client.get('/console/account');
    const before = smtp.received.length;
    await victim.client.post('/console/account/email', {
      _csrf: victim.client.csrf(page),
      email: 'thief@elsewhere.test',
      code: totpCodeAt(victim.key, t.clock.now()),
    });
    await t.service.services.mail.deliverDue();
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    const token = /email\/confirm\?token=([A-Za-z0-9_-]+)/.exec(mail!.parsed.text ?? '')![1]!;
    // the owner's administrator resets the sign-in; the owner sets it up again
    const reset = await t.service.services.users.resetSignInAsOperator(OPERATOR, 'victim@acme.test');
    const again = await enrol(t, pathOf(reset.setupUrl!));
    page = await again.client.get(`/console/account/email/confirm?token=${token}`);
    assert.equal(page.status, 400);
    assert.match(page.text, /This confirmation link does not work/);
    const posted = await again.client.post('/console/account/email/confirm', { _csrf: again.client.csrf(page), token });
    assert.equal(posted.status, 400);
    const row = await t.db.kysely.selectFrom('users').select(['email', 'pending_email']).where('id', '=', made.user.id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { email: 'victim@acme.test', pending_email: null });
  });

  it('twelve accounts naming one address at once: all answered alike, ten mailed; asking again keeps a link mailed before', async () => {
    const people = [];
    for (let i = 0; i < 12; i++) {
      const made = await t.service.services.users.createAsOperator(OPERATOR, tenant, { email: `racer${i}@acme.test` });
      people.push({ id: made.user.id, ...(await enrol(t, pathOf(made.setupUrl!))) });
    }
    t.clock.advance(31_000);
    const pages = await Promise.all(people.map((p) => p.client.get('/console/account')));
    const target = 'contested@elsewhere.test';
    const answers = await Promise.all(
      people.map((p, i) =>
        p.client.post('/console/account/email', { _csrf: p.client.csrf(pages[i]!), email: target, code: totpCodeAt(p.key, t.clock.now()) }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      people.map(() => 303),
    );
    const queued = await t.db.kysely.selectFrom('mail_outbox').select('id').where('to_address', '=', target).execute();
    assert.equal(queued.length, 10, 'ten mails to the address in the hour, no more');

    // one whose link was mailed asks again within the hour: answered alike, and the link it has still works
    const waiting = await t.db.kysely
      .selectFrom('users')
      .select(['id', 'pending_email_token_hash'])
      .where(
        'id',
        'in',
        people.map((p) => p.id),
      )
      .where('pending_email_mailed', '=', true)
      .execute();
    assert.equal(waiting.length, 10);
    const again = people.find((p) => p.id === waiting[0]!.id)!;
    t.clock.advance(31_000);
    const page = await again.client.get('/console/account');
    const res = await again.client.post('/console/account/email', {
      _csrf: again.client.csrf(page),
      email: target,
      code: totpCodeAt(again.key, t.clock.now()),
    });
    assert.equal(res.status, 303);
    const [kept] = await t.db.kysely.selectFrom('users').select('pending_email_token_hash').where('id', '=', again.id).execute();
    assert.deepEqual(kept!.pending_email_token_hash, waiting[0]!.pending_email_token_hash, 'the mailed link was not replaced by an unmailed one');
  });

  it('address changes are counted: five an hour per account, then 429 until the hour ends', async () => {
    const other = await t.service.services.users.createAsOperator(OPERATOR, tenant, { email: 'eve@acme.test', roles: [ROLE_IDS.Analyst] });
    const { client: eve, key: eveKey } = await enrol(t, pathOf(other.setupUrl!));
    const ask = async (client: PageClient, key: string, email: string) => {
      t.clock.advance(31_000);
      const page = await client.get('/console/account');
      return client.post('/console/account/email', { _csrf: client.csrf(page), email, code: totpCodeAt(key, t.clock.now()) });
    };
    for (let i = 0; i < 3; i++) assert.equal((await ask(eve, eveKey, `wanted${i}@elsewhere.test`)).status, 303, `request ${i + 1}`);
    assert.equal((await ask(eve, eveKey, 'a@elsewhere.test')).status, 303);
    assert.equal((await ask(eve, eveKey, 'b@elsewhere.test')).status, 303);
    const refused = await ask(eve, eveKey, 'c@elsewhere.test');
    assert.equal(refused.status, 429, 'a sixth from one account within the hour');
    assert.match(refused.text, /You asked for too many address changes\. Try again in/);
    for (let i = 0; i < 4; i++) {
      t.clock.advance(15 * 60_000);
      await eve.get('/console/account'); // the session stays in use
    }
    assert.equal((await ask(eve, eveKey, 'c@elsewhere.test')).status, 303, 'the next hour');
  });
});

describe('console without an SMTP server', () => {
  let t: TestApp;
  /** what went to the outbox folder (this transport stands in for it: no SMTP server is configured) */
  const folder: Envelope[] = [];
  before(async () => {
    t = await startTestApp({
      engine: 'pglite',
      mailTransport: { describe: 'the test folder', deliver: async (e) => void folder.push(e), close: () => undefined },
    });
  });
  after(() => t.close());

  it('invite shows the link once, and says it was not mailed and proves nothing', async () => {
    const tenant = await createTenant(t, '1', { name: 'Solo' });
    const made = await t.service.services.users.createAsOperator(OPERATOR, tenant, { email: 'admin@solo.test', roles: [ROLE_IDS.Administrator] });
    const { client: admin } = await enrol(t, pathOf(made.setupUrl!));
    const res = await invite(admin, tenant, 'dora@solo.test');
    assert.equal(res.status, 200);
    assert.match(res.text, /id="setup_url"[^>]*value="http:\/\/gatehouse\.test\/login\/setup\?token=/);
    assert.match(res.text, /No mail server is configured, so it was not mailed/);
    assert.doesNotMatch(res.text, /Set-up link sent to/);
  });

  it('a new address confirmed through the outbox folder is the account’s, but not proven: an unproven account elsewhere keeps it', async () => {
    const tenant = await createTenant(t, '1', { name: 'Folder' });
    const other = await createTenant(t, '1', { name: 'Other' });
    const made = await t.service.services.users.createAsOperator(OPERATOR, tenant, { email: 'admin@folder.test', roles: [ROLE_IDS.Administrator] });
    const { client: admin, key } = await enrol(t, pathOf(made.setupUrl!));
    const squat = await t.service.services.users.createAsOperator(OPERATOR, other, { email: 'new@folder.test' });
    t.clock.advance(31_000);
    let page = await admin.get('/console/account');
    const res = await admin.post('/console/account/email', {
      _csrf: admin.csrf(page),
      email: 'new@folder.test',
      code: totpCodeAt(key, t.clock.now()),
    });
    assert.equal(res.status, 303, res.text);
    await t.service.services.mail.deliverDue();
    const mail = folder.find((e) => e.to === 'new@folder.test');
    assert.ok(mail, 'the link goes to the outbox folder');
    const token = /email\/confirm\?token=([A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    const shown = await admin.get(`/console/account/email/confirm?token=${token}`);
    assert.equal(shown.status, 200);
    assert.equal((await admin.post('/console/account/email/confirm', { _csrf: admin.csrf(shown), token })).status, 303);
    page = await admin.get('/console/account');
    assert.match(page.text, /Your e-mail address is now new@folder\.test/);
    const rows = await t.db.kysely
      .selectFrom('users')
      .select(['id', 'email_verified_at', 'email_superseded_at'])
      .where('email_normalized', '=', 'new@folder.test')
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.id, r.email_verified_at, r.email_superseded_at]),
      [
        [squat.user.id, null, null],
        [made.user.id, null, null],
      ],
      'neither proven; nobody gave way',
    );
  });
});
