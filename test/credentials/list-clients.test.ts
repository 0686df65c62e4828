import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { ROOT_CLIENT_ID, startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, createClient, seedTenant } from '../helpers/seed.js';

const LIST = `query($name: String, $clientIDs: [String], $tenantID: ID, $roleIDs: [ID], $tenantIDs: [ID], $page: Int, $perPage: Int) {
  clients(name: $name, clientIDs: $clientIDs, tenantID: $tenantID, roleIDs: $roleIDs, tenantIDs: $tenantIDs, page: $page, perPage: $perPage) {
    id name client_id tenant_id roles
  }
}`;

interface Listed {
  id: string;
  name: string;
  client_id: string;
  tenant_id: string;
  roles: string[];
}

interface ListArgs {
  name?: string;
  clientIDs?: (string | null)[];
  tenantID?: string;
  roleIDs?: (string | null)[];
  tenantIDs?: (string | null)[];
  page?: number;
  perPage?: number;
}

function errorCode(res: Response): string | undefined {
  return res.body?.errors?.[0]?.extensions?.code;
}

for (const engine of engines()) {
  describe(`clients query (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    async function list(token: string, args: ListArgs = {}, tenant?: string): Promise<Listed[]> {
      const res = await t.gql(token, LIST, args as Record<string, unknown>, { tenant });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.clients;
    }

    const names = (clients: Listed[]) => clients.map((c) => c.name);

    /** creates clients one second apart, so creation order is unambiguous */
    async function createInOrder(tenant: string, clientNames: string[], roles?: string[]) {
      const out = [];
      for (const name of clientNames) {
        t.clock.advance(1000);
        out.push(await createClient(t, await t.rootToken(), name, { tenant, ...(roles ? { roles } : {}) }));
      }
      return out;
    }

    it("lists the acting tenant's clients in creation order: X-Tenant-Context, else the home tenant", async () => {
      const tenant = await seedTenant(t, '1');
      const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator], 'a-admin');
      await createInOrder(tenant, ['zulu', 'alpha', 'mike']);
      const expected = ['a-admin', 'zulu', 'alpha', 'mike'];
      // home tenant of the caller
      assert.deepEqual(names(await list(admin.token)), expected);
      // X-Tenant-Context, from a caller whose home tenant is 1
      const root = await t.rootToken();
      const viaHeader = await list(root, {}, tenant);
      assert.deepEqual(names(viaHeader), expected);
      assert.ok(viaHeader.every((c) => c.tenant_id === tenant));
      // the root caller's home tenant holds the bootstrap client, not these
      const home = await list(root);
      assert.ok(home.every((c) => c.tenant_id === '1'));
      assert.ok(home.some((c) => c.client_id === ROOT_CLIENT_ID));
      assert.ok(!home.some((c) => c.id === admin.id));
    });

    it('filters by name: exact and case-insensitive, with % as a wildcard and _ as a plain character', async () => {
      const tenant = await seedTenant(t, '1');
      await createInOrder(tenant, ['Alpha-One', 'alpha-two', 'beta_one', 'betaXone', 'Gamma']);
      const root = await t.rootToken();
      const byName = async (name: string) => names(await list(root, { name }, tenant));
      assert.deepEqual(await byName('alpha-one'), ['Alpha-One']);
      assert.deepEqual(await byName('ALPHA-ONE'), ['Alpha-One']);
      assert.deepEqual(await byName('gamma'), ['Gamma']);
      assert.deepEqual(await byName('alpha'), []);
      assert.deepEqual(await byName('alpha%'), ['Alpha-One', 'alpha-two']);
      assert.deepEqual(await byName('%ONE'), ['Alpha-One', 'beta_one', 'betaXone']);
      assert.deepEqual(await byName('%a%o%'), ['Alpha-One', 'alpha-two', 'beta_one', 'betaXone']);
      assert.deepEqual(await byName('%'), ['Alpha-One', 'alpha-two', 'beta_one', 'betaXone', 'Gamma']);
      // _ is not a single-character wildcard
      assert.deepEqual(await byName('beta_one'), ['beta_one']);
      assert.deepEqual(await byName('alpha_one'), []);
      assert.deepEqual(await byName('nothing-like-it'), []);
    });

    it('filters by clientIDs, given as client_id or as UUID', async () => {
      const tenant = await seedTenant(t, '1');
      const [a, b, c] = await createInOrder(tenant, ['ids-a', 'ids-b', 'ids-c']);
      const root = await t.rootToken();
      assert.deepEqual(names(await list(root, { clientIDs: [c!.clientId, a!.clientId] }, tenant)), ['ids-a', 'ids-c']);
      assert.deepEqual(names(await list(root, { clientIDs: [b!.id] }, tenant)), ['ids-b']);
      assert.deepEqual(names(await list(root, { clientIDs: [b!.id.toUpperCase()] }, tenant)), ['ids-b']);
      assert.deepEqual(names(await list(root, { clientIDs: [a!.id, c!.clientId] }, tenant)), ['ids-a', 'ids-c']);
      // the same client named twice is listed once
      assert.deepEqual(names(await list(root, { clientIDs: [a!.id, a!.clientId] }, tenant)), ['ids-a']);
      assert.deepEqual(await list(root, { clientIDs: [randomUUID(), 'f'.repeat(32)] }, tenant), []);
      // values that merely look like UUIDs match nothing (no INTERNAL error from the uuid column)
      for (const odd of ['-'.repeat(36), 'a'.repeat(36), `${b!.id.replace(/-/g, '')}abcd`, `${b!.id.slice(0, 35)}-`]) {
        assert.deepEqual(await list(root, { clientIDs: [odd] }, tenant), [], odd);
        assert.deepEqual(names(await list(root, { clientIDs: [odd, a!.clientId] }, tenant)), ['ids-a'], odd);
      }
      // ids of another tenant's clients find nothing here
      const other = await seedTenant(t, '1');
      const foreign = await createClient(t, root, 'ids-foreign', { tenant: other });
      assert.deepEqual(await list(root, { clientIDs: [foreign.id, foreign.clientId] }, tenant), []);
    });

    it('filters by roleIDs: clients holding any of them', async () => {
      const tenant = await seedTenant(t, '1');
      const root = await t.rootToken();
      await createInOrder(tenant, ['role-admin'], [ROLE_IDS.Administrator]);
      await createInOrder(tenant, ['role-analyst']);
      await createInOrder(tenant, ['role-auditor'], [ROLE_IDS.Auditor]);
      await createInOrder(tenant, ['role-both'], [ROLE_IDS.Auditor, ROLE_IDS.Responder]);
      assert.deepEqual(names(await list(root, { roleIDs: [ROLE_IDS.Auditor] }, tenant)), ['role-auditor', 'role-both']);
      assert.deepEqual(names(await list(root, { roleIDs: [ROLE_IDS.Analyst] }, tenant)), ['role-analyst']);
      assert.deepEqual(names(await list(root, { roleIDs: [ROLE_IDS.Administrator, ROLE_IDS.Responder] }, tenant)), ['role-admin', 'role-both']);
      assert.deepEqual(await list(root, { roleIDs: [ROLE_IDS.Operations] }, tenant), []);
      const listed = await list(root, { roleIDs: [ROLE_IDS.Responder] }, tenant);
      assert.deepEqual(listed[0]!.roles.sort(), ['Auditor', 'Responder']);
    });

    it('tenantID and tenantIDs list several tenants the caller reaches (a partner Administrator over its children)', async () => {
      const partner = await seedTenant(t, '1', { isPartner: true });
      const childA = await seedTenant(t, partner);
      const childB = await seedTenant(t, partner);
      const partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator], 'p-admin');
      await createInOrder(childA, ['a-1']);
      await createInOrder(childB, ['b-1']);
      await createInOrder(childA, ['a-2']);
      const tok = partnerAdmin.token;
      // in creation order across the tenants
      assert.deepEqual(names(await list(tok, { tenantIDs: [childA, childB] })), ['a-1', 'b-1', 'a-2']);
      assert.deepEqual(names(await list(tok, { tenantIDs: [childB, childA] })), ['a-1', 'b-1', 'a-2']);
      assert.deepEqual(names(await list(tok, { tenantID: childA })), ['a-1', 'a-2']);
      assert.deepEqual(names(await list(tok, { tenantID: childB })), ['b-1']);
      assert.deepEqual(names(await list(tok, { tenantID: partner, tenantIDs: [childB] })), ['p-admin', 'b-1']);
      assert.deepEqual(names(await list(tok, { tenantIDs: [partner, childA, childB] })), ['p-admin', 'a-1', 'b-1', 'a-2']);
      // repeated ids list each client once
      assert.deepEqual(names(await list(tok, { tenantID: childA, tenantIDs: [childA, childA] })), ['a-1', 'a-2']);
      const listed = await list(tok, { tenantIDs: [childA, childB] });
      assert.deepEqual(
        listed.map((c) => [c.name, c.tenant_id]),
        [
          ['a-1', childA],
          ['b-1', childB],
          ['a-2', childA],
        ],
      );
      // the explicit tenants replace the acting tenant, whatever X-Tenant-Context says
      assert.deepEqual(names(await list(tok, { tenantID: childB }, childA)), ['b-1']);
    });

    it('silently leaves out tenants the caller does not reach (siblings, parents, unknown ids)', async () => {
      const partner = await seedTenant(t, '1', { isPartner: true });
      const childA = await seedTenant(t, partner);
      const childB = await seedTenant(t, partner);
      await clientWithRoles(t, partner, [ROLE_IDS.Administrator], 'parent-admin');
      const childAdmin = await clientWithRoles(t, childA, [ROLE_IDS.Administrator], 'child-a-admin');
      await createInOrder(childA, ['child-a-1']);
      await createInOrder(childB, ['child-b-1']);
      const tok = childAdmin.token;
      assert.deepEqual(names(await list(tok, { tenantIDs: [childA, childB, partner, '1', '999999999'] })), ['child-a-admin', 'child-a-1']);
      for (const unreachable of [childB, partner, '1', '999999999']) {
        assert.deepEqual(await list(tok, { tenantID: unreachable }), [], unreachable);
        assert.deepEqual(await list(tok, { tenantIDs: [unreachable] }), [], unreachable);
      }
      // also when other filters would match there
      assert.deepEqual(await list(tok, { tenantID: childB, name: 'child-b-1' }), []);
      assert.deepEqual(await list(tok, { tenantID: partner, name: 'parent-admin' }), []);
    });

    it('pages with page and perPage, yielding every client exactly once', async () => {
      const tenant = await seedTenant(t, '1');
      const created = await createInOrder(tenant, ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
      const root = await t.rootToken();
      const all = await list(root, {}, tenant);
      assert.deepEqual(names(all), ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
      for (const perPage of [1, 2, 3, 7, 500]) {
        const seen: Listed[] = [];
        for (let page = 1; ; page++) {
          const chunk = await list(root, { page, perPage }, tenant);
          assert.ok(chunk.length <= perPage);
          if (chunk.length === 0) break;
          seen.push(...chunk);
          assert.ok(page <= 7, 'paging does not end');
        }
        assert.deepEqual(
          seen.map((c) => c.id),
          created.map((c) => c.id),
          `perPage ${perPage}`,
        );
      }
      assert.deepEqual(names(await list(root, { page: 3, perPage: 3 }, tenant)), ['p7']);
      assert.deepEqual(await list(root, { page: 4, perPage: 3 }, tenant), []);
      // page alone uses the default size
      assert.deepEqual(names(await list(root, { page: 1 }, tenant)), names(all));
      assert.deepEqual(await list(root, { page: 2 }, tenant), []);
    });

    it('rejects perPage 0 or 501, page 0 and a page past a million rows with BAD_USER_INPUT, naming the argument', async () => {
      const root = await t.rootToken();
      for (const [args, words] of [
        [{ perPage: 0 }, 'perPage must be from 1 to 500'],
        [{ perPage: 501 }, 'perPage must be from 1 to 500'],
        [{ perPage: -1 }, 'perPage must be from 1 to 500'],
        [{ page: 0 }, 'page must be 1 or more (pages are numbered from 1)'],
        [{ page: -1 }, 'page must be 1 or more (pages are numbered from 1)'],
        [{ page: 0, perPage: 10 }, 'page must be 1 or more (pages are numbered from 1)'],
        [{ page: 2_002, perPage: 500 }, 'page is too deep: a page starts at most 1,000,000 rows in'],
      ] as const) {
        const res = await t.gql(root, LIST, args);
        assert.equal(errorCode(res), 'BAD_USER_INPUT', `${JSON.stringify(args)}: ${res.text}`);
        assert.equal(res.body.errors[0].message, words);
        assert.equal(res.body.data?.clients ?? null, null);
      }
      assert.deepEqual(await list(root, { page: 2_001, perPage: 500 }), [], 'a page that starts a million rows in is still read');
      assert.ok((await list(root, { perPage: 500 })).length > 0);
      assert.ok((await list(root, { perPage: 1, page: 1 })).length === 1);
    });

    it('rejects a NUL character in name or clientIDs with BAD_USER_INPUT, not INTERNAL', async () => {
      const root = await t.rootToken();
      for (const args of [{ name: 'a\u0000b' }, { clientIDs: ['\u0000'] }, { clientIDs: [ROOT_CLIENT_ID, 'x\u0000'] }]) {
        const res = await t.gql(root, LIST, args);
        assert.equal(errorCode(res), 'BAD_USER_INPUT', `${JSON.stringify(args)}: ${res.text}`);
        assert.equal(res.body.data?.clients ?? null, null);
      }
    });

    it('rejects an unknown role id in roleIDs with BAD_USER_INPUT', async () => {
      const root = await t.rootToken();
      for (const roleIDs of [['00000000-0000-4000-8000-000000000000'], [ROLE_IDS.Analyst, 'Administrator'], ['']]) {
        const res = await t.gql(root, LIST, { roleIDs });
        assert.equal(errorCode(res), 'BAD_USER_INPUT', `${JSON.stringify(roleIDs)}: ${res.text}`);
        assert.equal(res.body.data?.clients ?? null, null);
      }
    });

    it('null entries of the list arguments ([String], [ID]): refused in tenantIDs and roleIDs, matching no client in clientIDs', async () => {
      const tenant = await seedTenant(t, '1');
      const [a] = await createInOrder(tenant, ['nulls-a']);
      const root = await t.rootToken();
      for (const [args, message] of [
        [{ tenantIDs: [tenant, null] }, '"null" is not a tenant id'],
        [{ roleIDs: [ROLE_IDS.Analyst, null] }, 'unknown role id "null"'],
      ] as const) {
        const res = await t.gql(root, LIST, args);
        assert.equal(errorCode(res), 'BAD_USER_INPUT', `${JSON.stringify(args)}: ${res.text}`);
        assert.equal(res.body.errors[0].message, message);
      }
      assert.deepEqual(await list(root, { clientIDs: [null] }, tenant), []);
      assert.deepEqual(names(await list(root, { clientIDs: [null, a!.clientId] }, tenant)), ['nulls-a']);
    });

    it('shows a Support client only the clients of tenants with support enabled', async () => {
      const open = await seedTenant(t, '1', { supportEnabled: true });
      const closed = await seedTenant(t, '1');
      const openPartner = await seedTenant(t, '1', { isPartner: true, supportEnabled: true });
      const closedChild = await seedTenant(t, openPartner); // support is per tenant, not inherited
      await createInOrder(open, ['open-1', 'open-2']);
      await createInOrder(closed, ['closed-1']);
      await createInOrder(closedChild, ['closed-child-1']);
      const support = await clientWithRoles(t, '1', [ROLE_IDS.Support], 'support-staff');
      const tok = support.token;
      assert.deepEqual(names(await list(tok, { tenantIDs: [open, closed, closedChild, openPartner, '1'] })), ['open-1', 'open-2']);
      assert.deepEqual(names(await list(tok, { tenantID: open })), ['open-1', 'open-2']);
      assert.deepEqual(await list(tok, { tenantID: closed }), []);
      assert.deepEqual(await list(tok, { tenantID: closedChild }), []);
      assert.deepEqual(names(await list(tok, {}, open)), ['open-1', 'open-2']);
      // acting in a tenant without support access, or its own (tenant 1 has none): refused, nothing listed
      for (const tenant of [closed, closedChild, undefined]) {
        const res = await t.gql(tok, LIST, {}, { tenant });
        assert.equal(errorCode(res), 'FORBIDDEN', `${tenant}: ${res.text}`);
        assert.ok(!res.text.includes('closed-1') && !res.text.includes('support-staff'));
      }
      // support access switched on later applies at once
      await t.db.kysely.updateTable('tenants').set({ support_enabled: true }).where('id', '=', closed).execute();
      assert.deepEqual(names(await list(tok, { tenantID: closed })), ['closed-1']);
    });

    it('combines all filters', async () => {
      const partner = await seedTenant(t, '1', { isPartner: true });
      const childA = await seedTenant(t, partner);
      const childB = await seedTenant(t, partner);
      const childC = await seedTenant(t, partner);
      const partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
      const [a1] = await createInOrder(childA, ['svc-a1'], [ROLE_IDS.Auditor]);
      const [b1] = await createInOrder(childB, ['SVC-b1'], [ROLE_IDS.Auditor]);
      const [a2] = await createInOrder(childA, ['svc-a2'], [ROLE_IDS.Administrator]); // wrong role
      const [a3] = await createInOrder(childA, ['other-a3'], [ROLE_IDS.Auditor]); // wrong name
      const [b2] = await createInOrder(childB, ['svc-b2'], [ROLE_IDS.Auditor, ROLE_IDS.Responder]);
      const [b3] = await createInOrder(childB, ['svc-b3'], [ROLE_IDS.Auditor]); // not among clientIDs
      const [c1] = await createInOrder(childC, ['svc-c1'], [ROLE_IDS.Auditor]); // tenant not asked for
      const args = {
        name: 'svc-%',
        clientIDs: [a1!.clientId, b1!.id, a2!.clientId, a3!.id, b2!.clientId, c1!.clientId],
        tenantID: childA,
        tenantIDs: [childB, '999999999'],
        roleIDs: [ROLE_IDS.Auditor, ROLE_IDS.Operations],
      };
      assert.ok(b3);
      const tok = partnerAdmin.token;
      assert.deepEqual(names(await list(tok, args)), ['svc-a1', 'SVC-b1', 'svc-b2']);
      assert.deepEqual(names(await list(tok, { ...args, page: 1, perPage: 2 })), ['svc-a1', 'SVC-b1']);
      assert.deepEqual(names(await list(tok, { ...args, page: 2, perPage: 2 })), ['svc-b2']);
      assert.deepEqual(names(await list(tok, { ...args, page: 3, perPage: 2 })), []);
    });

    it('does not list deleted clients', async () => {
      const tenant = await seedTenant(t, '1');
      const [keep, gone] = await createInOrder(tenant, ['kept', 'deleted']);
      const root = await t.rootToken();
      const del = await t.gql(root, `mutation($id: ID!) { deleteClient(id: $id) { id } }`, { id: gone!.id }, { tenant });
      assert.equal(del.body.errors, undefined, del.text);
      assert.deepEqual(names(await list(root, {}, tenant)), ['kept']);
      assert.deepEqual(await list(root, { name: 'deleted' }, tenant), []);
      assert.deepEqual(await list(root, { clientIDs: [gone!.id, gone!.clientId] }, tenant), []);
      assert.deepEqual(names(await list(root, { tenantID: tenant, roleIDs: [ROLE_IDS.Analyst] })), ['kept']);
      assert.deepEqual(names(await list(root, { clientIDs: [keep!.clientId, gone!.clientId] }, tenant)), ['kept']);
    });

    it('resolves every Client field', async () => {
      const tenant = await seedTenant(t, '1');
      t.clock.advance(1000);
      const createdAt = t.clock.now().toISOString();
      const c = await createClient(t, await t.rootToken(), 'all-fields', { tenant, roles: [ROLE_IDS.Analyst, ROLE_IDS.Auditor] });
      const root = await t.db.kysely.selectFrom('clients').select('id').where('client_id', '=', ROOT_CLIENT_ID).executeTakeFirstOrThrow();
      const res = await t.gql(
        await t.rootToken(),
        `query($ids: [String]) { clients(clientIDs: $ids) {
          id name client_id roles
          role_assignments { id tenant_id role_id role_name expires_at }
          tenant_id created_at updated_at created_by updated_by environment last_used_at revoked_at
          secrets { id hint created_at expires_at last_used_at }
        } }`,
        { ids: [c.clientId] },
        { tenant },
      );
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.errors, undefined, res.text);
      assert.equal(res.body.data.clients.length, 1);
      const client = res.body.data.clients[0];
      const secretRow = await t.db.kysely.selectFrom('client_secrets').select('id').where('client_id', '=', c.id).executeTakeFirstOrThrow();
      assert.deepEqual(
        { ...client, roles: [...client.roles].sort(), role_assignments: undefined },
        {
          id: c.id,
          name: 'all-fields',
          client_id: c.clientId,
          roles: ['Analyst', 'Auditor'],
          role_assignments: undefined,
          tenant_id: tenant,
          created_at: createdAt,
          updated_at: createdAt,
          created_by: root.id,
          updated_by: root.id,
          environment: 'us1',
          last_used_at: null,
          revoked_at: null,
          secrets: [{ id: secretRow.id, hint: `gatehouse_cs_…${c.secret.slice(-4)}`, created_at: createdAt, expires_at: null, last_used_at: null }],
        },
      );
      const assignments = client.role_assignments
        .map((a: { id: string; tenant_id: string; role_id: string; role_name: string; expires_at: string | null }) => {
          assert.match(a.id, /^[0-9a-f-]{36}$/);
          return { ...a, id: undefined };
        })
        .sort((x: { role_name: string }, y: { role_name: string }) => x.role_name.localeCompare(y.role_name));
      assert.deepEqual(assignments, [
        { id: undefined, tenant_id: tenant, role_id: ROLE_IDS.Analyst, role_name: 'Analyst', expires_at: null },
        { id: undefined, tenant_id: tenant, role_id: ROLE_IDS.Auditor, role_name: 'Auditor', expires_at: null },
      ]);
      assert.ok(!res.text.includes(c.secret));
    });
  });
}
