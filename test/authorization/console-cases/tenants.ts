// The tenant pages (src/http/pages/console/tenants.ts, tenant-forms.ts) in the page matrix. As in
// matrix-table.ts: operations checked in the tenant act on C1; operations checked in a partner
// (createTenant, services, subscriptions, label ownership) act on P1; labels are put on C1 in
// the name of P1. A GET form page is tied to the row of the change it offers.
import assert from 'node:assert/strict';
import type { PageCase, PageWorld, State } from './types.js';

const DAY_MS = 86_400_000;
const TENANT = { iface: 'tenant' } as const;

/** C1 (or another tenant) as the tenant interface reads it, as the root Administrator. */
async function tenantOf(w: PageWorld, id: string): Promise<any> {
  const d = await w.gql(
    `query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids}) { results { id name domain description allow_response_actions actions_approver
      expires_at support_enabled support_reason enabled_in_production enabled_in_pilot
      labels { id name value restricted owner_partner_tenant_id } partnership { subscriptions { id } } } } }`,
    { ids: [id] },
    TENANT,
  );
  return d.tenants.results[0];
}

/** A datetime-local value (UTC) `days` from the world's now. */
const inDays = (w: PageWorld, days: number) => new Date(w.t.clock.now().getTime() + days * DAY_MS).toISOString().slice(0, 16);

/** C1 enabled everywhere it was before a disabling case, without an expiry (what a case expects to find). */
async function resetC1(w: PageWorld): Promise<State> {
  await w.gql(
    'mutation($id: ID!) { updateTenant(tenantID: $id, tenantUpdate: {environments: [{name: "echo", enabled: true}], clearExpiration: true}) { id } }',
    { id: w.C1 },
    TENANT,
  );
  return {};
}

/** A label of P1 on C1 (restricted or not), made by the root Administrator. */
async function labelOnC1(w: PageWorld, restricted = false): Promise<State> {
  const d = await w.gql(
    'mutation($id: ID!, $l: InputTenantLabel!) { createTenantLabel(tenant_id: $id, label_input: $l) { id name } }',
    { id: w.C1, l: { name: w.unique('label'), value: 'v', owner_partner_tenant_id: w.P1, ...(restricted ? { restricted: true } : {}) } },
    TENANT,
  );
  return { label: d.createTenantLabel };
}

/** A service of P1, and a partner subscription of it (assigned to C1 if asked). */
async function subscriptionOfP1(w: PageWorld, assignTo?: string): Promise<State> {
  const s = await w.gql(
    'mutation($s: InputService!) { createService(service_input: $s) { id } }',
    { s: { name: w.unique('service'), owner_tenant_id: w.P1 } },
    TENANT,
  );
  const sub = await w.gql(
    'mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { id name } }',
    { s: { service_id: s.createService.id, name: w.unique('sub'), partner_tenant_id: w.P1 } },
    TENANT,
  );
  const id = sub.createPartnerSubscription.id as string;
  if (assignTo)
    await w.gql('mutation($t: ID!, $s: ID!) { assignSubscription(tenant_id: $t, subscription_id: $s) { id } }', { t: assignTo, s: id }, TENANT);
  return { service: s.createService.id, sub: id, subName: sub.createPartnerSubscription.name };
}

/** The POST of one updateTenant field, in the part of the edit form it belongs to. */
function updateCase(
  field: string,
  o: {
    prepare?: (w: PageWorld) => Promise<State>;
    form: (w: PageWorld, s: State) => Record<string, string>;
    check: (w: PageWorld, s: State, c1: any) => void | Promise<void>;
  },
): PageCase {
  return {
    route: 'POST /console/tenant/edit',
    row: `updateTenant(${field})`,
    ...(o.prepare ? { prepare: o.prepare } : {}),
    request: (w, s) => ({ path: '/console/tenant/edit', form: { tenant: w.C1, ...o.form(w, s) } }),
    effect: async (w, s) => o.check(w, s, await tenantOf(w, w.C1)),
  };
}

const profile = (form: Record<string, string>) => ({ part: 'profile', ...form });
const limits = (form: Record<string, string>) => ({ part: 'limits', ...form });

