// Passkeys (docs/users.md "Passkeys") through the pages, on both engines, with a software
// authenticator (test/helpers/soft-authenticator.ts) answering as a browser would: registration
// on the account page (a name, a current code, user verification), a passkey in place of the
// code after the password, a sign-in without a password, removal; and the attacks: an answer
// made for another origin or RP id, the same answer posted twice, a removed passkey, a counter
// going backwards (a cloned authenticator), no user verification, guessing past the throttle.
// The same in a real browser: test/browser/passkeys.browser.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { relyingParty } from '../../src/signin/webauthn.js';
import { totpCodeAt, TOTP_PERIOD_SECONDS } from '../../src/users/totp.js';
import { startTestApp, TEST_BASE_URL, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { passkeyOptionsIn, SoftAuthenticator } from '../helpers/soft-authenticator.js';

describe('passkeys: the relying party', () => {
  it('is the base URL: its host name as RP id and its origin; none for an IP address', () => {
    assert.deepEqual(relyingParty('https://auth.example.com', 'Gatehouse'), {
      id: 'auth.example.com',
      origin: 'https://auth.example.com',
      name: 'Gatehouse',
    });
    assert.deepEqual(relyingParty('http://localhost:8080', 'G'), { id: 'localhost', origin: 'http://localhost:8080', name: 'G' });
    assert.equal(relyingParty('http://127.0.0.1:8080', 'G'), undefined);
    assert.equal(relyingParty('http://[::1]:8080', 'G'), undefined);
  });
});

describe('passkeys with a base URL on an IP address', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_BASE_URL: 'http://127.0.0.1:8080' } });
  });
  after(() => t.close());

  it('are not offered (WebAuthn takes no IP address as RP id), and an answer posted anyway is refused', async () => {
    const { client } = await signedInUser(t, 'pk-ip@example.com');
    const account = await client.get('/console/account');
    assert.equal(passkeyOptionsIn(account.text, 'create'), undefined, 'no form to add one');
    assert.doesNotMatch(String(account.headers['content-security-policy']), /script-src/);
    const b = new PageClient(t);
    const page = await b.get('/login');
    assert.equal(passkeyOptionsIn(page.text, 'get'), undefined, 'no passkey button');
    assert.doesNotMatch(page.text, /<script/);
    const refused = await b.post('/login/passkey', { _csrf: b.csrf(page), response: '{"id":"abc"}' });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /Passkeys are not available on this service/);
  });
});

