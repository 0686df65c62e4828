// Users on /graphql (docs/users.md): what an administrator notices. The authorization matrix
// (test/authorization) covers who may call what; this covers what the calls do.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, TEST_BASE_URL, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { rowCounts } from '../helpers/seed.js';

const CREATE = `mutation($e: String!, $n: String, $r: [ID!]) {
  createUser(email: $e, display_name: $n, roles: $r) {
    user { id email display_name status tenant_id roles setup_pending mfa_enrolled role_assignments { id role_name tenant_id expires_at } }
    setup_url setup_expires_at
  }
}`;
const USER = `query($id: ID!) { user(id: $id) { id status roles role_assignments { id role_name expires_at } } }`;

for (const engine of engines()) {
  describe(`users (${engine})`, () => {
    let t: TestApp;
    let root: string;
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
    });
    after(() => t.close());

    const create = async (email: string, extra: Record<string, unknown> = {}) => t.gql(root, CREATE, { e: email, ...extra });

    /** A token for the user, as device login will issue it (same issuer, same checks). */
    const userToken = async (id: string) => (await t.service.services.tokens.issue({ kind: 'user', id, tenantId: '1' })).token;

    it('creates a user with a one-time set-up link kept only as a digest, valid for three days', async () => {
      const res = await create('Ada.Lovelace@Example.COM', { n: '  Ada   Lovelace ', r: [ROLE_IDS.Auditor] });
      assert.equal(res.status, 200, res.text);
      const { user, setup_url, setup_expires_at } = res.body.data.createUser;
      assert.equal(user.email, 'Ada.Lovelace@Example.COM');
      assert.equal(user.display_name, 'Ada Lovelace');
      assert.deepEqual([user.status, user.tenant_id, user.roles, user.setup_pending, user.mfa_enrolled], ['active', '1', ['Auditor'], true, false]);
      const token = new URL(setup_url).searchParams.get('token')!;
      assert.ok(setup_url.startsWith(`${TEST_BASE_URL}/login/setup?token=`));
      assert.equal(new Date(setup_expires_at).getTime() - t.clock.now().getTime(), 72 * 3600 * 1000);
      const row = await t.db.kysely.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.deepEqual(Buffer.from(row.setup_token_hash!), createHash('sha256').update(token).digest());
      assert.equal(row.email_normalized, 'ada.lovelace@example.com');
      assert.equal(row.password_hash, null);
      assert.ok(!t.logs.some((l) => l.includes(token)), 'the set-up token is never logged');
      const events = await t.db.kysely.selectFrom('audit_events').select(['action', 'details']).where('target_id', '=', user.id).execute();
      assert.deepEqual(
        events.map((e) => e.action),
        ['user.created'],
      );
      assert.ok(!JSON.stringify(events).includes(token));
    });

    it('refuses a second user with the same address in any spelling, and writes nothing', async () => {
      t.clock.advance(1000); // created after Ada: the list below is ordered by creation time
      assert.equal((await create('grace@example.com')).status, 200);
      const before = await rowCounts(t);
      for (const spelling of ['GRACE@example.com', 'ｇｒａｃｅ@example.com', ' grace@EXAMPLE.com ']) {
        const res = await create(spelling);
        assert.equal(res.body.errors?.[0]?.extensions?.code, 'CONFLICT', `${spelling}: ${res.text}`);
        assert.match(res.body.errors[0].message, /e-mail address exists/);
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('refuses what is not an e-mail address, saying what is expected', async () => {
      for (const bad of ['', 'no-at-sign', 'two@@example.com', 'a@b', 'sp ace@example.com', 'x@example.com\u200b', `${'a'.repeat(65)}@example.com`]) {
        const res = await create(bad);
        assert.equal(res.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', `${JSON.stringify(bad)}: ${res.text}`);
        assert.match(res.body.errors[0].message, /^email /);
      }
    });

    it('lists the tenant users by address or pattern, oldest first', async () => {
      const res = await t.gql(root, '{ users(email: "%@example.com") { email } }');
      const emails = res.body.data.users.map((u: { email: string }) => u.email);
      assert.deepEqual(emails, ['Ada.Lovelace@Example.COM', 'grace@example.com']);
      const exact = await t.gql(root, '{ users(email: "GRACE@EXAMPLE.COM") { email } }');
      assert.deepEqual(exact.body.data.users, [{ email: 'grace@example.com' }]);
    });

    it('ignores an expired role assignment, and replaces an expiry when the role is given again', async () => {
      const { user } = (await create('expiring@example.com')).body.data.createUser;
      const until = new Date(t.clock.now().getTime() + 3600_000).toISOString();
      const given = await t.gql(root, `mutation($u: ID!, $r: ID!, $x: Time) { assignUserRole(user_id: $u, role_id: $r, expires_at: $x) { roles } }`, {
        u: user.id,
        r: ROLE_IDS.Responder,
        x: until,
      });
      assert.deepEqual(given.body.data.assignUserRole.roles, ['Analyst', 'Responder']);
      t.clock.advance(2 * 3600_000);
      const later = (await t.gql(await t.rootToken(), USER, { id: user.id })).body.data.user;
      assert.deepEqual(later.roles, ['Analyst'], 'the expired Responder no longer counts');
      assert.equal(later.role_assignments.length, 2, 'it still shows until removed');
      const past = await t.gql(
        await t.rootToken(),
        `mutation($u: ID!, $r: ID!, $x: Time) { assignUserRole(user_id: $u, role_id: $r, expires_at: $x) { id } }`,
        {
          u: user.id,
          r: ROLE_IDS.Responder,
          x: until,
        },
      );
      assert.equal(past.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT');
      const again = await t.gql(
        await t.rootToken(),
        `mutation($u: ID!, $r: ID!) { assignUserRole(user_id: $u, role_id: $r) { roles role_assignments { role_name expires_at } } }`,
        {
          u: user.id,
          r: ROLE_IDS.Responder,
        },
      );
      assert.deepEqual(again.body.data.assignUserRole.role_assignments, [
        { role_name: 'Analyst', expires_at: null },
        { role_name: 'Responder', expires_at: null },
      ]);
    });

    it("an expired role assignment no longer counts for the user's own token, at once", async () => {
      const { user } = (await create('expiring-admin@example.com')).body.data.createUser;
      const until = new Date(t.clock.now().getTime() + 3600_000).toISOString();
      await t.gql(root, 'mutation($u: ID!, $r: ID!, $x: Time) { assignUserRole(user_id: $u, role_id: $r, expires_at: $x) { id } }', {
        u: user.id,
        r: ROLE_IDS.Administrator,
        x: until,
      });
      const token = await userToken(user.id);
      assert.deepEqual((await t.gql(token, '{ me { roles } }')).body.data.me.roles, ['Administrator', 'Analyst']);
      assert.ok((await t.gql(token, '{ users { id } }')).body.data.users.length > 0, 'an Administrator reads users');
      t.clock.advance(3600_000 + 1000);
      // the same token, still within its lifetime: the role it was issued under has ended
      assert.deepEqual((await t.gql(token, '{ me { roles role_assignments { role_name } } }')).body.data.me, {
        roles: ['Analyst'],
        role_assignments: [{ role_name: 'Analyst' }],
      });
      const refused = await t.gql(token, '{ users { id } }');
      assert.equal(refused.body.errors?.[0]?.extensions?.code, 'FORBIDDEN', 'the expired Administrator role gives nothing');
      const create2 = await t.gql(
        token,
        'mutation { createClient(name: "after-expiry", roles: ["ba0fdcbd-e87d-4bdd-ae7d-ca6118b25068"]) { client { id } } }',
      );
      assert.equal(create2.body.errors?.[0]?.extensions?.code, 'FORBIDDEN', 'nor may it give the role to a new client');
    });

    it("a disabled user's token stops at once and stays dead after enabling; nobody disables themselves", async () => {
      const { user } = (await create('disable-me@example.com', { r: [ROLE_IDS.Administrator] })).body.data.createUser;
      const token = await userToken(user.id);
      assert.equal((await t.gql(token, '{ users { id } }')).status, 200, 'the token works while the user is active');
      const self = await t.gql(token, 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: user.id });
      assert.equal(self.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT');
      assert.match(self.body.errors[0].message, /own account/);

      t.clock.advance(1000);
      const rootNow = await t.rootToken();
      const disabled = await t.gql(rootNow, 'mutation($id: ID!) { disableUser(id: $id) { status disabled_at } }', { id: user.id });
      assert.equal(disabled.body.data.disableUser.status, 'disabled');
      assert.equal((await t.gql(token, '{ users { id } }')).status, 401);
      t.clock.advance(1000);
      await t.gql(rootNow, 'mutation($id: ID!) { enableUser(id: $id) { status } }', { id: user.id });
      assert.equal((await t.gql(token, '{ users { id } }')).status, 401, 'enabling does not revive the old token');
      t.clock.advance(1000);
      assert.equal((await t.gql(await userToken(user.id), '{ users { id } }')).status, 200, 'a new token works');
    });

    it('deleting a user removes it and its roles, and its token stops at once', async () => {
      const { user } = (await create('delete-me@example.com')).body.data.createUser;
      const token = await userToken(user.id);
      assert.equal((await t.gql(token, '{ clients { id } }')).status, 200);
      const res = await t.gql(await t.rootToken(), 'mutation($id: ID!) { deleteUser(id: $id) { email } }', { id: user.id });
      assert.deepEqual(res.body.data.deleteUser, { email: 'delete-me@example.com' });
      assert.equal((await t.gql(token, '{ clients { id } }')).status, 401);
      const gone = await t.gql(await t.rootToken(), USER, { id: user.id });
      assert.equal(gone.body.errors?.[0]?.extensions?.code, 'NOT_FOUND');
      const roles = await t.db.kysely.selectFrom('role_assignments').select('id').where('principal_id', '=', user.id).execute();
      assert.deepEqual(roles, []);
    });

    it('resetting sign-in issues a new link; the old one no longer matches', async () => {
      const created = (await create('reset-me@example.com')).body.data.createUser;
      const res = await t.gql(await t.rootToken(), 'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url user { setup_pending } } }', {
        id: created.user.id,
      });
      const fresh = res.body.data.resetUserSignIn;
      assert.notEqual(fresh.setup_url, created.setup_url);
      assert.equal(fresh.user.setup_pending, true);
      const row = await t.db.kysely.selectFrom('users').select('setup_token_hash').where('id', '=', created.user.id).executeTakeFirstOrThrow();
      const token = new URL(fresh.setup_url).searchParams.get('token')!;
      assert.deepEqual(Buffer.from(row.setup_token_hash!), createHash('sha256').update(token).digest());
    });
  });
}
