// The `roles` query (docs/users.md, docs/authorization.md): the role ids that createClient,
// createUser and assignUserRole take, found without reading the docs, with what each allows and
// whether the caller may give it where it acts; and refusals that name a role by its name. The
// authorization matrix covers who may call it.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { CREATE_CLIENT, clientWithRoles, rowCounts, seedTenant } from '../helpers/seed.js';

const ROLES = '{ roles { id name description permissions vendor_only assignable } }';

interface Role {
  id: string;
  name: string;
  description: string;
  permissions: string[];
  vendor_only: boolean;
  assignable: boolean;
}

function rolesOf(res: Response): Role[] {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.errors, undefined, res.text);
  return res.body.data.roles as Role[];
}

const assignable = (roles: Role[]) => roles.filter((r) => r.assignable).map((r) => r.name);

function refused(res: Response, code: string, message: RegExp): void {
  assert.equal(res.body.errors?.[0]?.extensions?.code, code, res.text);
  assert.match(res.body.errors[0].message, message);
}

for (const engine of engines()) {
  describe(`the roles query (${engine})`, () => {
    let t: TestApp;
    /** a tenant of its own for each test: createClient is limited per tenant and hour */
    let tenant: string;
    before(async () => {
      t = await startTestApp({ engine });
    });
    beforeEach(async () => {
      tenant = await seedTenant(t, '1');
    });
    after(() => t.close());

    it('lists every role with its id, name, description, permissions and where it can be held', async () => {
      const analyst = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      const roles = rolesOf(await t.gql(analyst.token, ROLES));
      assert.deepEqual(
        roles.map((r) => [r.name, r.id, r.vendor_only]),
        [
          ['Administrator', 'ba0fdcbd-e87d-4bdd-ae7d-ca6118b25068', false],
          ['Analyst', 'a4903f9f-465b-478f-a24e-82fa2e129d2e', false],
          ['Responder', 'a72dace7-4536-4dbc-947d-015a8eb65f4d', false],
          ['Auditor', 'ace1cae4-59fd-4fd1-9500-40077dc529a7', false],
          ['Operations', 'b7e80aaa-f4cf-4d35-b5b3-25001bacd1f1', true],
          ['Support', 'cceaad48-82d5-4568-ae44-9070e0a63fe1', true],
        ],
      );
      for (const r of roles) assert.ok(r.description.length > 20, `${r.name} has a description`);
      const allows = (name: string) => roles.find((r) => r.name === name)!.permissions;
      assert.ok(allows('Analyst').includes('create API clients'));
      assert.ok(!allows('Responder').includes('create API clients'));
      assert.ok(allows('Auditor').includes('list users') && !allows('Responder').includes('list users'));
      assert.ok(allows('Administrator').includes('manage SSO connections'));
      assert.deepEqual(allows('Support'), ['list API clients', 'read tenants']);
    });

    it('says which roles the caller may give where it acts, and createClient agrees', async () => {
      const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
      const analyst = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      const responder = await clientWithRoles(t, tenant, [ROLE_IDS.Responder]);
      assert.deepEqual(assignable(rolesOf(await t.gql(admin.token, ROLES))), ['Administrator', 'Analyst', 'Responder', 'Auditor']);
      assert.deepEqual(assignable(rolesOf(await t.gql(analyst.token, ROLES))), ['Analyst']);
      // a Responder holds Responder, but may not create clients or manage users: nothing to give
      assert.deepEqual(assignable(rolesOf(await t.gql(responder.token, ROLES))), []);
      // the vendor roles can be given only in tenant 1, by its Administrators
      const root = await t.rootToken();
      assert.deepEqual(assignable(rolesOf(await t.gql(root, ROLES))), Object.keys(ROLE_IDS));
      assert.deepEqual(assignable(rolesOf(await t.gql(root, ROLES, undefined, { tenant }))), ['Administrator', 'Analyst', 'Responder', 'Auditor']);

      // every role the listing calls assignable is given; every other one is refused
      for (const [who, token] of [
        ['admin', admin.token],
        ['analyst', analyst.token],
      ] as const) {
        for (const role of rolesOf(await t.gql(token, ROLES))) {
          const res = await t.gql(token, CREATE_CLIENT, { name: `${who}-gives-${role.name}`, roles: [role.id] });
          if (role.assignable) {
            assert.equal(res.body.errors, undefined, `${who} gives ${role.name}: ${res.text}`);
            assert.deepEqual(res.body.data.createClient.client.roles, [role.name]);
          } else {
            assert.ok(res.body.errors?.length, `${who} gives ${role.name}: refused`);
          }
        }
      }
    });

    it('names the role in a refusal, never only its id, and writes nothing', async () => {
      const analyst = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
      const ops = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
      const before = await rowCounts(t);
      refused(
        await t.gql(analyst.token, CREATE_CLIENT, { name: 'too-strong', roles: [ROLE_IDS.Administrator] }),
        'FORBIDDEN',
        /^A client cannot be given a role its creator does not hold: Administrator \(id ba0fdcbd-e87d-4bdd-ae7d-ca6118b25068\)\. The roles query shows which roles you may give here/,
      );
      refused(
        await t.gql(admin.token, CREATE_CLIENT, { name: 'vendor-here', roles: [ROLE_IDS.Operations] }),
        'BAD_USER_INPUT',
        /^Operations \(id b7e80aaa-f4cf-4d35-b5b3-25001bacd1f1\) can be held only in the vendor tenant 1; send X-Tenant-Context: 1/,
      );
      refused(
        await t.gql(admin.token, `mutation($e: String!, $r: [ID!]) { createUser(email: $e, roles: $r) { user { id } } }`, {
          e: 'support-here@example.com',
          r: [ROLE_IDS.Support],
        }),
        'BAD_USER_INPUT',
        /^Support \(id cceaad48-82d5-4568-ae44-9070e0a63fe1\) can be held only in the vendor tenant 1/,
      );
      refused(
        await t.gql(admin.token, CREATE_CLIENT, { name: 'unknown', roles: ['00000000-0000-4000-8000-000000000000'] }),
        'BAD_USER_INPUT',
        /unknown role id "00000000-0000-4000-8000-000000000000": the roles query lists every role with its id/,
      );
      // Operations may not take over (force-rotate) a client holding a role it could not give
      refused(
        await t.gql(ops.token, `mutation($id: ID!) { forceRotateClientSecret(id: $id) { client_secret } }`, { id: admin.id }, { tenant }),
        'FORBIDDEN',
        /This client holds roles you could not give it \(Administrator \(id ba0fdcbd-e87d-4bdd-ae7d-ca6118b25068\)\); revoke it with deleteClient instead/,
      );
      assert.deepEqual(await rowCounts(t), before);
    });

    it('needs a token, and acts only in a tenant the caller sees', async () => {
      const res = await t.gql(undefined, ROLES);
      assert.equal(res.status, 401);
      assert.equal(res.body.errors[0].extensions.code, 'UNAUTHENTICATED');
      const other = await seedTenant(t, '1');
      const analyst = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      const elsewhere = await t.gql(analyst.token, ROLES, undefined, { tenant: other });
      assert.equal(elsewhere.status, 403, elsewhere.text);
      assert.equal(elsewhere.body.errors[0].extensions.code, 'FORBIDDEN');
    });
  });
}
