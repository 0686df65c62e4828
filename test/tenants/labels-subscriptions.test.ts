import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, rowCounts } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const LABEL_FIELDS = 'id tenant_id name value owner_partner_tenant_id restricted created_at updated_at';
const CREATE_LABEL = `mutation($tid: ID!, $l: InputTenantLabel!) { createTenantLabel(tenant_id: $tid, label_input: $l) { ${LABEL_FIELDS} } }`;
const UPDATE_LABEL = `mutation($id: ID!, $l: InputTenantLabel!) { updateTenantLabel(label_id: $id, label_input: $l) { ${LABEL_FIELDS} } }`;
const DELETE_LABEL = `mutation($id: ID!) { deleteTenantLabel(label_id: $id) { ${LABEL_FIELDS} } }`;

const SERVICE_FIELDS = 'id name description owner_tenant_id created_at updated_at';
const SUBSCRIPTION_FIELDS = 'id service_id name description created_at updated_at partner_tenant_id retired_at';
const CREATE_SERVICE = `mutation($s: InputService!) { createService(service_input: $s) { ${SERVICE_FIELDS} } }`;
const SERVICES = `query($p: ID) { services(partner_tenant_id: $p) { ${SERVICE_FIELDS} } }`;
const CREATE_SUBSCRIPTION = `mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { ${SUBSCRIPTION_FIELDS} } }`;
const SUBSCRIPTIONS = `query($p: ID, $r: Boolean) { partnerSubscriptions(partner_tenant_id: $p, includeRetired: $r) { ${SUBSCRIPTION_FIELDS} } }`;
const RETIRE = `mutation($id: ID!) { retirePartnerSubscription(subscription_id: $id) { ${SUBSCRIPTION_FIELDS} } }`;
const TENANT_SUBS = `id updated_at services { id name owner_tenant_id } partnership { subscriptions { id name service_id partner_tenant_id retired_at } }`;
const ASSIGN = `mutation($t: ID!, $s: ID!) { assignSubscription(tenant_id: $t, subscription_id: $s) { ${TENANT_SUBS} } }`;
const UNASSIGN = `mutation($t: ID!, $s: ID!) { unassignSubscription(tenant_id: $t, subscription_id: $s) { ${TENANT_SUBS} } }`;
const READ_TENANT = `query($id: ID!) { tenants(tenantsQuery: {ids: [$id]}) { results { ${TENANT_SUBS} labels { ${LABEL_FIELDS} } } } }`;

/** Every row of the label and subscription tables and every tenant's updated_at: "nothing changed". */
async function state(t: TestApp) {
  return {
    labels: await t.db.kysely.selectFrom('tenant_labels').selectAll().orderBy('id').execute(),
    subscriptions: await t.db.kysely.selectFrom('partner_subscriptions').selectAll().orderBy('id').execute(),
    assigned: await t.db.kysely.selectFrom('tenant_subscriptions').selectAll().orderBy('tenant_id').orderBy('subscription_id').execute(),
    services: await t.db.kysely.selectFrom('services').selectAll().orderBy('id').execute(),
    tenants: await t.db.kysely.selectFrom('tenants').select(['id', 'updated_at']).orderBy('id').execute(),
    audit: (await rowCounts(t)).audit_events,
  };
}

async function auditCount(t: TestApp): Promise<number> {
  return (await rowCounts(t)).audit_events ?? 0;
}

const code = (res: Response): string | undefined => res.body?.errors?.[0]?.extensions?.code;

function ok<T = any>(res: Response, field: string): T {
  assert.equal(res.body.errors, undefined, res.text);
  return res.body.data[field] as T;
}