for (const engine of engines()) {
  describe(`passkeys (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    /** a fresh code: the clock moves on a time step first (a code is used once) */
    const code = (key: string) => {
      t.clock.advance(TOTP_PERIOD_SECONDS * 1000);
      return totpCodeAt(key, t.clock.now());
    };
    const events = (action: string) =>
      t.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', action).orderBy('occurred_at').execute();

    /** The account page's "Add a passkey" form, answered by `auth`. */
    async function addPasskey(client: PageClient, key: string, auth: SoftAuthenticator, name = 'Work laptop', opts: { code?: string } = {}) {
      const page = await client.get('/console/account');
      const options = passkeyOptionsIn(page.text, 'create');
      assert.ok(options, 'the account page offers to add a passkey');
      return client.post('/console/account/passkeys', {
        _csrf: client.csrf(page),
        name,
        code: opts.code ?? code(key),
        response: auth.register(options),
      });
    }

    /** A person with a registered passkey. */
    async function withPasskey(email: string) {
      const { client, key } = await signedInUser(t, email);
      const auth = new SoftAuthenticator({ origin: TEST_BASE_URL });
      const added = await addPasskey(client, key, auth);
      assert.equal(added.status, 303, added.text);
      return { client, key, auth };
    }

    /** A browser at the code step of `email` (password passed); the page. */
    async function atCodeStep(email: string, address?: string) {
      const b = new PageClient(t, undefined, address);
      let page = await b.get('/login');
      await b.post('/login', { _csrf: b.csrf(page), email });
      page = await b.get('/login');
      await b.post('/login', { _csrf: b.csrf(page), password: PASSWORD });
      page = await b.get('/login');
      assert.match(page.text, /Enter your code/);
      return { b, page };
    }

    it('registers a passkey on the account page: named, listed with its times, audited', async () => {
      const { client, auth } = await withPasskey('pk-register@example.com');
      const page = await client.get('/console/account');
      assert.match(page.text, /<th scope="row">Work laptop<\/th>/);
      assert.match(page.text, /Last used<\/td>|data-label="Last used">never/);
      assert.match(page.text, /The passkey Work laptop was added/);
      const [event] = await events('passkey.registered');
      assert.ok(event);
      // the same authenticator's options exclude it now, and registering it again is refused
      const again = passkeyOptionsIn(page.text, 'create')!;
      assert.deepEqual(
        again.excludeCredentials.map((c: { id: string }) => c.id),
        [auth.id],
      );
      const twice = await client.post('/console/account/passkeys', {
        _csrf: client.csrf(page),
        name: 'Again',
        code: '',
        response: auth.register(again),
      });
      assert.equal(twice.status, 400);
    });

    it('asks a current code, a name, and user verification to add one', async () => {
      const { client, key } = await signedInUser(t, 'pk-rules@example.com');
      const wrongCode = await addPasskey(client, key, new SoftAuthenticator({ origin: TEST_BASE_URL }), 'Phone', { code: '000000' });
      assert.equal(wrongCode.status, 400);
      assert.match(wrongCode.text, /code is not right/);
      const noName = await addPasskey(client, key, new SoftAuthenticator({ origin: TEST_BASE_URL }), '   ');
      assert.equal(noName.status, 400);
      assert.match(noName.text, /name must not be empty/);
      const unverified = await addPasskey(client, key, new SoftAuthenticator({ origin: TEST_BASE_URL }, false), 'Key');
      assert.equal(unverified.status, 400);
      assert.match(unverified.text, /did not verify you/);
      const elsewhere = new SoftAuthenticator({ origin: 'https://evil.example' });
      const other = await addPasskey(client, key, elsewhere, 'Evil');
      assert.equal(other.status, 400);
      assert.match(other.text, /not valid for this site/);
      assert.doesNotMatch((await client.get('/console/account')).text, /<th scope="row">(Phone|Key|Evil)</);
    });

    it('signs in with the password and the passkey in place of the code', async () => {
      const { auth } = await withPasskey('pk-second@example.com');
      const { b, page } = await atCodeStep('pk-second@example.com');
      const options = passkeyOptionsIn(page.text, 'get')!;
      assert.deepEqual(
        options.allowCredentials.map((c: { id: string }) => c.id),
        [auth.id],
        "the account's passkeys, after its password",
      );
      assert.equal(options.userVerification, 'required');
      const done = await b.post('/login/passkey', { _csrf: b.csrf(page), response: auth.assert(options) });
      assert.equal(done.status, 303, done.text);
      assert.equal(done.headers.location, '/console');
      assert.match((await b.get('/console/account')).text, /Signed in as <strong>pk-second@example.com/);
      const signedIn = (await events('user.signed_in')).at(-1)!;
      assert.equal((signedIn.details as Record<string, unknown>).factor, 'passkey');
      assert.equal((signedIn.details as Record<string, unknown>).passwordless, false);
    });

    it('signs in without a password: the passkey names the account', async () => {
      const { auth } = await withPasskey('pk-alone@example.com');
      const b = new PageClient(t);
      const page = await b.get('/login');
      const options = passkeyOptionsIn(page.text, 'get')!;
      assert.deepEqual(options.allowCredentials, [], 'no account is named before one is known');
      const done = await b.post('/login/passkey', { _csrf: b.csrf(page), response: auth.assert(options) });
      assert.equal(done.status, 303, done.text);
      assert.match((await b.get('/console/account')).text, /Signed in as <strong>pk-alone@example.com/);
      const signedIn = (await events('user.signed_in')).at(-1)!;
      assert.equal((signedIn.details as Record<string, unknown>).passwordless, true);
    });

    it('refuses the same answer posted twice: the challenge is used once', async () => {
      const { auth } = await withPasskey('pk-replay@example.com');
      const b = new PageClient(t);
      const page = await b.get('/login');
      const answer = auth.assert(passkeyOptionsIn(page.text, 'get')!);
      const csrf = b.csrf(page);
      assert.equal((await b.post('/login/passkey', { _csrf: csrf, response: answer })).status, 303);
      // another browser replays it with its own fresh challenge: the signed challenge is not that one
      const c = new PageClient(t, undefined, '203.0.113.60');
      const fresh = await c.get('/login');
      const replayed = await c.post('/login/passkey', { _csrf: c.csrf(fresh), response: answer });
      assert.equal(replayed.status, 400);
      assert.match(replayed.text, /not valid for this site/);
      // in one session, the same answer posted twice at once: one signs in, the other finds the
      // challenge gone (taken by the first)
      const signIn = t.service.services.signIn;
      const { session } = await signIn.anonymous(undefined);
      const options = await signIn.passkeySignInOptions(session);
      assert.ok(options);
      const twice = auth.assert(options);
      const fresh2 = { ...session, state: { ...session.state } };
      const outcomes = await Promise.all([
        signIn.passkey(session, twice, { address: '203.0.113.63' }),
        signIn.passkey(fresh2, twice, { address: '203.0.113.63' }),
      ]);
      assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['refused', 'signedIn']);
      const refusedTwice = outcomes.find((o) => o.kind === 'refused') as { message: string };
      assert.match(refusedTwice.message, /expired or was already answered/);
    });

    it('a challenge lives 10 minutes in its session: shown again while it leaves 5 for the prompt, refused after', async () => {
      const { auth } = await withPasskey('pk-ttl@example.com');
      const b = new PageClient(t);
      const first = passkeyOptionsIn((await b.get('/login')).text, 'get')!.challenge;
      t.clock.advance(4 * 60_000);
      assert.equal(passkeyOptionsIn((await b.get('/login')).text, 'get')!.challenge, first, 'the same page again: the same challenge');
      t.clock.advance(2 * 60_000);
      assert.notEqual(passkeyOptionsIn((await b.get('/login')).text, 'get')!.challenge, first, 'less than the prompt’s 5 minutes left: a new one');
      // answered after 10 minutes (within the anonymous session's 15): refused
      const c = new PageClient(t, undefined, '203.0.113.64');
      const page = await c.get('/login');
      const answer = auth.assert(passkeyOptionsIn(page.text, 'get')!);
      t.clock.advance(10 * 60_000 + 1000);
      const late = await c.post('/login/passkey', { _csrf: c.csrf(page), response: answer });
      assert.equal(late.status, 400);
      assert.match(late.text, /expired or was already answered/);
    });

    it('refuses an answer made for another origin or another RP id, or naming another user', async () => {
      const { auth } = await withPasskey('pk-origin@example.com');
      const b = new PageClient(t);
      let page = await b.get('/login');
      const otherOrigin = await b.post('/login/passkey', {
        _csrf: b.csrf(page),
        response: auth.assert(passkeyOptionsIn(page.text, 'get')!, { origin: 'https://evil.example' }),
      });
      assert.equal(otherOrigin.status, 400);
      assert.match(otherOrigin.text, /not valid for this site/);
      page = await b.get('/login');
      const otherRp = new SoftAuthenticator({ origin: TEST_BASE_URL, rpId: 'evil.example' });
      // the same key and credential id, signing for another RP id
      Object.assign(otherRp, { credentialId: auth.credentialId, keys: (auth as unknown as { keys: unknown }).keys });
      const wrongRp = await b.post('/login/passkey', { _csrf: b.csrf(page), response: otherRp.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(wrongRp.status, 400);
      assert.match(wrongRp.text, /not valid for this site/);
      // the user handle of another account (the credential's own id otherwise): refused
      page = await b.get('/login');
      const handled = JSON.parse(auth.assert(passkeyOptionsIn(page.text, 'get')!));
      handled.response.userHandle = Buffer.from('00000000-0000-0000-0000-000000000001').toString('base64url');
      const otherHandle = await b.post('/login/passkey', { _csrf: b.csrf(page), response: JSON.stringify(handled) });
      assert.equal(otherHandle.status, 400);
      assert.match(otherHandle.text, /not valid for this site/);
      const failures = (await events('user.sign_in_failed')).filter((e) => (e.details as Record<string, unknown>).factor === 'passkey');
      assert.ok(failures.length >= 2, 'each refused answer is in the trail');
    });

    it('refuses a passkey without user verification', async () => {
      const { auth } = await withPasskey('pk-uv@example.com');
      auth.userVerified = false;
      const b = new PageClient(t);
      const page = await b.get('/login');
      const refused = await b.post('/login/passkey', { _csrf: b.csrf(page), response: auth.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /did not verify you/);
    });

    it('refuses a counter that goes backwards (a cloned authenticator): audited, the person told', async () => {
      const { auth } = await withPasskey('pk-clone@example.com');
      const b = new PageClient(t);
      let page = await b.get('/login');
      auth.counter = 10;
      assert.equal((await b.post('/login/passkey', { _csrf: b.csrf(page), response: auth.assert(passkeyOptionsIn(page.text, 'get')!) })).status, 303);
      // the clone still counts from where it was copied
      const clone = new PageClient(t, undefined, '203.0.113.70');
      page = await clone.get('/login');
      auth.counter = 5;
      const refused = await clone.post('/login/passkey', { _csrf: clone.csrf(page), response: auth.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /signature counter went backwards/);
      const [event] = await events('passkey.clone_suspected');
      assert.ok(event, 'a passkey.clone_suspected event');
      assert.equal((event.details as Record<string, unknown>).stored_counter, 11);
      // an equal counter is refused too
      page = await clone.get('/login');
      auth.counter = 10;
      assert.equal(
        (await clone.post('/login/passkey', { _csrf: clone.csrf(page), response: auth.assert(passkeyOptionsIn(page.text, 'get')!) })).status,
        400,
      );
    });

    it('removes a passkey after a confirmation: it no longer signs in, with clear words', async () => {
      const { client, auth } = await withPasskey('pk-remove@example.com');
      const account = await client.get('/console/account');
      const href = /href="(\/console\/account\/passkeys\/remove\?passkey=[0-9a-f-]+)"/.exec(account.text)![1]!;
      const confirm = await client.get(href);
      assert.match(confirm.text, /Remove the passkey Work laptop\?/);
      const id = new URL(href, 'http://x').searchParams.get('passkey')!;
      const removed = await client.post('/console/account/passkeys/remove', { _csrf: client.csrf(confirm), passkey: id });
      assert.equal(removed.status, 303);
      assert.match((await client.get('/console/account')).text, /The passkey Work laptop was removed/);
      assert.ok((await events('passkey.removed')).length >= 1);
      // the person is told of both changes, in the changes' own transactions (docs/users.md "Notices")
      const notices = await t.db.kysely
        .selectFrom('mail_outbox')
        .select(['template', 'to_address'])
        .where('to_address', '=', 'pk-remove@example.com')
        .where('template', 'in', ['passkey_added', 'passkey_removed'])
        .orderBy('created_at')
        .execute();
      assert.deepEqual(
        notices.map((n) => n.template),
        ['passkey_added', 'passkey_removed'],
      );
      const again = await client.post('/console/account/passkeys/remove', { _csrf: client.csrf(confirm), passkey: id });
      assert.equal(again.status, 404);
      const b = new PageClient(t);
      const page = await b.get('/login');
      const refused = await b.post('/login/passkey', { _csrf: b.csrf(page), response: auth.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /not registered here: it was removed/);
    });

    it("at the code step, refuses another account's passkey", async () => {
      const { auth: mallory } = await withPasskey('pk-mallory@example.com');
      await withPasskey('pk-victim@example.com');
      const { b, page } = await atCodeStep('pk-victim@example.com');
      const refused = await b.post('/login/passkey', { _csrf: b.csrf(page), response: mallory.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /another account/);
    });

    it('counts passkey failures as codes are: past the allowance, a wait', async () => {
      const { auth } = await withPasskey('pk-throttle@example.com');
      const { b } = await atCodeStep('pk-throttle@example.com', '203.0.113.90');
      let status = 0;
      for (let i = 0; i < 6; i++) {
        const page = await b.get('/login');
        const res = await b.post('/login/passkey', {
          _csrf: b.csrf(page),
          response: auth.assert(passkeyOptionsIn(page.text, 'get')!, { origin: 'https://evil.example' }),
        });
        status = res.status;
        if (status === 429) break;
      }
      assert.equal(status, 429, 'the sixth wrong answer waits');
    });

    it('a device login signs in with the passkey of the account the CLI named, and no other', async () => {
      const { auth } = await withPasskey('pk-device@example.com');
      const { auth: stranger } = await withPasskey('pk-device-other@example.com');
      const started = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/device/code',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: 'pk-device@example.com' }).toString(),
        remoteAddress: '203.0.113.80',
      });
      const { user_code } = started.body as { user_code: string };
      const b = new PageClient(t, undefined, '198.51.100.80');
      let page = await b.get(`/device?user_code=${user_code}`);
      await b.post('/device', { _csrf: b.csrf(page), user_code });
      page = await b.get('/login');
      assert.match(page.text, /Enter your password/);
      assert.match(page.text, /Sign in with a passkey instead/);
      // another account's passkey at the named account's password step: refused
      const other = await b.post('/login/passkey', { _csrf: b.csrf(page), response: stranger.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(other.status, 400);
      assert.match(other.text, /another account/);
      // back at the e-mail step (the address fixed), another account's passkey is refused too
      await t.service.services.signIn.restart((await t.service.services.sessions.find(b.cookie))!);
      page = await b.get('/login');
      const fixed = await b.post('/login/passkey', { _csrf: b.csrf(page), response: stranger.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(fixed.status, 400);
      assert.match(fixed.text, /This sign-in is for pk-device@example\.com only/);
      // the named account's passkey signs in, and goes on to the approval
      page = await b.get('/login');
      const done = await b.post('/login/passkey', { _csrf: b.csrf(page), response: auth.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(done.status, 303, done.text);
      assert.match(String(done.headers.location), /^\/device\/approve\?user_code=/);
      assert.match((await b.get(String(done.headers.location))).text, /Yes, approve|Approve/);
    });

    it('an administrator reset, and deleting the user, remove the passkeys', async () => {
      const { auth } = await withPasskey('pk-reset@example.com');
      const user = await t.db.kysely.selectFrom('users').select('id').where('email', '=', 'pk-reset@example.com').executeTakeFirstOrThrow();
      const reset = await t.gql(await t.rootToken(), 'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }', { id: user.id });
      assert.equal(reset.body.errors, undefined, reset.text);
      const b = new PageClient(t);
      const page = await b.get('/login');
      const refused = await b.post('/login/passkey', { _csrf: b.csrf(page), response: auth.assert(passkeyOptionsIn(page.text, 'get')!) });
      assert.equal(refused.status, 400);
      assert.match(refused.text, /not registered here/);

      await withPasskey('pk-delete@example.com');
      const gone = await t.db.kysely.selectFrom('users').select('id').where('email', '=', 'pk-delete@example.com').executeTakeFirstOrThrow();
      const deleted = await t.gql(await t.rootToken(), 'mutation($id: ID!) { deleteUser(id: $id) { id } }', { id: gone.id });
      assert.equal(deleted.body.errors, undefined, deleted.text);
      const left = await t.db.kysely.selectFrom('passkeys').select('id').where('user_id', 'in', [user.id, gone.id]).execute();
      assert.deepEqual(left, []);
    });
  });
}
