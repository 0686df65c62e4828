// Users across the hierarchy (docs/authorization.md, users), on both engines: an administrator
// acting in its own tenant cannot see or change a user whose home is outside its reach (the same
// NOT_FOUND as an id that does not exist); nobody changes their own roles or account; two
// administrators disabling each other at once do not both succeed; reset ends the user's tokens.
//
//   1 ── P1 (partner) ── C1, C2
//     └─ P2 (partner)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, rowCounts } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const { Administrator } = ROLE_IDS;
const OPS: [string, string, (id: string) => Record<string, unknown>][] = [
  ['user', 'query($id: ID!) { user(id: $id) { id } }', (id) => ({ id })],
  ['assignUserRole', `mutation($id: ID!) { assignUserRole(user_id: $id, role_id: "${ROLE_IDS.Auditor}") { id } }`, (id) => ({ id })],
  ['removeUserRole', `mutation($id: ID!) { removeUserRole(user_id: $id, assignment_id: "${randomUUID()}") { id } }`, (id) => ({ id })],
  ['disableUser', 'mutation($id: ID!) { disableUser(id: $id) { id } }', (id) => ({ id })],
  ['enableUser', 'mutation($id: ID!) { enableUser(id: $id) { id } }', (id) => ({ id })],
  ['resetUserSignIn', 'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }', (id) => ({ id })],
  ['deleteUser', 'mutation($id: ID!) { deleteUser(id: $id) { id } }', (id) => ({ id })],
];

for (const engine of engines()) {
  describe(`users across tenants (${engine})`, () => {
    let t: TestApp;
    let P1: string;
    let C1: string;
    let C2: string;
    let P2: string;
    before(async () => {
      t = await startTestApp({ engine });
      P1 = await createTenant(t, '1', { isPartner: true });
      C1 = await createTenant(t, P1);
      C2 = await createTenant(t, P1);
      P2 = await createTenant(t, '1', { isPartner: true });
    });
    after(() => t.close());

    const code = (res: { body: { errors?: { extensions?: { code?: string } }[] } }) => res.body.errors?.[0]?.extensions?.code ?? 'ok';
    async function user(tenant: string, roles: string[] = [Administrator]): Promise<{ id: string; token: string }> {
      const res = await t.gql(
        await t.rootToken(),
        'mutation($e: String!, $r: [ID!]) { createUser(email: $e, roles: $r) { user { id } } }',
        { e: `${randomUUID()}@example.com`, r: roles },
        { tenant },
      );
      const id = res.body.data.createUser.user.id as string;
      return { id, token: (await t.service.services.tokens.issue({ kind: 'user', id, tenantId: tenant })).token };
    }

    it('an administrator of another partner, a sibling, or a child sees and changes nothing of a user beyond its reach', async () => {
      const victims = { C1: await user(C1), P1: await user(P1) };
      const attackers: [string, string, string][] = [
        ['P2 admin', (await clientWithRoles(t, P2, [Administrator])).token, 'C1'],
        ['C2 admin', (await clientWithRoles(t, C2, [Administrator])).token, 'C1'],
        ['C1 admin', (await clientWithRoles(t, C1, [Administrator])).token, 'P1'],
      ];
      const before = await rowCounts(t);
      for (const [who, token, target] of attackers) {
        const victim = victims[target as 'C1' | 'P1'];
        for (const [op, doc, vars] of OPS) {
          const real = await t.gql(token, doc, vars(victim.id));
          const none = await t.gql(token, doc, vars(randomUUID()));
          assert.equal(code(real), 'NOT_FOUND', `${who} ${op} on a ${target} user: ${real.text}`);
          assert.deepEqual(real.body.errors?.[0]?.message, none.body.errors?.[0]?.message, `${who} ${op}: the same answer as for no user`);
        }
      }
      assert.deepEqual(await rowCounts(t), before, 'nothing was written');
      assert.equal((await t.gql(victims.C1.token, '{ users { id } }')).status, 200, 'the victim is untouched');
    });

    it('a partner user made Administrator of one child only cannot act on itself from there', async () => {
      const p1Analyst = await user(P1, [ROLE_IDS.Analyst]);
      const grant = await t.gql(
        await t.rootToken(),
        `mutation($id: ID!) { assignUserRole(user_id: $id, role_id: "${Administrator}") { id } }`,
        { id: p1Analyst.id },
        { tenant: C1 },
      );
      assert.equal(code(grant), 'ok', grant.text);
      const self = await t.gql(
        p1Analyst.token,
        'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }',
        { id: p1Analyst.id },
        { tenant: C1 },
      );
      assert.equal(code(self), 'NOT_FOUND', self.text);
    });

    it('nobody changes their own roles or account', async () => {
      const me = await user(C1);
      const mine = (await t.gql(me.token, 'query($id: ID!) { user(id: $id) { role_assignments { id } } }', { id: me.id })).body.data.user
        .role_assignments[0].id;
      const attempts: [string, Record<string, unknown>, RegExp][] = [
        [`mutation($id: ID!, $a: ID!) { removeUserRole(user_id: $id, assignment_id: $a) { id } }`, { a: mine }, /change your own roles/],
        [
          `mutation($id: ID!) { assignUserRole(user_id: $id, role_id: "${Administrator}", expires_at: "2099-01-01T00:00:00Z") { id } }`,
          {},
          /change your own roles/,
        ],
        ['mutation($id: ID!) { disableUser(id: $id) { id } }', {}, /disable your own account/],
        ['mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }', {}, /reset your own sign-in/],
        ['mutation($id: ID!) { deleteUser(id: $id) { id } }', {}, /delete your own account/],
      ];
      for (const [doc, vars, message] of attempts) {
        const res = await t.gql(me.token, doc, { id: me.id, ...vars });
        assert.equal(code(res), 'BAD_USER_INPUT', res.text);
        assert.match(res.body.errors[0].message, message);
      }
      assert.equal((await t.gql(me.token, '{ users { id } }')).status, 200, 'still an active Administrator');
    });

    it('two administrators disabling each other at once: one succeeds, the other is refused', async () => {
      for (let round = 0; round < 3; round++) {
        const a = await user(C2);
        const b = await user(C2);
        const [ra, rb] = await Promise.all([
          t.gql(a.token, 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: b.id }),
          t.gql(b.token, 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: a.id }),
        ]);
        const outcomes = [code(ra), code(rb)].sort();
        assert.ok(outcomes[0] !== 'ok' || outcomes[1] !== 'ok', `both succeeded: ${ra.text} ${rb.text}`);
        const rows = await t.db.kysely.selectFrom('users').select('disabled_at').where('id', 'in', [a.id, b.id]).execute();
        assert.equal(rows.filter((r) => r.disabled_at === null).length, 1, 'exactly one of them is still active');
      }
    });

    it("resetting a user's sign-in ends its tokens at once", async () => {
      const victim = await user(C1);
      assert.equal((await t.gql(victim.token, '{ users { id } }')).status, 200);
      t.clock.advance(1000);
      const reset = await t.gql(await t.rootToken(), 'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }', { id: victim.id });
      assert.equal(code(reset), 'ok', reset.text);
      const after = await t.gql(victim.token, '{ users { id } }');
      assert.equal(after.status, 401);
      assert.match(after.text, /before access was cut/);
    });
  });
}