export const TENANT_CASES: PageCase[] = [
  // reading
  {
    route: 'GET /console/tenant',
    row: 'tenants',
    request: (w) => ({ path: `/console/tenant?tenant=${w.C1}` }),
    effect: async (w, _s, res) => assert.match(res.text, new RegExp(`<p class="lead">Tenant <strong>[^<]+</strong>, id ${w.C1}[,.]`)),
  },
  {
    route: 'GET /console/tenants',
    row: 'tenants',
    request: (w) => ({ path: `/console/tenants?tenant=${w.C1}&ids=${w.C1}` }),
    effect: async (w, _s, res) => assert.match(res.text, new RegExp(`<td data-label="Id">${w.C1}</td>`)),
    hidden: (w, _s, res) => !res.text.includes(`<td data-label="Id">${w.C1}</td>`),
  },
  {
    route: 'GET /console/tenant/offerings',
    row: 'partnerSubscriptions',
    prepare: (w) => subscriptionOfP1(w),
    request: (w) => ({ path: `/console/tenant/offerings?tenant=${w.P1}` }),
    effect: async (_w, s, res) => assert.ok(res.text.includes(s.subName), 'the partner subscription is listed'),
  },

  // createTenant
  {
    route: 'GET /console/tenant/new',
    row: 'createTenant',
    request: (w) => ({ path: `/console/tenant/new?tenant=${w.P1}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/tenant\/new"/),
  },
  {
    route: 'POST /console/tenant/new',
    row: 'createTenant',
    prepare: async (w) => ({ name: w.unique('child') }),
    request: (w, s) => ({ path: '/console/tenant/new', form: { tenant: w.P1, name: s.name, env_echo: 'yes' } }),
    effect: async (w, s) => {
      const d = await w.gql(
        'query($p: ID, $n: String) { tenants(tenantsQuery: {partnership: {parent: $p}, name: $n}) { count } }',
        { p: w.P1, n: s.name },
        TENANT,
      );
      assert.equal(d.tenants.count, 1);
    },
  },
  {
    route: 'POST /console/tenant/new',
    row: 'createTenant(isPartner)',
    prepare: async (w) => ({ name: w.unique('partner') }),
    request: (w, s) => ({ path: '/console/tenant/new', form: { tenant: w.P1, name: s.name, env_echo: 'yes', is_partner: 'yes' } }),
    effect: async (w, s) => {
      const d = await w.gql(
        'query($p: ID, $n: String) { tenants(tenantsQuery: {partnership: {parent: $p}, name: $n}) { results { partnership { is_partner } } } }',
        { p: w.P1, n: s.name },
        TENANT,
      );
      assert.equal(d.tenants.results[0]?.partnership.is_partner, true);
    },
  },

  // updateTenant: the profile (checked in C1) and the limits (checked in its parent P1)
  {
    route: 'GET /console/tenant/edit',
    row: 'updateTenant(name)',
    request: (w) => ({ path: `/console/tenant/edit?tenant=${w.C1}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /name="part" value="profile"/),
  },
  updateCase('name', {
    prepare: async (w) => ({ v: w.unique('renamed') }),
    form: (_w, s) => profile({ name: s.v }),
    check: (_w, s, c1) => assert.equal(c1.name, s.v),
  }),
  updateCase('domain', {
    prepare: async (w) => ({ v: `${w.unique('d')}.example.com`.toLowerCase() }),
    form: (_w, s) => profile({ domain: s.v }),
    check: (_w, s, c1) => assert.equal(c1.domain, s.v),
  }),
  updateCase('description', {
    prepare: async (w) => ({ v: w.unique('description') }),
    form: (_w, s) => profile({ description: s.v }),
    check: (_w, s, c1) => assert.equal(c1.description, s.v),
  }),
  updateCase('allow_response_actions', {
    prepare: async (w) => ({ v: !(await tenantOf(w, w.C1)).allow_response_actions }),
    form: (_w, s) => profile({ allow_response_actions: s.v ? 'yes' : 'no' }),
    check: (_w, s, c1) => assert.equal(c1.allow_response_actions, s.v),
  }),
  updateCase('actions_approver', {
    prepare: async (w) => ({ v: `${w.unique('approver')}@example.com` }),
    form: (_w, s) => profile({ actions_approver: s.v }),
    check: (_w, s, c1) => assert.equal(c1.actions_approver, s.v),
  }),
  updateCase('environments', {
    prepare: async (w) => ({ v: !(await tenantOf(w, w.C1)).enabled_in_pilot }),
    form: (_w, s) => limits({ env_pilot: s.v ? 'on' : 'off' }),
    check: (_w, s, c1) => assert.equal(c1.enabled_in_pilot, s.v),
  }),
  updateCase('disable', {
    prepare: resetC1,
    form: () => limits({ disable: 'yes' }),
    check: async (w, _s, c1) => {
      assert.equal(c1.enabled_in_production || c1.enabled_in_pilot, false);
      await resetC1(w); // C1 enabled again for the actors and cases after it
    },
  }),
  updateCase('expiresAt', {
    prepare: async (w) => ({ ...(await resetC1(w)), v: inDays(w, 30) }),
    form: (_w, s) => limits({ expires_at: s.v }),
    check: (_w, s, c1) => assert.equal(new Date(c1.expires_at).toISOString().slice(0, 16), s.v),
  }),
  updateCase('clearExpiration', {
    prepare: async (w) => {
      await w.gql(
        'mutation($id: ID!, $e: Time) { updateTenant(tenantID: $id, tenantUpdate: {expiresAt: $e}) { id } }',
        { id: w.C1, e: `${inDays(w, 30)}:00Z` },
        TENANT,
      );
      return {};
    },
    form: () => limits({ clear_expiration: 'yes' }),
    check: (_w, _s, c1) => assert.equal(c1.expires_at, null),
  }),

  // support access
  {
    route: 'GET /console/tenant/support',
    row: 'enableTenantSupport',
    request: (w) => ({ path: `/console/tenant/support?tenant=${w.C1}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/tenant\/support"/),
  },
  {
    route: 'POST /console/tenant/support',
    row: 'enableTenantSupport',
    prepare: async (w) => {
      await w.gql('mutation($id: ID!) { disableTenantSupport(tenantID: $id) { id } }', { id: w.C1 }, TENANT);
      return { reason: w.unique('ticket') };
    },
    request: (w, s) => ({ path: '/console/tenant/support', form: { tenant: w.C1, action: 'enable', until: inDays(w, 7), reason: s.reason } }),
    effect: async (w, s) => {
      const c1 = await tenantOf(w, w.C1);
      assert.equal(c1.support_enabled, true);
      assert.equal(c1.support_reason, s.reason);
    },
  },
  {
    route: 'POST /console/tenant/support',
    row: 'disableTenantSupport',
    prepare: async (w) => {
      await w.gql('mutation($id: ID!) { enableTenantSupport(tenantID: $id) { id } }', { id: w.C1 }, TENANT);
      return {};
    },
    request: (w) => ({ path: '/console/tenant/support', form: { tenant: w.C1, action: 'disable' } }),
    effect: async (w) => assert.equal((await tenantOf(w, w.C1)).support_enabled, false),
  },

  // labels: on C1, owned by P1
  {
    route: 'GET /console/tenant/labels',
    row: 'tenants',
    prepare: (w) => labelOnC1(w),
    request: (w) => ({ path: `/console/tenant/labels?tenant=${w.C1}` }),
    effect: async (_w, s, res) => assert.ok(res.text.includes(s.label.name), 'the label is listed'),
  },
  {
    route: 'POST /console/tenant/labels',
    row: 'createTenantLabel',
    prepare: async (w) => ({ name: w.unique('label') }),
    request: (w, s) => ({ path: '/console/tenant/labels', form: { tenant: w.C1, action: 'create', name: s.name, value: 'v', owner: w.P1 } }),
    effect: async (w, s) => {
      const label = (await tenantOf(w, w.C1)).labels.find((l: { name: string }) => l.name === s.name);
      assert.equal(label?.owner_partner_tenant_id, w.P1);
      assert.equal(label?.restricted, false);
    },
  },
  {
    route: 'POST /console/tenant/labels',
    row: 'createTenantLabel(restricted)',
    prepare: async (w) => ({ name: w.unique('label') }),
    request: (w, s) => ({
      path: '/console/tenant/labels',
      form: { tenant: w.C1, action: 'create', name: s.name, value: 'v', owner: w.P1, restricted: 'yes' },
    }),
    effect: async (w, s) => {
      const label = (await tenantOf(w, w.C1)).labels.find((l: { name: string }) => l.name === s.name);
      assert.equal(label?.restricted, true);
    },
  },
  ...[false, true].flatMap((restricted): PageCase[] => [
    {
      route: 'POST /console/tenant/labels',
      row: restricted ? 'updateTenantLabel(restricted label)' : 'updateTenantLabel',
      prepare: async (w) => ({ ...(await labelOnC1(w, restricted)), v: w.unique('value') }),
      request: (w, s) => ({
        path: '/console/tenant/labels',
        form: { tenant: w.C1, action: 'update', label: s.label.id, name: s.label.name, value: s.v },
      }),
      effect: async (w, s) => {
        const label = (await tenantOf(w, w.C1)).labels.find((l: { id: string }) => l.id === s.label.id);
        assert.equal(label?.value, s.v);
      },
    },
    {
      route: 'POST /console/tenant/labels',
      row: restricted ? 'deleteTenantLabel(restricted label)' : 'deleteTenantLabel',
      prepare: (w) => labelOnC1(w, restricted),
      request: (w, s) => ({ path: '/console/tenant/labels', form: { tenant: w.C1, action: 'delete', label: s.label.id } }),
      effect: async (w, s) =>
        assert.equal(
          (await tenantOf(w, w.C1)).labels.some((l: { id: string }) => l.id === s.label.id),
          false,
        ),
    },
  ]),

  // subscriptions: P1's, assigned to C1
  {
    route: 'GET /console/tenant/subscriptions',
    row: 'tenants',
    prepare: (w) => subscriptionOfP1(w, w.C1),
    request: (w) => ({ path: `/console/tenant/subscriptions?tenant=${w.C1}` }),
    effect: async (_w, s, res) => assert.ok(res.text.includes(s.subName), 'the assigned subscription is listed'),
  },
  {
    route: 'POST /console/tenant/subscriptions',
    row: 'assignSubscription',
    prepare: (w) => subscriptionOfP1(w),
    request: (w, s) => ({ path: '/console/tenant/subscriptions', form: { tenant: w.C1, action: 'assign', subscription: s.sub } }),
    effect: async (w, s) => assert.ok((await tenantOf(w, w.C1)).partnership.subscriptions.some((x: { id: string }) => x.id === s.sub)),
  },
  {
    route: 'POST /console/tenant/subscriptions',
    row: 'unassignSubscription',
    prepare: (w) => subscriptionOfP1(w, w.C1),
    request: (w, s) => ({ path: '/console/tenant/subscriptions', form: { tenant: w.C1, action: 'unassign', subscription: s.sub } }),
    effect: async (w, s) => assert.ok(!(await tenantOf(w, w.C1)).partnership.subscriptions.some((x: { id: string }) => x.id === s.sub)),
  },

  // a partner's services and partner subscriptions (P1)
  {
    route: 'POST /console/tenant/offerings',
    row: 'createService',
    prepare: async (w) => ({ name: w.unique('service') }),
    request: (w, s) => ({ path: '/console/tenant/offerings', form: { tenant: w.P1, action: 'service', service_name: s.name } }),
    effect: async (w, s) => {
      const d = await w.gql('query($p: ID) { services(partner_tenant_id: $p) { name } }', { p: w.P1 }, TENANT);
      assert.ok(d.services.some((x: { name: string }) => x.name === s.name));
    },
  },
  {
    route: 'POST /console/tenant/offerings',
    row: 'createPartnerSubscription',
    prepare: async (w) => ({ ...(await subscriptionOfP1(w)), name: w.unique('sub') }),
    request: (w, s) => ({ path: '/console/tenant/offerings', form: { tenant: w.P1, action: 'subscription', service: s.service, sub_name: s.name } }),
    effect: async (w, s) => {
      const d = await w.gql('query($p: ID) { partnerSubscriptions(partner_tenant_id: $p) { name } }', { p: w.P1 }, TENANT);
      assert.ok(d.partnerSubscriptions.some((x: { name: string }) => x.name === s.name));
    },
  },
  {
    route: 'POST /console/tenant/offerings',
    row: 'retirePartnerSubscription',
    prepare: (w) => subscriptionOfP1(w),
    request: (w, s) => ({ path: '/console/tenant/offerings', form: { tenant: w.P1, action: 'retire', subscription: s.sub } }),
    effect: async (w, s) => {
      const d = await w.gql(
        'query($p: ID) { partnerSubscriptions(partner_tenant_id: $p, includeRetired: true) { id retired_at } }',
        { p: w.P1 },
        TENANT,
      );
      assert.ok(d.partnerSubscriptions.find((x: { id: string }) => x.id === s.sub)?.retired_at);
    },
  },
];