for (const engine of engines()) {
  describe(`tenant labels (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let partner: string;
    let partnerAdmin: { token: string };
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
      partner = await createTenant(t, '1', { isPartner: true });
      partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
    });
    after(() => t.close());

    it('creates a label owned by the acting tenant (X-Tenant-Context) or by owner_partner_tenant_id, with one audit row each', async () => {
      const child = await createTenant(t, partner);
      let audits = await auditCount(t);
      t.clock.advance(1000);
      const byContext = ok(
        await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'Tier', value: 'gold' } }, partner),
        'createTenantLabel',
      );
      assert.match(byContext.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...byContext, id: undefined },
        {
          id: undefined,
          tenant_id: child,
          name: 'Tier',
          value: 'gold',
          owner_partner_tenant_id: partner,
          restricted: false,
          created_at: t.clock.now().toISOString(),
          updated_at: t.clock.now().toISOString(),
        },
      );
      assert.equal(await auditCount(t), ++audits);
      // without a context the acting tenant is the caller's home tenant: the partner
      const byHome = ok(await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'env', value: 'prod' } }), 'createTenantLabel');
      assert.equal(byHome.owner_partner_tenant_id, partner);
      assert.equal(await auditCount(t), ++audits);
      // the root admin names the owner
      const byOwner = ok(
        await tq(t, root, CREATE_LABEL, { tid: child, l: { name: 'segment', value: 'smb', owner_partner_tenant_id: partner } }),
        'createTenantLabel',
      );
      assert.equal(byOwner.owner_partner_tenant_id, partner);
      // the root admin acting in its home tenant labels in the vendor's name; the same name under
      // another owner is a different label
      const byVendor = ok(await tq(t, root, CREATE_LABEL, { tid: child, l: { name: 'tier', value: 'vendor' } }), 'createTenantLabel');
      assert.equal(byVendor.owner_partner_tenant_id, '1');
      audits += 2;
      assert.equal(await auditCount(t), audits);
      const read = await tq(t, root, READ_TENANT, { id: child });
      const labels = read.body.data.tenants.results[0].labels.map((l: any) => [l.name, l.value, l.owner_partner_tenant_id]);
      assert.deepEqual(
        labels.sort(),
        [
          ['Tier', 'gold', partner],
          ['env', 'prod', partner],
          ['segment', 'smb', partner],
          ['tier', 'vendor', '1'],
        ].sort(),
      );
    });

    it('answers a second label of one name (case-insensitive) for the same owner with CONFLICT, writing nothing', async () => {
      const child = await createTenant(t, partner);
      ok(await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'cost-center', value: 'a' } }), 'createTenantLabel');
      const other = ok(await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'region', value: 'eu' } }), 'createTenantLabel');
      const before = await state(t);
      const dup = await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'COST-CENTER', value: 'b' } });
      assert.equal(code(dup), 'CONFLICT');
      // renaming onto an existing name is a conflict too
      const renamed = await tq(t, partnerAdmin.token, UPDATE_LABEL, { id: other.id, l: { name: 'Cost-Center', value: 'eu' } });
      assert.equal(code(renamed), 'CONFLICT');
      assert.deepEqual(await state(t), before);
    });

    it('updates and deletes a label (delete returns it); each moves the tenant updated_at and writes one audit row', async () => {
      const child = await createTenant(t, partner);
      const label = ok(await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'plan', value: 'basic' } }), 'createTenantLabel');
      let audits = await auditCount(t);

      t.clock.advance(1000);
      const updated = ok(await tq(t, partnerAdmin.token, UPDATE_LABEL, { id: label.id, l: { name: 'plan', value: 'premium' } }), 'updateTenantLabel');
      assert.deepEqual(
        { id: updated.id, value: updated.value, created_at: updated.created_at, updated_at: updated.updated_at },
        { id: label.id, value: 'premium', created_at: label.created_at, updated_at: t.clock.now().toISOString() },
      );
      assert.equal(await auditCount(t), ++audits);
      let tenant = (await tq(t, root, READ_TENANT, { id: child })).body.data.tenants.results[0];
      assert.equal(tenant.updated_at, t.clock.now().toISOString());
      assert.deepEqual(
        tenant.labels.map((l: any) => l.value),
        ['premium'],
      );

      t.clock.advance(1000);
      const deleted = ok(await tq(t, partnerAdmin.token, DELETE_LABEL, { id: label.id }), 'deleteTenantLabel');
      assert.deepEqual({ id: deleted.id, name: deleted.name, value: deleted.value }, { id: label.id, name: 'plan', value: 'premium' });
      assert.equal(await auditCount(t), ++audits);
      tenant = (await tq(t, root, READ_TENANT, { id: child })).body.data.tenants.results[0];
      assert.equal(tenant.updated_at, t.clock.now().toISOString());
      assert.deepEqual(tenant.labels, []);
      // a label that is gone is NOT_FOUND
      assert.equal(code(await tq(t, partnerAdmin.token, DELETE_LABEL, { id: label.id })), 'NOT_FOUND');
      assert.equal(await auditCount(t), audits);
    });

    it('a label creation moves the tenant updated_at', async () => {
      const child = await createTenant(t, partner);
      t.clock.advance(1000);
      ok(await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'moves', value: 'yes' } }), 'createTenantLabel');
      const tenant = (await tq(t, root, READ_TENANT, { id: child })).body.data.tenants.results[0];
      assert.equal(tenant.updated_at, t.clock.now().toISOString());
      const modified = await tq(
        t,
        root,
        `query($s: Time) { tenants(tenantsQuery: {modifiedTimeFilter: {startTime: $s}, ids: ["${child}"]}) { count } }`,
        { s: t.clock.now().toISOString() },
      );
      assert.equal(modified.body.data.tenants.count, 1);
    });

    it('answers RESTRICTED to updating or deleting a restricted label, the root admin included, and changes nothing', async () => {
      const child = await createTenant(t, partner);
      const vendorOwned = ok(
        await tq(t, root, CREATE_LABEL, { tid: child, l: { name: 'contract', value: 'x-1', restricted: true } }),
        'createTenantLabel',
      );
      assert.equal(vendorOwned.restricted, true);
      assert.equal(vendorOwned.owner_partner_tenant_id, '1');
      const partnerOwned = ok(
        await tq(t, root, CREATE_LABEL, { tid: child, l: { name: 'sla', value: 'gold', restricted: true, owner_partner_tenant_id: partner } }),
        'createTenantLabel',
      );
      assert.equal(partnerOwned.restricted, true);

      t.clock.advance(1000);
      const before = await state(t);
      for (const [who, token, label] of [
        ['root on vendor label', root, vendorOwned],
        ['root on partner label', root, partnerOwned],
        ['partner admin on its own restricted label', partnerAdmin.token, partnerOwned],
      ] as const) {
        const upd = await tq(t, token, UPDATE_LABEL, { id: label.id, l: { name: label.name, value: 'changed' } });
        assert.equal(code(upd), 'RESTRICTED', who);
        assert.match(upd.body.errors[0].message, /restricted/);
        assert.equal(upd.body.data.updateTenantLabel, null);
        const del = await tq(t, token, DELETE_LABEL, { id: label.id });
        assert.equal(code(del), 'RESTRICTED', who);
      }
      assert.deepEqual(await state(t), before);
    });

    it('refuses restricted: true to a partner Administrator with FORBIDDEN', async () => {
      const child = await createTenant(t, partner);
      const before = await state(t);
      const res = await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'self-restricted', value: 'v', restricted: true } });
      assert.equal(code(res), 'FORBIDDEN');
      assert.deepEqual(await state(t), before);
    });

    it("with nested partners P1 > P2 > child: P2 cannot change P1's label (FORBIDDEN), P1 can change P2's", async () => {
      const p1 = await createTenant(t, '1', { isPartner: true });
      const p2 = await createTenant(t, p1, { isPartner: true });
      const child = await createTenant(t, p2);
      const p1Admin = await clientWithRoles(t, p1, [ROLE_IDS.Administrator]);
      const p2Admin = await clientWithRoles(t, p2, [ROLE_IDS.Administrator]);
      const p1Label = ok(await tq(t, p1Admin.token, CREATE_LABEL, { tid: child, l: { name: 'owner', value: 'p1' } }), 'createTenantLabel');
      const p2Label = ok(await tq(t, p2Admin.token, CREATE_LABEL, { tid: child, l: { name: 'owner', value: 'p2' } }), 'createTenantLabel');
      assert.deepEqual([p1Label.owner_partner_tenant_id, p2Label.owner_partner_tenant_id], [p1, p2]);

      const before = await state(t);
      assert.equal(code(await tq(t, p2Admin.token, UPDATE_LABEL, { id: p1Label.id, l: { name: 'owner', value: 'hijacked' } })), 'FORBIDDEN');
      assert.equal(code(await tq(t, p2Admin.token, DELETE_LABEL, { id: p1Label.id })), 'FORBIDDEN');
      // nor can P2 label in P1's name
      assert.equal(code(await tq(t, p2Admin.token, CREATE_LABEL, { tid: child, l: { name: 'x', owner_partner_tenant_id: p1 } })), 'NOT_FOUND');
      assert.deepEqual(await state(t), before);

      const changed = ok(await tq(t, p1Admin.token, UPDATE_LABEL, { id: p2Label.id, l: { name: 'owner', value: 'p2-by-p1' } }), 'updateTenantLabel');
      assert.deepEqual([changed.value, changed.owner_partner_tenant_id], ['p2-by-p1', p2]);
      const gone = ok(await tq(t, p1Admin.token, DELETE_LABEL, { id: p2Label.id }), 'deleteTenantLabel');
      assert.equal(gone.id, p2Label.id);
    });

    it('refuses a child Administrator labelling in its own (non-partner) name with BAD_USER_INPUT', async () => {
      const child = await createTenant(t, partner);
      const childAdmin = await clientWithRoles(t, child, [ROLE_IDS.Administrator]);
      const before = await state(t);
      const res = await tq(t, childAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'mine', value: 'v' } });
      assert.equal(code(res), 'BAD_USER_INPUT');
      const ctx = await tq(t, childAdmin.token, CREATE_LABEL, { tid: child, l: { name: 'mine', value: 'v' } }, child);
      assert.equal(code(ctx), 'BAD_USER_INPUT');
      assert.deepEqual(await state(t), before);
    });

    it('answers NOT_FOUND for labels on tenants the caller cannot see, and for labels there', async () => {
      const otherPartner = await createTenant(t, '1', { isPartner: true });
      const hidden = await createTenant(t, otherPartner);
      const hiddenLabel = ok(await tq(t, root, CREATE_LABEL, { tid: hidden, l: { name: 'secret', value: 's' } }), 'createTenantLabel');
      const before = await state(t);
      const created = await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: hidden, l: { name: 'peek', value: 'p' } });
      const missing = await tq(t, partnerAdmin.token, CREATE_LABEL, { tid: '987654321', l: { name: 'peek', value: 'p' } });
      assert.equal(code(created), 'NOT_FOUND');
      assert.equal(code(missing), 'NOT_FOUND');
      assert.equal(created.body.errors[0].message, missing.body.errors[0].message);
      assert.equal(code(await tq(t, partnerAdmin.token, UPDATE_LABEL, { id: hiddenLabel.id, l: { name: 'secret', value: 'x' } })), 'NOT_FOUND');
      assert.equal(code(await tq(t, partnerAdmin.token, DELETE_LABEL, { id: hiddenLabel.id })), 'NOT_FOUND');
      assert.deepEqual(await state(t), before);
    });

    it('refuses Analysts with FORBIDDEN, and lets Operations label', async () => {
      const child = await createTenant(t, partner);
      const analyst = await clientWithRoles(t, partner, [ROLE_IDS.Analyst]);
      const before = await state(t);
      assert.equal(code(await tq(t, analyst.token, CREATE_LABEL, { tid: child, l: { name: 'by-analyst' } })), 'FORBIDDEN');
      assert.deepEqual(await state(t), before);
      const ops = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
      const label = ok(
        await tq(t, ops.token, CREATE_LABEL, { tid: child, l: { name: 'by-ops', owner_partner_tenant_id: partner } }),
        'createTenantLabel',
      );
      assert.equal(label.owner_partner_tenant_id, partner);
    });
  });

  describe(`services and partner subscriptions (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let partner: string;
    let admin: { token: string };
    let vendorService: any;
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
      partner = await createTenant(t, '1', { isPartner: true });
      admin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
      vendorService = ok(await tq(t, root, CREATE_SERVICE, { s: { name: 'Managed Detection', description: 'vendor MDR' } }), 'createService');
    });
    after(() => t.close());

    it('createService and services: a partner sees its own services and the vendor’s', async () => {
      assert.equal(vendorService.owner_tenant_id, '1');
      let audits = await auditCount(t);
      const own = ok(await tq(t, admin.token, CREATE_SERVICE, { s: { name: 'Partner Backup', description: 'ours' } }), 'createService');
      assert.equal(await auditCount(t), ++audits);
      assert.match(own.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...own, id: undefined },
        {
          id: undefined,
          name: 'Partner Backup',
          description: 'ours',
          owner_tenant_id: partner,
          created_at: t.clock.now().toISOString(),
          updated_at: t.clock.now().toISOString(),
        },
      );
      const list = ok<any[]>(await tq(t, admin.token, SERVICES, {}), 'services');
      assert.deepEqual(list.map((s) => s.id).sort(), [own.id, vendorService.id].sort());
      // the vendor does not see the partner's services as its own
      const vendorList = ok<any[]>(await tq(t, root, SERVICES, {}), 'services');
      assert.ok(!vendorList.some((s) => s.id === own.id));
      const forPartner = ok<any[]>(await tq(t, root, SERVICES, { p: partner }), 'services');
      assert.ok(forPartner.some((s) => s.id === own.id));

      // a duplicate name for the same owner is CONFLICT, writing nothing
      const before = await rowCounts(t);
      assert.equal(code(await tq(t, admin.token, CREATE_SERVICE, { s: { name: 'partner backup' } })), 'CONFLICT');
      assert.deepEqual(await rowCounts(t), before);
    });

    it('createPartnerSubscription with the partner’s own service and with the vendor’s; partnerSubscriptions lists them', async () => {
      const own = ok(await tq(t, admin.token, CREATE_SERVICE, { s: { name: 'Partner SOC' } }), 'createService');
      let audits = await auditCount(t);
      const s1 = ok(
        await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'SOC Basic', description: 'basic' } }),
        'createPartnerSubscription',
      );
      assert.equal(await auditCount(t), ++audits);
      const s2 = ok(
        await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: vendorService.id, name: 'MDR Resale' } }),
        'createPartnerSubscription',
      );
      assert.equal(await auditCount(t), ++audits);
      assert.deepEqual(
        { ...s1, id: undefined },
        {
          id: undefined,
          service_id: own.id,
          name: 'SOC Basic',
          description: 'basic',
          created_at: t.clock.now().toISOString(),
          updated_at: t.clock.now().toISOString(),
          partner_tenant_id: partner,
          retired_at: null,
        },
      );
      assert.equal(s2.service_id, vendorService.id);
      const list = ok<any[]>(await tq(t, admin.token, SUBSCRIPTIONS, {}), 'partnerSubscriptions');
      assert.ok(list.some((s) => s.id === s1.id) && list.some((s) => s.id === s2.id));

      // another partner's service is not available (NOT_FOUND), a live name twice is CONFLICT, an
      // Analyst of the partner reads but cannot create (FORBIDDEN): none of them writes anything
      const other = await createTenant(t, '1', { isPartner: true });
      const otherService = ok(await tq(t, root, CREATE_SERVICE, { s: { name: 'Other Thing', owner_tenant_id: other } }), 'createService');
      const analyst = await clientWithRoles(t, partner, [ROLE_IDS.Analyst]);
      const before = await rowCounts(t);
      assert.equal(code(await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: otherService.id, name: 'Stolen' } })), 'NOT_FOUND');
      assert.equal(code(await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'soc basic' } })), 'CONFLICT');
      assert.equal(code(await tq(t, analyst.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'By Analyst' } })), 'FORBIDDEN');
      assert.ok(ok<any[]>(await tq(t, analyst.token, SUBSCRIPTIONS, { p: partner }), 'partnerSubscriptions').length >= 2);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('assignSubscription gives it to a child (Tenant.services and partnership.subscriptions show it); twice is a no-op; unassign removes it', async () => {
      const child = await createTenant(t, partner);
      const own = ok(await tq(t, admin.token, CREATE_SERVICE, { s: { name: 'Assignable' } }), 'createService');
      const sub = ok(
        await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'Assignable Plan' } }),
        'createPartnerSubscription',
      );
      const vendorSub = ok(
        await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: vendorService.id, name: 'MDR Plan' } }),
        'createPartnerSubscription',
      );
      let audits = await auditCount(t);

      t.clock.advance(1000);
      const assigned = ok(await tq(t, admin.token, ASSIGN, { t: child, s: sub.id }), 'assignSubscription');
      assert.equal(await auditCount(t), ++audits);
      assert.equal(assigned.updated_at, t.clock.now().toISOString());
      assert.deepEqual(assigned.services, [{ id: own.id, name: 'Assignable', owner_tenant_id: partner }]);
      assert.deepEqual(assigned.partnership.subscriptions, [
        { id: sub.id, name: 'Assignable Plan', service_id: own.id, partner_tenant_id: partner, retired_at: null },
      ]);
      const assignedAt = assigned.updated_at;

      // twice: no-op, no audit row, updated_at stays
      t.clock.advance(1000);
      const before = await state(t);
      const again = ok(await tq(t, admin.token, ASSIGN, { t: child, s: sub.id }), 'assignSubscription');
      assert.equal(again.updated_at, assignedAt);
      assert.equal(again.partnership.subscriptions.length, 1);
      assert.deepEqual(await state(t), before);

      const both = ok(await tq(t, admin.token, ASSIGN, { t: child, s: vendorSub.id }), 'assignSubscription');
      assert.equal(await auditCount(t), ++audits);
      assert.deepEqual(both.services.map((s: any) => s.id).sort(), [own.id, vendorService.id].sort());
      assert.deepEqual(both.partnership.subscriptions.map((s: any) => s.id).sort(), [sub.id, vendorSub.id].sort());
      const search = await tq(t, admin.token, `{ tenants(tenantsQuery: {withPartnerSubscription: "mdr%"}) { results { id } } }`);
      assert.deepEqual(search.body.data.tenants.results, [{ id: child }]);

      t.clock.advance(1000);
      const removed = ok(await tq(t, admin.token, UNASSIGN, { t: child, s: vendorSub.id }), 'unassignSubscription');
      assert.equal(await auditCount(t), ++audits);
      assert.equal(removed.updated_at, t.clock.now().toISOString());
      assert.deepEqual(removed.services, [{ id: own.id, name: 'Assignable', owner_tenant_id: partner }]);
      assert.deepEqual(
        removed.partnership.subscriptions.map((s: any) => s.id),
        [sub.id],
      );
    });

    it('refuses assigning to the partner itself or outside its subtree (BAD_USER_INPUT), and another partner’s subscription (NOT_FOUND)', async () => {
      const child = await createTenant(t, partner);
      const own = ok(await tq(t, admin.token, CREATE_SERVICE, { s: { name: 'Scoped' } }), 'createService');
      const sub = ok(await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'Scoped Plan' } }), 'createPartnerSubscription');
      const other = await createTenant(t, '1', { isPartner: true });
      const outside = await createTenant(t, other);
      const otherAdmin = await clientWithRoles(t, other, [ROLE_IDS.Administrator]);
      const otherService = ok(await tq(t, otherAdmin.token, CREATE_SERVICE, { s: { name: 'Other Service' } }), 'createService');
      const otherSub = ok(
        await tq(t, otherAdmin.token, CREATE_SUBSCRIPTION, { s: { service_id: otherService.id, name: 'Other Plan' } }),
        'createPartnerSubscription',
      );

      const before = await state(t);
      assert.equal(code(await tq(t, admin.token, ASSIGN, { t: partner, s: sub.id })), 'BAD_USER_INPUT');
      // the root admin sees both sides, so the subtree rule is what refuses
      assert.equal(code(await tq(t, root, ASSIGN, { t: outside, s: sub.id })), 'BAD_USER_INPUT');
      assert.equal(code(await tq(t, root, ASSIGN, { t: '1', s: sub.id })), 'BAD_USER_INPUT');
      // the partner admin cannot see the other partner's child at all
      assert.equal(code(await tq(t, admin.token, ASSIGN, { t: outside, s: sub.id })), 'NOT_FOUND');
      // another partner's subscription does not exist for this partner
      const foreign = await tq(t, admin.token, ASSIGN, { t: child, s: otherSub.id });
      const missing = await tq(t, admin.token, ASSIGN, { t: child, s: '00000000-0000-4000-8000-000000000000' });
      assert.equal(code(foreign), 'NOT_FOUND');
      assert.equal(code(missing), 'NOT_FOUND');
      assert.equal(foreign.body.errors[0].message, missing.body.errors[0].message);
      assert.equal(code(await tq(t, admin.token, UNASSIGN, { t: child, s: otherSub.id })), 'NOT_FOUND');
      assert.equal(code(await tq(t, admin.token, RETIRE, { id: otherSub.id })), 'NOT_FOUND');
      assert.equal(code(await tq(t, admin.token, SUBSCRIPTIONS, { p: other })), 'NOT_FOUND');
      assert.deepEqual(await state(t), before);
    });

    it('retirePartnerSubscription: hidden unless includeRetired, no longer assignable, kept by tenants that have it', async () => {
      const child = await createTenant(t, partner);
      const second = await createTenant(t, partner);
      const own = ok(await tq(t, admin.token, CREATE_SERVICE, { s: { name: 'Legacy' } }), 'createService');
      const sub = ok(await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'Legacy Plan' } }), 'createPartnerSubscription');
      ok(await tq(t, admin.token, ASSIGN, { t: child, s: sub.id }), 'assignSubscription');
      let audits = await auditCount(t);

      t.clock.advance(1000);
      const retired = ok(await tq(t, admin.token, RETIRE, { id: sub.id }), 'retirePartnerSubscription');
      assert.equal(await auditCount(t), ++audits);
      assert.equal(retired.retired_at, t.clock.now().toISOString());
      assert.equal(retired.updated_at, t.clock.now().toISOString());

      const live = ok<any[]>(await tq(t, admin.token, SUBSCRIPTIONS, {}), 'partnerSubscriptions');
      assert.ok(!live.some((s) => s.id === sub.id));
      const all = ok<any[]>(await tq(t, admin.token, SUBSCRIPTIONS, { r: true }), 'partnerSubscriptions');
      assert.deepEqual(all.find((s) => s.id === sub.id)?.retired_at, t.clock.now().toISOString());

      const before = await state(t);
      assert.equal(code(await tq(t, admin.token, ASSIGN, { t: second, s: sub.id })), 'BAD_USER_INPUT');
      assert.deepEqual(await state(t), before);
      // the tenant that had it keeps it, and it shows as retired
      const kept = (await tq(t, admin.token, READ_TENANT, { id: child })).body.data.tenants.results[0];
      assert.deepEqual(
        kept.partnership.subscriptions.map((s: any) => [s.id, s.retired_at]),
        [[sub.id, t.clock.now().toISOString()]],
      );
      // its name is free again for a live subscription
      ok(await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'Legacy Plan' } }), 'createPartnerSubscription');
      // unassigning a retired subscription is still allowed
      const gone = ok(await tq(t, admin.token, UNASSIGN, { t: child, s: sub.id }), 'unassignSubscription');
      assert.deepEqual(gone.partnership.subscriptions, []);
    });

    it('refuses Analysts with FORBIDDEN, writing nothing, and lets Operations assign', async () => {
      const child = await createTenant(t, partner);
      const own = ok(await tq(t, admin.token, CREATE_SERVICE, { s: { name: 'Guarded' } }), 'createService');
      const sub = ok(await tq(t, admin.token, CREATE_SUBSCRIPTION, { s: { service_id: own.id, name: 'Guarded Plan' } }), 'createPartnerSubscription');
      const analyst = await clientWithRoles(t, partner, [ROLE_IDS.Analyst]);
      const before = await state(t);
      assert.equal(code(await tq(t, analyst.token, CREATE_SERVICE, { s: { name: 'By Analyst' } })), 'FORBIDDEN');
      assert.equal(code(await tq(t, analyst.token, ASSIGN, { t: child, s: sub.id })), 'FORBIDDEN');
      assert.equal(code(await tq(t, analyst.token, RETIRE, { id: sub.id })), 'FORBIDDEN');
      assert.deepEqual(await state(t), before);
      // Operations manages any partner's subscriptions
      const ops = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
      const byOps = ok(await tq(t, ops.token, ASSIGN, { t: child, s: sub.id }), 'assignSubscription');
      assert.deepEqual(
        byOps.partnership.subscriptions.map((s: any) => s.id),
        [sub.id],
      );
    });
  });
}
