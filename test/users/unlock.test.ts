// An Administrator's unlock of a user's sign-in (docs/users.md, "Throttles"; docs/security.md
// item 58), on both engines: the failure counts that hold the person back, from every address and
// account-wide, are cleared, and nothing else: the same password and authenticator work at once.
// Who may (the authorization matrices have the rows; here what a refusal leaves), and the
// console's button.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { ATTEMPT_RULES, type AttemptKind, accountCounts, attemptKey } from '../../src/attempts/model.js';
import { emailKey } from '../../src/users/model.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { clientWithRoles } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const WRONG = 'not the right password';
const UNLOCK = 'mutation($id: ID!) { unlockUserSignIn(id: $id) { id email status mfa_enrolled } }';

for (const engine of engines()) {
  describe(`unlocking a user's sign-in (${engine})`, () => {
    let t: TestApp;
    let root: string;
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
    });
    after(() => t.close());

    /** A browser at `address` on the password step for `email`: its password form's token. */
    async function atPassword(email: string, client: PageClient) {
      const first = await client.get('/login');
      assert.equal((await client.post('/login', { _csrf: client.csrf(first), email })).status, 303);
      const page = await client.get('/login');
      assert.match(page.text, /Enter your password/);
      return client.csrf(page);
    }

    /** A full sign-in (address, password, code) by a new browser at `address`; the final response. */
    async function signIn(address: string, email: string, key: string): Promise<Response> {
      const client = new PageClient(t, undefined, address);
      const passed = await client.post('/login', { _csrf: await atPassword(email, client), password: PASSWORD });
      if (passed.status !== 303) return passed;
      const page = await client.get('/login');
      assert.match(page.text, /Enter your code/);
      t.clock.advance(30_000);
      return client.post('/login', { _csrf: client.csrf(page), code: totpCodeAt(key, t.clock.now()) });
    }

    /** `n` attempts counted under one of the account's counts, as failures would count them */
    async function counted(kind: AttemptKind, value: string, n: number): Promise<void> {
      const key = { key: attemptKey(kind, value), rule: ATTEMPT_RULES[kind] };
      for (let i = 0; i < n; i++) await t.service.store.attempts.reserveAttempts([key], t.clock.now());
    }

    /** The counts of the account in the table now, by key (clearAttemptsUnder's match). */
    async function accountRows(email: string): Promise<Map<string, number>> {
      const { keys, prefixes } = accountCounts(emailKey(email));
      const rows = await t.db.kysely.selectFrom('sign_in_failures').select(['key', 'failures']).execute();
      const mine = rows.filter((r) => keys.includes(r.key) || prefixes.some((p) => r.key.startsWith(p) && !r.key.slice(p.length).includes('|')));
      return new Map(mine.map((r) => [r.key, r.failures]));
    }

    const userId = async (email: string, tenant = '1') =>
      (await t.gql(root, 'query($e: String) { users(email: $e) { id } }', { e: email }, { tenant })).body.data.users[0].id as string;

    /** Everything of the account an unlock must leave as it was. */
    async function account(id: string) {
      const db = t.db.kysely;
      return {
        user: await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
        recoveryCodes: await db.selectFrom('user_recovery_codes').selectAll().where('user_id', '=', id).orderBy('code_hash').execute(),
        passkeys: await db.selectFrom('passkeys').selectAll().where('user_id', '=', id).execute(),
        browsers: await db.selectFrom('recognised_browsers').selectAll().where('user_id', '=', id).orderBy('browser_hash').execute(),
        roles: await db.selectFrom('role_assignments').selectAll().where('principal_id', '=', id).orderBy('id').execute(),
      };
    }

    const unlockEvents = (id: string) =>
      t.db.kysely
        .selectFrom('audit_events')
        .select(['actor_kind', 'actor_id', 'tenant_id', 'details', 'outcome'])
        .where('action', '=', 'user.sign_in_unlocked')
        .where('target_id', '=', id)
        .execute();

    it('a user held back by failures from many addresses, wrong codes included, signs in at once after an unlock with the same password and authenticator; nothing else of the account changed', async () => {
      const email = 'besieged@example.com';
      const owner = await signedInUser(t, email);
      const id = await userId(email);
      // someone with the password tried wrong codes from two addresses, on top of 90 over the last
      // weeks: the 30-day bound (100) holds every unrecognised browser's code for a month
      await counted('secondFactorMonth', emailKey(email), 90);
      const office = '10.80.0.1';
      for (const address of [office, '10.80.0.2']) {
        const thief = new PageClient(t, undefined, address);
        assert.equal((await thief.post('/login', { _csrf: await atPassword(email, thief), password: PASSWORD })).status, 303);
        const codePage = await thief.get('/login');
        for (let i = 0; i < 5; i++) assert.equal((await thief.post('/login', { _csrf: thief.csrf(codePage), code: `00000${i}` })).status, 400);
      }
      // then 100 wrong passwords from 20 addresses, the office's among them: the hour's allowance
      const attackers = [office, ...Array.from({ length: 19 }, (_, a) => `10.81.${a}.1`)];
      for (const address of attackers) {
        const attacker = new PageClient(t, undefined, address);
        const csrf = await atPassword(email, attacker);
        for (let i = 0; i < 5; i++) assert.equal((await attacker.post('/login', { _csrf: csrf, password: `${WRONG} ${i}` })).status, 400);
      }
      // the owner in a new browser at the office (one address for all, behind its NAT) is held
      const held = await signIn(office, email, owner.key);
      assert.equal(held.status, 429, 'held by the failures before the unlock');
      const before = await accountRows(email);
      const account_ = (kind: AttemptKind, value = emailKey(email)) => before.get(attemptKey(kind, value));
      assert.deepEqual([account_('accountAll'), account_('secondFactor'), account_('secondFactorMonth')], [100, 10, 100]);
      for (const address of attackers) assert.equal(account_('account', `${emailKey(email)}|${address}`), 5, address);
      for (const address of [office, '10.80.0.2']) assert.equal(account_('code', `${emailKey(email)}|${address}`), 5, address);
      const kept = await account(id);

      const res = await t.gql(root, UNLOCK, { id });
      assert.equal(res.body.errors, undefined, res.text);
      assert.deepEqual(res.body.data.unlockUserSignIn, { id, email, status: 'active', mfa_enrolled: true });
      assert.deepEqual(await accountRows(email), new Map(), 'every count of the account is gone, from every address and account-wide');
      assert.ok(
        (await t.service.store.attempts.findAttempts([attemptKey('address', office)])).has(attemptKey('address', office)),
        "the office address's own count (any account) is not the account's",
      );
      assert.deepEqual(await account(id), kept, 'password, authenticator, recovery codes, passkeys, browsers, roles: as they were');
      const [event, ...more] = await unlockEvents(id);
      assert.equal(more.length, 0);
      assert.deepEqual(event, {
        actor_kind: 'client',
        actor_id: event!.actor_id,
        tenant_id: '1',
        outcome: 'success',
        details: { counts_cleared: before.size, password_failures: 100, second_factor_failures: 100 },
      });

      const done = await signIn(office, email, owner.key);
      assert.equal(done.status, 303, `in at once, with the same password and code: ${done.text.slice(0, 300)}`);
    });

    it('an Analyst or an Auditor is FORBIDDEN, an Administrator of a tenant the user is not below is NOT_FOUND, and nobody unlocks themselves: each leaves the counts', async () => {
      const P1 = await createTenant(t, '1', { name: 'Unlock P1', isPartner: true });
      const C1 = await createTenant(t, P1, { name: 'Unlock C1' });
      const P2 = await createTenant(t, '1', { name: 'Unlock P2', isPartner: true });
      const email = 'held-admin@example.com';
      await signedInUser(t, email, { tenant: C1, roles: [ROLE_IDS.Administrator] });
      const id = await userId(email, C1);
      await counted('accountAll', emailKey(email), 100);
      await counted('code', `${emailKey(email)}|10.90.0.1`, 5);
      const before = await accountRows(email);
      assert.deepEqual(
        [before.get(attemptKey('accountAll', emailKey(email))), before.get(attemptKey('code', `${emailKey(email)}|10.90.0.1`))],
        [100, 5],
      );
      const self = (await t.service.services.tokens.issue({ kind: 'user', id, tenantId: C1 })).token;
      const callers: [string, string, string][] = [
        ['Analyst of C1', (await clientWithRoles(t, C1, [ROLE_IDS.Analyst])).token, 'FORBIDDEN'],
        ['Auditor of C1', (await clientWithRoles(t, C1, [ROLE_IDS.Auditor])).token, 'FORBIDDEN'],
        ['Administrator of P2', (await clientWithRoles(t, P2, [ROLE_IDS.Administrator])).token, 'NOT_FOUND'],
        ['the user', self, 'BAD_USER_INPUT'],
      ];
      for (const [who, token, code] of callers) {
        const res = await t.gql(token, UNLOCK, { id });
        assert.equal(res.body.errors?.[0]?.extensions?.code, code, `${who}: ${res.text}`);
        assert.equal(res.body.data?.unlockUserSignIn ?? null, null, who);
        if (code === 'BAD_USER_INPUT') assert.match(res.body.errors[0].message, /You cannot unlock your own sign-in; ask another Administrator/);
        assert.deepEqual(await accountRows(email), before, `${who}: the counts are as they were`);
      }
      assert.deepEqual(await unlockEvents(id), [], 'no unlock was written');
      // an Administrator of P1, above the user's home, may
      const res = await t.gql((await clientWithRoles(t, P1, [ROLE_IDS.Administrator])).token, UNLOCK, { id });
      assert.equal(res.body.errors, undefined, res.text);
      assert.deepEqual(await accountRows(email), new Map());
    });

    it("the console's Unlock sign-in on the user's page lets the user in at once, with a notice", async () => {
      const admin = await signedInUser(t, 'unlocking-admin@example.com', { roles: [ROLE_IDS.Administrator] });
      const email = 'locked-out@example.com';
      const owner = await signedInUser(t, email);
      const id = await userId(email);
      await counted('accountAll', emailKey(email), 100);
      const phone = '10.95.0.1';
      assert.equal((await signIn(phone, email, owner.key)).status, 429, 'held before the unlock');
      const page = await admin.client.get(`/console/users/user?tenant=1&user=${id}`);
      assert.match(page.text, /<form method="post" action="\/console\/users\/unlock">.*<button type="submit">Unlock sign-in<\/button><\/form>/);
      const posted = await admin.client.post('/console/users/unlock', { _csrf: admin.client.csrf(page), tenant: '1', user: id });
      assert.equal(posted.status, 303, posted.text);
      assert.equal(posted.headers.location, `/console/users/user?tenant=1&user=${id}`);
      const back = await admin.client.get(String(posted.headers.location));
      assert.match(back.text, /locked-out@example\.com can sign in again at once with their password and authenticator/);
      assert.equal((await unlockEvents(id)).length, 1);
      assert.equal((await signIn(phone, email, owner.key)).status, 303, 'in at once');
    });
  });
}
