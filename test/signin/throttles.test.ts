// The throttles of sign-in and device login under attack (docs/users.md, "Throttles"), through
// HTTP, on both engines:
// - many guesses at once: every throttle checks at most its allowance, whatever number of
//   attempts are in flight together (each attempt is counted before its secret is checked);
// - guessing spread over many addresses cannot keep the owner out: a browser that signed in
//   before goes on at once, and a new browser waits at most one window (an hour);
// - the owner is told, and the tenant's audit log records it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ATTEMPT_RULES, attemptKey } from '../../src/attempts/model.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';

const AT_ONCE = 50;
const WRONG = 'not the right password';

for (const engine of engines()) {
  describe(`sign-in and device throttles under attack (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    const statuses = (responses: Response[]) => {
      const counts: Record<number, number> = {};
      for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
      return counts;
    };

    /** A browser at `address` on the password step for `email`: its password form's token. */
    async function atPassword(email: string, address: string, client = new PageClient(t, undefined, address)) {
      let first = await client.get('/login');
      // a browser left at a later step goes back to the address first
      if (!/E-mail address/.test(first.text)) {
        await client.post('/login/restart', { _csrf: client.csrf(first) });
        first = await client.get('/login');
      }
      assert.equal((await client.post('/login', { _csrf: client.csrf(first), email })).status, 303);
      const page = await client.get('/login');
      assert.match(page.text, /Enter your password/);
      return { client, csrf: client.csrf(page) };
    }

    /** A full sign-in (address, password, code) by `client`; the final response. */
    async function signIn(client: PageClient, email: string, key: string): Promise<Response> {
      const { csrf } = await atPassword(email, client.address, client);
      const passed = await client.post('/login', { _csrf: csrf, password: PASSWORD });
      if (passed.status !== 303) return passed;
      const page = await client.get('/login');
      assert.match(page.text, /Enter your code/);
      t.clock.advance(30_000);
      return client.post('/login', { _csrf: client.csrf(page), code: totpCodeAt(key, t.clock.now()) });
    }

    it(`${AT_ONCE} wrong passwords at once in one session from one address: 5 are checked, the rest wait`, async () => {
      await signedInUser(t, 'burst@example.com');
      const { client, csrf } = await atPassword('burst@example.com', '198.51.100.10');
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => client.post('/login', { _csrf: csrf, password: WRONG })));
      assert.deepEqual(statuses(answers), { 400: 5, 429: AT_ONCE - 5 }, 'five wrong-password answers, the others told to wait');
      // refused by the account's count: 30 s; an attempt refused while others were still in flight
      // may be told the sooner time their giving back made (at least a second)
      const waits = answers.filter((a) => a.status === 429).map((a) => Number(/Too many attempts\. Try again in (\d+) seconds?\./.exec(a.text)?.[1]));
      assert.ok(waits.includes(30) && waits.every((w) => w >= 1 && w <= 30), `waits ${waits}`);
    });

    it(`${AT_ONCE} wrong codes at once in one session from one address: 5 are checked, the rest wait`, async () => {
      await signedInUser(t, 'codes@example.com');
      const { client, csrf } = await atPassword('codes@example.com', '198.51.100.11');
      assert.equal((await client.post('/login', { _csrf: csrf, password: PASSWORD })).status, 303);
      const page = await client.get('/login');
      assert.match(page.text, /Enter your code/);
      const codes = Array.from({ length: AT_ONCE }, (_, i) => String(100000 + i * 17));
      const answers = await Promise.all(codes.map((code) => client.post('/login', { _csrf: client.csrf(page), code })));
      assert.deepEqual(statuses(answers), { 400: 5, 429: AT_ONCE - 5 });
    });

    it(`${AT_ONCE} recovery-code guesses at once: 5 are checked; a wrong recovery code is called one`, async () => {
      await signedInUser(t, 'recovery@example.com');
      const { client, csrf } = await atPassword('recovery@example.com', '198.51.100.12');
      await client.post('/login', { _csrf: csrf, password: PASSWORD });
      const page = await client.get('/login');
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, i) =>
          client.post('/login', { _csrf: client.csrf(page), code: `aaaaa-bbbbb-${String(i).padStart(4, '0')}` }),
        ),
      );
      assert.deepEqual(statuses(answers), { 400: 5, 429: AT_ONCE - 5 });
      assert.match(answers.find((a) => a.status === 400)!.text, /That recovery code is not right/);
    });

    it(`${AT_ONCE} accounts guessed at once from one address: 20 are checked, the rest wait`, async () => {
      const address = '198.51.100.13';
      const sessions = await Promise.all(Array.from({ length: AT_ONCE }, (_, i) => atPassword(`spray${i}@example.com`, address)));
      const answers = await Promise.all(sessions.map(({ client, csrf }) => client.post('/login', { _csrf: csrf, password: WRONG })));
      assert.deepEqual(statuses(answers), { 400: 20, 429: AT_ONCE - 20 });
    });

    it(`${AT_ONCE} device user codes at once from one address: 10 are looked up, the rest wait`, async () => {
      const client = new PageClient(t, undefined, '198.51.100.14');
      const page = await client.get('/device');
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, i) => client.post('/device', { _csrf: client.csrf(page), user_code: `BCDF-${String(1000 + i)}` })),
      );
      assert.deepEqual(statuses(answers), { 400: 10, 429: AT_ONCE - 10 });
      assert.match(answers.find((a) => a.status === 400)!.text, /value="BCDF-10\d\d"/, 'a wrong code stays in the field to correct');
    });

    it(`${AT_ONCE} device logins started at once from one address: 30 start, the rest are slowed down`, async () => {
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, (_, i) =>
          t.request({
            method: 'POST',
            url: '/auth/api/v2/auth/device/code',
            payload: { client_id: 'gatehouse-cli', login_hint: `starter${i}@example.com` },
            remoteAddress: '198.51.100.15',
          }),
        ),
      );
      assert.deepEqual(statuses(answers), { 200: 30, 429: AT_ONCE - 30 });
      const rows = await t.db.kysely.selectFrom('device_authorizations').select('user_code').where('requested_from', '=', '198.51.100.15').execute();
      assert.equal(rows.length, 30, 'no row written for a refused start');
    });

    it('200 failures from 40 addresses do not keep the owner out: a browser that signed in before goes on at once, a new one within the hour', async () => {
      const owner = await signedInUser(t, 'target@example.com');
      // the owner's laptop signed in before (signedInUser) and keeps its recognition cookie
      const laptop = owner.client;
      assert.ok([...laptop.jar.keys()].includes('gatehouse_browser'), 'a recognised-browser cookie after sign-in');
      await laptop.post('/logout', { _csrf: laptop.csrf(await laptop.get('/console')) });

      const answers: number[] = [];
      for (let a = 0; a < 40; a++) {
        const attacker = await atPassword('target@example.com', `10.20.${a}.1`);
        for (let i = 0; i < 5; i++)
          answers.push((await attacker.client.post('/login', { _csrf: attacker.csrf, password: `${WRONG} ${a}.${i}` })).status);
      }
      assert.equal(answers.length, 200);
      assert.deepEqual(
        statuses(answers.map((status) => ({ status }) as Response)),
        { 400: 100, 429: 100 },
        'the account-wide allowance for unrecognised browsers is 100 an hour; attempts past it are not checked',
      );

      // the owner's recognised browser, at an address the attacker never used, signs in at once
      const recognised = await signIn(laptop, 'target@example.com', owner.key);
      assert.equal(recognised.status, 303, recognised.text.slice(0, 300));
      const landing = await laptop.get('/console');
      assert.equal(landing.status, 200);
      assert.match(landing.text, /Recently 100 wrong passwords were tried for your account from other places/, 'the owner is told');

      // a new browser at a new address is still held (the owner's success gives the attacker no
      // fresh allowance); how long, and that it ends: the next case
      const phone = new PageClient(t, undefined, '192.0.2.200');
      const { csrf } = await atPassword('target@example.com', phone.address, phone);
      assert.equal((await phone.post('/login', { _csrf: csrf, password: PASSWORD })).status, 429);
    });

    it('a new browser is held at most one window after an attack stops; a trickle of 4 failures an hour does not hold it', async () => {
      const owner = await signedInUser(t, 'held@example.com');
      for (let a = 0; a < 40; a++) {
        const attacker = await atPassword('held@example.com', `10.30.${a}.1`);
        for (let i = 0; i < 5; i++) await attacker.client.post('/login', { _csrf: attacker.csrf, password: `${WRONG} ${a}.${i}` });
      }
      const phone = new PageClient(t, undefined, '192.0.2.201');
      const { csrf } = await atPassword('held@example.com', phone.address, phone);
      const held = await phone.post('/login', { _csrf: csrf, password: PASSWORD });
      assert.equal(held.status, 429);
      const wait = Number(held.headers['retry-after']);
      assert.ok(wait > 0 && wait <= 3600, `Retry-After ${wait} s: at most the hour's window`);
      assert.match(held.text, /too many failed sign-in attempts from other places\. Sign in from a browser you have signed in with before/);
      t.clock.advance(wait * 1000);
      assert.equal((await signIn(phone, 'held@example.com', owner.key)).status, 303, 'in once the window ended');

      // a slow attacker (4 failures an hour, from 4 addresses) never blocks a new browser again
      for (let hour = 0; hour < 3; hour++) {
        for (let a = 0; a < 4; a++) {
          const attacker = await atPassword('held@example.com', `10.31.${hour}.${a}`);
          assert.equal((await attacker.client.post('/login', { _csrf: attacker.csrf, password: WRONG })).status, 400);
        }
        const another = new PageClient(t, undefined, `192.0.2.${210 + hour}`);
        assert.equal((await signIn(another, 'held@example.com', owner.key)).status, 303, `hour ${hour}: a new browser signs in`);
        t.clock.advance(3600_000);
      }

      const events = await t.db.kysely
        .selectFrom('audit_events')
        .select(['action', 'details'])
        .where('action', '=', 'user.sign_in_throttled')
        .where(
          'target_id',
          '=',
          (await t.db.kysely.selectFrom('users').select('id').where('email', '=', 'held@example.com').executeTakeFirstOrThrow()).id,
        )
        .execute();
      assert.equal(events.length, 1, 'the tenant audit log records that the account was under attack, once per window');
    });

    it('each attempt let through is an audit event (the address, never the password tried); one held back (429) is none', async () => {
      const owner = await signedInUser(t, 'audited@example.com');
      const userId = await t.db.kysely
        .selectFrom('users')
        .select(['id', 'tenant_id'])
        .where('email', '=', 'audited@example.com')
        .executeTakeFirstOrThrow();
      const failures = () =>
        t.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', 'user.sign_in_failed').where('actor_id', '=', userId.id).execute();
      const before = (await failures()).length;
      const { client, csrf } = await atPassword('audited@example.com', '10.44.0.1');
      assert.equal((await client.post('/login', { _csrf: csrf, password: `${WRONG} audited` })).status, 400);
      const rows = (await failures()).slice(before);
      assert.equal(rows.length, 1);
      assert.deepEqual([String(rows[0]!.tenant_id), rows[0]!.outcome, rows[0]!.address], [String(userId.tenant_id), 'failure', '10.44.0.1']);
      assert.ok(rows[0]!.request_id, 'the request id');
      // an address with no account: in the vendor's trail, with the domain of the address typed
      // only (what is typed there may be a password in the wrong field)
      const unknown = await atPassword('nobody-here@example.com', '10.44.0.2');
      assert.equal((await unknown.client.post('/login', { _csrf: unknown.csrf, password: `${WRONG} nobody` })).status, 400);
      const vendor = await t.db.kysely
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'user.sign_in_failed')
        .where('actor_id', '=', 'unknown')
        .execute();
      assert.ok(vendor.some((e) => String(e.tenant_id) === '1' && (e.details as { emailDomain?: string }).emailDomain === 'example.com'));
      assert.ok(!JSON.stringify(vendor).includes('nobody-here'), 'nothing typed before the @ is kept');
      const all = JSON.stringify(await t.db.kysely.selectFrom('audit_events').selectAll().execute());
      assert.ok(!all.includes(WRONG) && !all.includes(owner.key ?? '\u0000'), 'a password tried is in audit_events');
    });

    it("a recognised browser's own failures count against it alone, and an attacker's against the attacker", async () => {
      const owner = await signedInUser(t, 'own@example.com');
      const laptop = owner.client;
      await laptop.post('/logout', { _csrf: laptop.csrf(await laptop.get('/console')) });
      // the owner mistypes five times: the recognised browser waits
      const { csrf } = await atPassword('own@example.com', laptop.address, laptop);
      for (let i = 0; i < 5; i++) assert.equal((await laptop.post('/login', { _csrf: csrf, password: WRONG })).status, 400);
      assert.equal((await laptop.post('/login', { _csrf: csrf, password: PASSWORD })).status, 429);
      // an unrecognised browser at the same address is not held up by the owner's mistakes
      const other = new PageClient(t, undefined, laptop.address);
      assert.equal((await signIn(other, 'own@example.com', owner.key)).status, 303);
    });

    it('a recognised browser that reaches its ceiling (10 failures) is counted as any other browser until it signs in', async () => {
      const owner = await signedInUser(t, 'ceiling@example.com');
      const laptop = owner.client;
      await laptop.post('/logout', { _csrf: laptop.csrf(await laptop.get('/console')) });
      const accountWide = async () =>
        (await t.db.kysely.selectFrom('sign_in_failures').select('failures').where('key', '=', 'accountAll:ceiling@example.com').executeTakeFirst())
          ?.failures ?? 0;
      // one wrong password, waiting out the browser's own delays (a sign-in session lasts 15
      // minutes at most, so each attempt starts one)
      const wrongOnce = async (i: number) => {
        const { csrf } = await atPassword('ceiling@example.com', laptop.address, laptop);
        const wrong = await laptop.post('/login', { _csrf: csrf, password: `${WRONG} ${i}` });
        if (wrong.status !== 429) return wrong.status;
        t.clock.advance(Number(wrong.headers['retry-after']) * 1000);
        const fresh = await atPassword('ceiling@example.com', laptop.address, laptop);
        return (await laptop.post('/login', { _csrf: fresh.csrf, password: `${WRONG} ${i}` })).status;
      };
      for (let i = 0; i < 10; i++) assert.equal(await wrongOnce(i), 400);
      assert.equal(await accountWide(), 0, 'a recognised browser does not count against the account');
      t.clock.advance(15 * 60_000);
      assert.equal(await wrongOnce(10), 400);
      assert.equal(await accountWide(), 1, 'past its ceiling the browser counts like any other');
      // a sign-in in it makes it recognised afresh
      assert.equal((await signIn(laptop, 'ceiling@example.com', owner.key)).status, 303);
      await laptop.post('/logout', { _csrf: laptop.csrf(await laptop.get('/console')) });
      const again = await atPassword('ceiling@example.com', laptop.address, laptop);
      assert.equal((await laptop.post('/login', { _csrf: again.csrf, password: WRONG })).status, 400);
      assert.equal(await accountWide(), 1, 'recognised again: its own count only');
    });

    it('a right answer gives its attempt back without moving the wait on: after five typos and the wait, the password and the code go through', async () => {
      const owner = await signedInUser(t, 'typos@example.com');
      const laptop = owner.client;
      await laptop.post('/logout', { _csrf: laptop.csrf(await laptop.get('/console')) });
      const { csrf } = await atPassword('typos@example.com', laptop.address, laptop);
      for (let i = 0; i < 5; i++) assert.equal((await laptop.post('/login', { _csrf: csrf, password: WRONG })).status, 400);
      t.clock.advance(31_000);
      assert.equal((await laptop.post('/login', { _csrf: csrf, password: PASSWORD })).status, 303);
      const page = await laptop.get('/login');
      assert.match(page.text, /Enter your code/);
      t.clock.advance(30_000);
      const done = await laptop.post('/login', { _csrf: laptop.csrf(page), code: totpCodeAt(owner.key, t.clock.now()) });
      assert.equal(done.status, 303, 'the code is checked, not held up by the password attempt given back');
    });

    it("at most 100 wrong codes in 30 days reach the check, however patiently the shorter waits are sat out; an Administrator's reset starts the count again", async () => {
      const email = 'patient-thief@example.com';
      const owner = await signedInUser(t, email);
      // 99 wrong codes counted over the last weeks (the per-address and hourly counts long forgotten)
      const month = { key: attemptKey('secondFactorMonth', email), rule: ATTEMPT_RULES.secondFactorMonth };
      for (let i = 0; i < 99; i++) await t.service.store.attempts.reserveAttempts([month], t.clock.now());
      const thief = await atPassword(email, '10.60.0.1');
      assert.equal((await thief.client.post('/login', { _csrf: thief.csrf, password: PASSWORD })).status, 303);
      const codePage = await thief.client.get('/login');
      const csrf = thief.client.csrf(codePage);
      assert.equal((await thief.client.post('/login', { _csrf: csrf, code: '000000' })).status, 400, 'the 100th is checked');
      const held = await thief.client.post('/login', { _csrf: csrf, code: '111111' });
      assert.equal(held.status, 429, 'the 101st waits (the per-address and hourly counts would let it through)');
      assert.ok(Number(held.headers['retry-after']) > 29 * 86_400, `Retry-After ${held.headers['retry-after']}`);
      assert.equal(
        (await thief.client.post('/login', { _csrf: csrf, code: totpCodeAt(owner.key, t.clock.now()) })).status,
        429,
        'not even the right code is checked from an unrecognised browser',
      );
      // the account is known to be compromised: an Administrator resets its sign-in
      const users = await t.gql(await t.rootToken(), 'query($e: String) { users(email: $e) { id } }', { e: email }, { tenant: '1' });
      const reset = await t.gql(
        await t.rootToken(),
        'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }',
        { id: users.body.data.users[0].id },
        { tenant: '1' },
      );
      assert.equal(reset.body.errors, undefined, reset.text);
      assert.equal((await t.service.store.attempts.findAttempts([month.key])).size, 0, 'the 30-day count starts again');
    });

    it("the owner's own typing does not hide wrong codes tried by someone who has the password", async () => {
      const owner = await signedInUser(t, 'known-password@example.com');
      // someone with the password tries two wrong codes from elsewhere
      const thief = await atPassword('known-password@example.com', '10.50.0.1');
      assert.equal((await thief.client.post('/login', { _csrf: thief.csrf, password: PASSWORD })).status, 303);
      const codePage = await thief.client.get('/login');
      for (const code of ['000000', '111111'])
        assert.equal((await thief.client.post('/login', { _csrf: thief.client.csrf(codePage), code })).status, 400);
      // the owner, in a new browser, mistypes the password twice, then signs in
      const phone = new PageClient(t, undefined, '192.0.2.77');
      const { csrf } = await atPassword('known-password@example.com', phone.address, phone);
      for (let i = 0; i < 2; i++) assert.equal((await phone.post('/login', { _csrf: csrf, password: WRONG })).status, 400);
      assert.equal((await phone.post('/login', { _csrf: csrf, password: PASSWORD })).status, 303);
      const code = await phone.get('/login');
      t.clock.advance(30_000);
      assert.equal((await phone.post('/login', { _csrf: phone.csrf(code), code: totpCodeAt(owner.key, t.clock.now()) })).status, 303);
      const landing = await phone.get('/console');
      assert.match(landing.text, /Recently 2 wrong codes were tried after a correct password: if that was not you, someone knows your password/);
      assert.doesNotMatch(landing.text, /wrong passwords? w/, "the owner's own two typos are not reported as someone else's");
    });
  });
}
