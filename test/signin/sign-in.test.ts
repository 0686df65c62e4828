// The sign-in flow (docs/users.md, "Sign-in") through its service, on both engines: the set-up
// link, enrolment with recovery codes, later sign-ins with TOTP or a recovery code, steps that
// cannot be skipped, replayed codes, growing delays after failures, and an unknown address that
// fails exactly like a wrong password. Guessing at once, guessing spread over many addresses and
// recognised browsers: test/signin/throttles.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Session } from '../../src/sessions/model.js';
import type { Refusal } from '../../src/errors.js';
import type { Outcome } from '../../src/signin/service.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';

const ADDRESS = '203.0.113.7';
/** an attempt from `address` by a browser without a recognition cookie */
const from = (address: string) => ({ address });
const HERE = from(ADDRESS);
const GOOD_PASSWORD = 'a long and unusual passphrase';

for (const engine of engines()) {
  describe(`sign-in (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    const signIn = () => t.service.services.signIn;
    const sessions = () => t.service.services.sessions;
    /** the session as the next request would load it */
    const reload = async (secret: string): Promise<Session> => {
      const s = await sessions().find(secret);
      assert.ok(s, 'the session holds');
      return s;
    };
    const expectKind = <K extends Outcome['kind']>(o: Outcome, kind: K): Extract<Outcome, { kind: K }> => {
      assert.equal(o.kind, kind, JSON.stringify(o));
      return o as Extract<Outcome, { kind: K }>;
    };
    /** A refusal with this status: 400 a wrong answer, 429 too many attempts (then retryAfter is set). */
    const expectRefused = (o: Outcome, status: Refusal['status']): Refusal => {
      const refused = expectKind(o, 'refused');
      assert.equal(refused.status, status, JSON.stringify(o));
      assert.equal(refused.retryAfter !== undefined, status === 429, 'a wait, and only a wait, says when to retry');
      return refused;
    };
    /** The session secret after an outcome: a step that raised trust goes on under a new one. */
    const followed = (o: Outcome, secret: string): string => (o.kind === 'next' && o.issued ? o.issued.secret : secret);
    /** Opens a set-up link in a browser without a session: the new session's secret. */
    const open = async (token: string): Promise<string> => {
      const opened = await signIn().openSetup(undefined, token);
      assert.equal(opened.kind, 'next', JSON.stringify(opened));
      return (opened as { issued: { secret: string } }).issued.secret;
    };

    async function createUser(email: string): Promise<{ id: string; token: string }> {
      const res = await t.gql(await t.rootToken(), 'mutation($e: String!) { createUser(email: $e) { user { id } setup_url } }', { e: email });
      const { user, setup_url } = res.body.data.createUser;
      return { id: user.id, token: new URL(setup_url).searchParams.get('token')! };
    }

    /** Through the set-up link to a signed-in session; returns the TOTP secret and recovery codes. */
    async function setUp(email: string): Promise<{ base32: string; codes: string[]; userId: string }> {
      const { id, token } = await createUser(email);
      let secret = await open(token);
      assert.equal(await signIn().setupEmail(await reload(secret)), email);
      secret = followed(expectKind(await signIn().setPassword(await reload(secret), GOOD_PASSWORD, GOOD_PASSWORD), 'next'), secret);
      const enrol = await signIn().enrolment(await reload(secret));
      assert.ok(enrol);
      const done = expectKind(await signIn().confirmEnrolment(await reload(secret), totpCodeAt(enrol.base32, t.clock.now()), HERE), 'signedIn');
      return { base32: enrol.base32, codes: done.recoveryCodes!, userId: id };
    }

    /** e-mail and password, ending at the second-factor step (or the outcome that stopped it). */
    async function toSecondFactor(email: string, password: string, address = ADDRESS): Promise<{ secret: string; outcome: Outcome }> {
      const { secret } = await sessions().start();
      expectKind(await signIn().email(await reload(secret), email), 'next');
      const outcome = await signIn().password(await reload(secret), password, from(address));
      return { secret: followed(outcome, secret), outcome };
    }

    it('a set-up link leads to a password (policy enforced), an authenticator, ten recovery codes and a session; it works once', async () => {
      const { id, token } = await createUser('setup@example.com');
      assert.deepEqual(await signIn().openSetup(undefined, 'x'.repeat(43)), { kind: 'invalid' }, 'a wrong token opens nothing');
      const opened = await open(token);
      let secret = opened;
      assert.equal(await signIn().setupEmail(await reload(secret)), 'setup@example.com', 'the page can name the account');
      for (const [pw, again, message] of [
        ['short', 'short', /at least 12/],
        ['password1234', 'password1234', /most common/],
        ['setup@example.com', 'setup@example.com', /e-mail address/],
        [GOOD_PASSWORD, `${GOOD_PASSWORD}!`, /differ/],
      ] as const) {
        assert.match(expectRefused(await signIn().setPassword(await reload(secret), pw, again), 400).message, message);
      }
      const set = expectKind(await signIn().setPassword(await reload(secret), GOOD_PASSWORD, GOOD_PASSWORD), 'next');
      assert.equal(set.step, 'enrol');
      secret = followed(set, secret);
      assert.notEqual(secret, opened, 'a new session id once the password is set');
      assert.equal(await sessions().find(opened), undefined, 'the set-up session id no longer works');
      const enrol = (await signIn().enrolment(await reload(secret)))!;
      assert.deepEqual(await signIn().enrolment(await reload(secret)), enrol, 'the same authenticator until it is confirmed');
      expectRefused(await signIn().confirmEnrolment(await reload(secret), '000000', HERE), 400);
      const done = expectKind(await signIn().confirmEnrolment(await reload(secret), totpCodeAt(enrol.base32, t.clock.now()), HERE), 'signedIn');
      assert.equal(done.recoveryCodes?.length, 10);
      assert.equal(done.returnTo, '/console');
      assert.equal((await sessions().find(done.issued.secret))?.userId, id);
      assert.equal(await sessions().find(secret), undefined, 'the anonymous session is gone');

      const row = await t.db.kysely
        .selectFrom('users')
        .select(['totp_secret_sealed', 'setup_token_hash', 'password_hash'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.ok(row.totp_secret_sealed && !row.totp_secret_sealed.includes(enrol.base32), 'the TOTP secret is sealed at rest');
      assert.equal(row.setup_token_hash, null);
      assert.match(row.password_hash!, /^\$argon2id\$/);
      assert.deepEqual(await signIn().openSetup(undefined, token), { kind: 'invalid' }, 'the link works once');
    });

    it('later: e-mail, password, TOTP; the same code does not work twice; a recovery code works once', async () => {
      const { base32, codes } = await setUp('later@example.com');
      t.clock.advance(30_000);
      const first = await toSecondFactor('LATER@example.com', GOOD_PASSWORD);
      assert.equal(expectKind(first.outcome, 'next').step, 'totp');
      const code = totpCodeAt(base32, t.clock.now());
      expectKind(await signIn().secondFactor(await reload(first.secret), code, HERE), 'signedIn');

      const second = await toSecondFactor('later@example.com', GOOD_PASSWORD);
      expectKind(second.outcome, 'next');
      assert.match(expectRefused(await signIn().secondFactor(await reload(second.secret), code, HERE), 400).message, /already used/);
      expectKind(await signIn().secondFactor(await reload(second.secret), codes[0]!.toUpperCase(), HERE), 'signedIn');

      const third = await toSecondFactor('later@example.com', GOOD_PASSWORD);
      expectKind(third.outcome, 'next');
      expectRefused(await signIn().secondFactor(await reload(third.secret), codes[0]!, HERE), 400);
      expectKind(await signIn().secondFactor(await reload(third.secret), codes[1]!, HERE), 'signedIn');
    });

    it('a step cannot be skipped: a code before the password, a password before the address, restart', async () => {
      const { secret } = await sessions().start();
      expectKind(await signIn().password(await reload(secret), GOOD_PASSWORD, HERE), 'restart');
      expectKind(await signIn().secondFactor(await reload(secret), '123456', HERE), 'restart');
      expectKind(await signIn().confirmEnrolment(await reload(secret), '123456', HERE), 'restart');
      expectKind(await signIn().setPassword(await reload(secret), GOOD_PASSWORD, GOOD_PASSWORD), 'restart');
      expectKind(await signIn().email(await reload(secret), 'later@example.com'), 'next');
      expectKind(await signIn().secondFactor(await reload(secret), '123456', HERE), 'restart');
    });

    it('an unknown address, a disabled account and one without a password fail exactly like a wrong password', async () => {
      const unknown = await toSecondFactor('nobody@example.com', GOOD_PASSWORD, '198.51.100.1');
      const wrong = await toSecondFactor('later@example.com', 'not the password at all', '198.51.100.2');
      assert.deepEqual(unknown.outcome, wrong.outcome);
      const { userId } = await setUp('disabled@example.com');
      await t.gql(await t.rootToken(), 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: userId });
      const disabled = await toSecondFactor('disabled@example.com', GOOD_PASSWORD, '198.51.100.3');
      assert.deepEqual(disabled.outcome, wrong.outcome);
      // an account with no password (one invited and never set up, as one made by SSO has none)
      await t.gql(await t.rootToken(), 'mutation($e: String!) { createUser(email: $e) { user { id } } }', { e: 'nopassword@example.com' });
      const passwordless = await toSecondFactor('nopassword@example.com', GOOD_PASSWORD, '198.51.100.4');
      assert.deepEqual(passwordless.outcome, wrong.outcome);
    });

    it('failures slow the account down at that address (30 s, then doubling, at most 15 minutes); the owner elsewhere goes on', async () => {
      await setUp('slow@example.com');
      const attacker = '192.0.2.1';
      for (let i = 0; i < 5; i++) expectRefused((await toSecondFactor('slow@example.com', 'wrong password!!', attacker)).outcome, 400);
      assert.equal(
        expectRefused((await toSecondFactor('slow@example.com', GOOD_PASSWORD, attacker)).outcome, 429).retryAfter,
        30,
        'even the right password waits',
      );
      // the owner, elsewhere, is not held up
      expectKind((await toSecondFactor('slow@example.com', GOOD_PASSWORD, '198.51.100.7')).outcome, 'next');
      t.clock.advance(30_000);
      expectRefused((await toSecondFactor('slow@example.com', 'wrong password!!', attacker)).outcome, 400);
      assert.equal(expectRefused((await toSecondFactor('slow@example.com', GOOD_PASSWORD, attacker)).outcome, 429).retryAfter, 60);
      for (let i = 0; i < 8; i++) {
        t.clock.advance(15 * 60_000);
        expectRefused((await toSecondFactor('slow@example.com', 'wrong password!!', attacker)).outcome, 400);
      }
      assert.equal(
        expectRefused((await toSecondFactor('slow@example.com', GOOD_PASSWORD, attacker)).outcome, 429).retryAfter,
        900,
        'never more than 15 minutes',
      );
      t.clock.advance(15 * 60_000);
      expectKind((await toSecondFactor('slow@example.com', GOOD_PASSWORD, attacker)).outcome, 'next');
    });

    it('an address without an account is slowed down exactly like one with an account (no enumeration)', async () => {
      await setUp('exists@example.com');
      const outcomes = async (email: string, address: string) => {
        const kinds: string[] = [];
        for (let i = 0; i < 7; i++) {
          const { outcome } = await toSecondFactor(email, 'wrong password!!', address);
          kinds.push(outcome.kind === 'refused' ? `refused ${outcome.status}` : outcome.kind);
        }
        return kinds;
      };
      const existing = await outcomes('exists@example.com', '192.0.2.50');
      assert.deepEqual(existing, ['refused 400', 'refused 400', 'refused 400', 'refused 400', 'refused 400', 'refused 429', 'refused 429']);
      assert.deepEqual(await outcomes('nobody-here@example.com', '192.0.2.51'), existing);
    });

    it('a count is forgotten after an hour without failures', async () => {
      const address = '192.0.2.60';
      for (let i = 0; i < 20; i++) expectRefused((await toSecondFactor(`quiet${i}@example.com`, 'wrong password!!', address)).outcome, 400);
      expectRefused((await toSecondFactor('quiet-next@example.com', 'wrong password!!', address)).outcome, 429);
      t.clock.advance(61 * 60_000);
      // after the quiet hour the address starts from zero: 20 free failures again
      for (let i = 0; i < 20; i++) expectRefused((await toSecondFactor(`quiet-again${i}@example.com`, 'wrong password!!', address)).outcome, 400);
    });

    it('guessing spread over many addresses: after 100 failures the account waits everywhere', async () => {
      await setUp('spread@example.com');
      for (let i = 0; i < 100; i++) {
        const address = `10.${Math.floor(i / 250)}.${i % 250}.1`;
        expectRefused((await toSecondFactor('spread@example.com', 'wrong password!!', address)).outcome, 400);
      }
      expectRefused((await toSecondFactor('spread@example.com', GOOD_PASSWORD, '198.51.100.99')).outcome, 429);
    });

    it('failures from one address slow that address down, whatever account it tries', async () => {
      for (let i = 0; i < 20; i++) expectRefused((await toSecondFactor(`spray${i}@example.com`, 'wrong password!!', '233.252.0.9')).outcome, 400);
      expectRefused((await toSecondFactor('later@example.com', GOOD_PASSWORD, '233.252.0.9')).outcome, 429);
      expectKind((await toSecondFactor('later@example.com', GOOD_PASSWORD, '233.252.0.10')).outcome, 'next');
    });

    /** Through the set-up link to the enrolment step, with the authenticator offered there. */
    async function parkedAtEnrolment(email: string): Promise<{ secret: string; base32: string; userId: string }> {
      const { id, token } = await createUser(email);
      let secret = await open(token);
      secret = followed(expectKind(await signIn().setPassword(await reload(secret), GOOD_PASSWORD, GOOD_PASSWORD), 'next'), secret);
      return { secret, base32: (await signIn().enrolment(await reload(secret)))!.base32, userId: id };
    }

    it('a session parked at enrolment cannot replace an authenticator enrolled since by another session', async () => {
      const parked = await parkedAtEnrolment('parked@example.com');
      // the owner signs in elsewhere with the password and enrols their own authenticator
      const { secret } = await toSecondFactor('parked@example.com', GOOD_PASSWORD);
      const owners = (await signIn().enrolment(await reload(secret)))!;
      expectKind(await signIn().confirmEnrolment(await reload(secret), totpCodeAt(owners.base32, t.clock.now()), HERE), 'signedIn');
      t.clock.advance(30_000);
      const late = await signIn().confirmEnrolment(await reload(parked.secret), totpCodeAt(parked.base32, t.clock.now()), HERE);
      expectKind(late, 'restart');
      // the owner's authenticator still signs in
      t.clock.advance(30_000);
      const again = await toSecondFactor('parked@example.com', GOOD_PASSWORD);
      expectKind(await signIn().secondFactor(await reload(again.secret), totpCodeAt(owners.base32, t.clock.now()), HERE), 'signedIn');
    });

    it("a session parked at enrolment is void once the account's sign-in is reset", async () => {
      const parked = await parkedAtEnrolment('reset-while-parked@example.com');
      t.clock.advance(1000);
      const reset = await t.gql(await t.rootToken(), 'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }', { id: parked.userId });
      const token = new URL(reset.body.data.resetUserSignIn.setup_url).searchParams.get('token')!;
      expectKind(await signIn().confirmEnrolment(await reload(parked.secret), totpCodeAt(parked.base32, t.clock.now()), HERE), 'restart');
      // and stays void after the rightful person has set a new password through the new link
      t.clock.advance(1000);
      let secret = await open(token);
      secret = followed(expectKind(await signIn().setPassword(await reload(secret), GOOD_PASSWORD, GOOD_PASSWORD), 'next'), secret);
      t.clock.advance(30_000);
      expectKind(await signIn().confirmEnrolment(await reload(parked.secret), totpCodeAt(parked.base32, t.clock.now()), HERE), 'restart');
      const rightful = (await signIn().enrolment(await reload(secret)))!;
      expectKind(await signIn().confirmEnrolment(await reload(secret), totpCodeAt(rightful.base32, t.clock.now()), HERE), 'signedIn');
    });

    it('the first-start administrator signs in with its password and enrols an authenticator', async () => {
      const { secret, outcome } = await toSecondFactor('admin@gatehouse.local', 'test-admin-password-1');
      assert.equal(expectKind(outcome, 'next').step, 'enrol');
      const enrol = (await signIn().enrolment(await reload(secret)))!;
      const done = expectKind(await signIn().confirmEnrolment(await reload(secret), totpCodeAt(enrol.base32, t.clock.now()), HERE), 'signedIn');
      assert.equal(done.recoveryCodes?.length, 10);
    });
  });
}
