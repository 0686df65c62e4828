// No user enumeration by timing (docs/security.md, item 61; CWE-204), shown as equal work rather
// than timed (a timed test flakes on 2 cores; the times are bench/signin-timing.ts's): every
// password attempt that is checked costs exactly one argon2 verification, with the same cost
// parameters, whether the address has no account, the account is disabled, has no password, or
// the password is wrong or right; an attempt the throttle refuses costs none, for an unknown
// address as for an existing account. The work is counted by a recording PasswordHasher handed
// to the service (users/password.ts), through the sign-in pages over HTTP and through the device
// login's way to the password step, on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { argon2Hasher, type PasswordHasher } from '../../src/users/password.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, setupLink, signedInUser } from '../helpers/pages.js';

const WRONG = 'not the right password at all';

/** What argon2 work a PHC string costs: algorithm, version, m/t/p, salt and output lengths. */
function costOf(encoded: string): string {
  const [, algorithm, version, params, salt, output] = encoded.split('$');
  assert.ok(algorithm && version && params && salt && output, `a PHC string: ${encoded.slice(0, 40)}`);
  return `${algorithm} ${version} ${params} salt ${Buffer.from(salt, 'base64').length} B output ${Buffer.from(output, 'base64').length} B`;
}

/** argon2id as production does it, each call recorded with the hash it made or checked. */
class RecordingHasher implements PasswordHasher {
  calls: { op: 'hash' | 'verify'; encoded: string }[] = [];
  async hash(password: string): Promise<string> {
    const encoded = await argon2Hasher.hash(password);
    this.calls.push({ op: 'hash', encoded });
    return encoded;
  }
  verify(encoded: string, password: string): Promise<boolean> {
    this.calls.push({ op: 'verify', encoded });
    return argon2Hasher.verify(encoded, password);
  }
  /** the calls made while `f` ran */
  async during<T>(f: () => Promise<T>): Promise<{ result: T; calls: RecordingHasher['calls'] }> {
    const from = this.calls.length;
    const result = await f();
    return { result, calls: this.calls.slice(from) };
  }
}

for (const engine of engines()) {
  describe(`password sign-in: the same argon2 work in every case (${engine})`, () => {
    const hasher = new RecordingHasher();
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine, passwordHasher: hasher });
    });
    after(() => t.close());

    /** A browser of its own (no throttle shared with another case) at the password step for
     *  `email`, reached from the sign-in page's e-mail form or, as a device login reaches it, with
     *  the account named beforehand (SignInService.beginFor, which /device calls). */
    async function atPassword(email: string, way: 'page' | 'device', client = PageClient.atOwnAddress(t)) {
      const first = await client.get('/login');
      if (way === 'page') {
        assert.equal((await client.post('/login', { _csrf: client.csrf(first), email })).status, 303);
      } else {
        const session = await t.service.services.sessions.find(client.cookie!);
        assert.ok(session);
        const begun = await t.service.services.signIn.beginFor(session, { email, deviceUserCode: 'BCDF-GHJK' }, '/device/approve');
        assert.equal(begun.kind, 'next', JSON.stringify(begun));
      }
      const page = await client.get('/login');
      assert.match(page.text, /Enter your password/);
      return { client, csrf: client.csrf(page) };
    }

    /** The password posted at the password step: the answer and the hashing it caused. */
    async function attempt(email: string, password: string, way: 'page' | 'device', client?: PageClient) {
      const at = await atPassword(email, way, client);
      const { result, calls } = await hasher.during(() => at.client.post('/login', { _csrf: at.csrf, password }));
      return { response: result, calls, client: at.client };
    }

    /** The answer's page without what differs by design: the address typed, and the CSRF token
     *  and passkey challenge of the session. */
    const shown = (r: Response, email: string) =>
      r.text
        .replaceAll(email, '<address>')
        .replace(/name="_csrf" value="[^"]+"/g, 'name="_csrf" value="…"')
        .replace(/&quot;challenge&quot;:&quot;[^&]+&quot;/g, '&quot;challenge&quot;:…');

    /** the stored hash of an account */
    const hashOf = async (email: string): Promise<string> => {
      const row = await t.db.kysely.selectFrom('users').select('password_hash').where('email', '=', email).executeTakeFirstOrThrow();
      assert.ok(row.password_hash, `${email} has a password`);
      return row.password_hash;
    };

    let stored: string;
    let disabledHash: string;
    before(async () => {
      // an account with a password, one disabled, and one invited and never set up (no password,
      // as an account made by SSO has none)
      await signedInUser(t, 'owner@example.com');
      await signedInUser(t, 'disabled@example.com');
      const disabled = await t.db.kysely.selectFrom('users').select('id').where('email', '=', 'disabled@example.com').executeTakeFirstOrThrow();
      const off = await t.gql(await t.rootToken(), 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: disabled.id });
      assert.equal(off.body.errors, undefined, JSON.stringify(off.body.errors));
      await setupLink(t, 'no-password@example.com');
      stored = await hashOf('owner@example.com');
      disabledHash = await hashOf('disabled@example.com');
    });

    it('one verification per attempt, of the same cost, whatever the account; the placeholder is made once, by whichever attempt comes first', async () => {
      // the first password attempt of the process, an existing account's: it makes the
      // placeholder an unknown address is checked against (the same hasher, so the same cost)
      const first = await attempt('owner@example.com', WRONG, 'page');
      assert.equal(first.response.status, 400);
      assert.deepEqual(
        first.calls.map((c) => c.op),
        ['hash', 'verify'],
        'the first attempt, whatever its account, makes the placeholder and checks one hash',
      );
      const placeholder = first.calls[0]!.encoded;
      assert.notEqual(placeholder, stored);
      assert.equal(costOf(placeholder), costOf(stored), "the placeholder costs what a stored hash costs to check (the hasher's own parameters)");
      assert.equal(costOf(disabledHash), costOf(stored));
      assert.match(costOf(stored), /^argon2id v=19 m=19456,t=2,p=1 salt 16 B output 32 B$/, '@node-rs/argon2 defaults (docs/users.md)');

      const cases = [
        { name: 'unknown address', email: 'nobody@example.com', password: WRONG, checks: placeholder },
        {
          name: "unknown address, typed the placeholder's own password",
          email: 'nobody@example.com',
          password: 'gatehouse-no-such-account-password',
          checks: placeholder,
        },
        { name: 'wrong password', email: 'owner@example.com', password: WRONG, checks: stored },
        { name: 'disabled account, right password', email: 'disabled@example.com', password: PASSWORD, checks: disabledHash },
        { name: 'account without a password', email: 'no-password@example.com', password: PASSWORD, checks: placeholder },
        { name: 'right password', email: 'owner@example.com', password: PASSWORD, checks: stored },
      ];
      for (const way of ['page', 'device'] as const) {
        // the page a wrong password gets this way (the device way names the account on it)
        const wrong = await attempt('owner@example.com', WRONG, way);
        assert.equal(wrong.response.status, 400);
        for (const c of cases) {
          const { response, calls } = await attempt(c.email, c.password, way);
          const what = `${c.name} (${way})`;
          assert.deepEqual(
            calls.map((x) => x.op),
            ['verify'],
            `${what}: exactly one argon2 verification, no hashing`,
          );
          assert.equal(calls[0]!.encoded, c.checks, `${what}: checked against the expected hash`);
          assert.equal(costOf(calls[0]!.encoded), costOf(stored), `${what}: at the cost of a stored hash`);
          if (c.name === 'right password') {
            assert.equal(response.status, 303, `${what}: on to the second factor`);
          } else {
            assert.equal(response.status, 400, what);
            assert.equal(shown(response, c.email), shown(wrong.response, 'owner@example.com'), `${what}: the same page as a wrong password`);
          }
        }
      }
    });

    it('an attempt the throttle refuses does no argon2 work, for an unknown address as for an existing account', async () => {
      const refusedAfterFive = async (email: string, address: string) => {
        // a new browser each time, from the same address (counted together)
        const client = () => new PageClient(t, undefined, address);
        for (let i = 0; i < 5; i++) {
          const failed = await attempt(email, WRONG, 'page', client());
          assert.equal(failed.response.status, 400);
          // (the first attempt of the process also makes the placeholder: counted by the test above)
          assert.equal(failed.calls.filter((c) => c.op === 'verify').length, 1, 'a failure that is let through is checked');
        }
        const held = await attempt(email, PASSWORD, 'page', client());
        return { status: held.response.status, page: shown(held.response, email), calls: held.calls };
      };
      const existing = await refusedAfterFive('owner@example.com', '192.0.2.80');
      assert.equal(existing.status, 429, 'the sixth attempt at that address waits, even with the right password');
      assert.deepEqual(existing.calls, [], 'refused before any hashing');
      assert.deepEqual(
        await refusedAfterFive('nobody-either@example.com', '192.0.2.81'),
        existing,
        'an unknown address: the same answer, the same (no) work',
      );
    });

    it("the account page's check of the current password costs one verification, of the stored hash", async () => {
      const { client } = await signedInUser(t, 'changer@example.com');
      const page = await client.get('/console/account');
      const { result, calls } = await hasher.during(() =>
        client.post('/console/account/password', {
          _csrf: client.csrf(page),
          current: WRONG,
          password: 'another long passphrase',
          confirmation: 'another long passphrase',
        }),
      );
      assert.equal(result.status, 400);
      assert.deepEqual(calls, [{ op: 'verify', encoded: await hashOf('changer@example.com') }]);
    });
  });
}
