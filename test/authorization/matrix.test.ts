// The authorization matrix (docs/authorization.md; security-tests.md J 108-113): every Query and
// Mutation field of both GraphQL interfaces, as every kind of caller, against the checked-in table
// in matrix-table.ts. A denial must carry the table's exact code and write nothing; an allowed
// call must take effect. A field without a row fails (deny by default). Then the cross-tenant
// attempts one by one, and nested traversal never listing a tenant the caller cannot see.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GraphQLInputObjectType, GraphQLObjectType } from 'graphql';
import { sql, type RawBuilder } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { emailKey } from '../../src/users/model.js';
import { credentialSchema } from '../../src/graphql/credential/schema.js';
import { tenantSchema } from '../../src/graphql/tenant/schema.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { ROOT_CLIENT_ID, startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { countRowWrites, rowWrites } from '../helpers/row-writes.js';
import { clientWithRoles, CREATE_CLIENT, createClient, type SeededClient } from '../helpers/seed.js';
import { createTenant, TENANT_PATH } from '../helpers/tenants.js';
import { ACTORS, parseTable, TENANT_UPDATE_FIELDS, type ActorName, type Outcome } from './matrix-table.js';

const EXPECTED = parseTable();
const { Administrator, Analyst, Responder, Auditor, Operations, Support } = ROLE_IDS;
const DAY_MS = 86_400_000;

// ---------------------------------------------------------------------------------------------
// The world: one hierarchy and one client per actor, built once per engine.

interface Actor {
  name: string;
  token: string | undefined;
  client?: SeededClient;
  /** for the visibility oracle: home tenant, tenants whose subtree a role reaches, Support staff */
  home: string;
  roleTenants: string[];
  support: boolean;
}

interface World {
  t: TestApp;
  /** an IdP whose metadata URL the SSO connections are configured by */
  idp: TestIdp;
  /** the DNS the SSO domain checks ask (loopback; it knows no record: every check finds NXDOMAIN) */
  dns: TestDnsServer;
  root: string;
  P1: string;
  C1: string;
  C2: string;
  P2: string;
  D1: string;
  NP: string;
  NC: string;
  vendorService: string;
  p1Service: string;
  p2Service: string;
  p1Sub: string;
  p2Sub: string;
  actors: Record<ActorName, Actor>;
  npAdmin: Actor;
  c2Client: SeededClient;
}

let seq = 0;
const unique = (prefix: string) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

/** data of a call that must succeed */
function data(res: Response): any {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.errors, undefined, res.text);
  return res.body.data;
}

const tenantCall = (w: World, token: string | undefined, doc: string, variables?: Record<string, unknown>, tenant?: string) =>
  w.t.gql(token, doc, variables, { path: TENANT_PATH, ...(tenant ? { tenant } : {}) });
const credCall = (w: World, token: string | undefined, doc: string, variables?: Record<string, unknown>, tenant?: string) =>
  w.t.gql(token, doc, variables, tenant ? { tenant } : {});

async function rows(w: World, query: RawBuilder<unknown>): Promise<any[]> {
  return (await query.execute(w.t.db.kysely)).rows as any[];
}
async function tenantRow(w: World, id: string): Promise<any> {
  return (await rows(w, sql`select * from tenants where id = ${id}`))[0];
}

/** what a refused mutation must leave as it was: test/helpers/row-writes.ts */
const fingerprint = (w: World) => rowWrites(w.t.db.kysely);

async function auditCount(w: World): Promise<Record<string, number>> {
  const [row] = await rows(w, sql`select count(*)::int as n from audit_events`);
  return { audit_events: Number(row.n) };
}

async function setSupport(w: World, c1: boolean, p1: boolean): Promise<void> {
  await sql`update tenants set support_enabled = ${c1}, support_expires_at = null where id = ${w.C1}`.execute(w.t.db.kysely);
  await sql`update tenants set support_enabled = ${p1}, support_expires_at = null where id = ${w.P1}`.execute(w.t.db.kysely);
}

// GraphQL documents
const Q = {
  ssoConnections: `{ ssoConnections { id tenantID } }`,
  // C1's SSO events (its trail holds more than a page: every refused cell writes one)
  auditEvents: `{ auditEvents(first: 500, filter: { action: "sso.created" }) { events { tenantID action targetID } } }`,
  ssoConnection: `query($id: ID!) { ssoConnection(connectionID: $id) { id tenantID } }`,
  ssoConfig: `query($c: String) { getSSOConnectionConfig(cert: $c) { subject } }`,
  createSso: `mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }`,
  updateSso: `mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { id } }`,
  deleteSso: `mutation($id: ID!) { deleteSSOConnection(connectionID: $id) { id } }`,
  refreshSso: `mutation($id: ID!) { refreshSSOConnectionMetadata(connectionID: $id) { id } }`,
  checkDomain: `mutation($id: ID!, $d: String!) { checkSSODomain(connectionID: $id, domain: $d) { id } }`,
  regenerateDomain: `mutation($id: ID!, $d: String!) { regenerateSSODomainChallenge(connectionID: $id, domain: $d) { id } }`,
  tenants: `query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids, pageNum: 1}) { count totalCount results { id } } }`,
  partnerSubscriptions: `query($p: ID) { partnerSubscriptions(partner_tenant_id: $p) { id partner_tenant_id } }`,
  services: `query($p: ID) { services(partner_tenant_id: $p) { id owner_tenant_id } }`,
  createTenant: `mutation($t: TenantCreateInput!) { createTenant(newTenant: $t) { id partnership { parent is_partner } } }`,
  updateTenant: `mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { id } }`,
  enableSupport: `mutation($id: ID!) { enableTenantSupport(tenantID: $id) { id support_enabled } }`,
  disableSupport: `mutation($id: ID!) { disableTenantSupport(tenantID: $id) { id support_enabled } }`,
  createLabel: `mutation($id: ID!, $l: InputTenantLabel!) { createTenantLabel(tenant_id: $id, label_input: $l) { id tenant_id owner_partner_tenant_id restricted } }`,
  updateLabel: `mutation($id: ID!, $l: InputTenantLabel!) { updateTenantLabel(label_id: $id, label_input: $l) { id name } }`,
  deleteLabel: `mutation($id: ID!) { deleteTenantLabel(label_id: $id) { id } }`,
  assign: `mutation($t: ID!, $s: ID!) { assignSubscription(tenant_id: $t, subscription_id: $s) { id } }`,
  unassign: `mutation($t: ID!, $s: ID!) { unassignSubscription(tenant_id: $t, subscription_id: $s) { id } }`,
  createService: `mutation($s: InputService!) { createService(service_input: $s) { id owner_tenant_id } }`,
  createSub: `mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { id partner_tenant_id } }`,
  retireSub: `mutation($id: ID!) { retirePartnerSubscription(subscription_id: $id) { id retired_at } }`,
  clients: `query($ids: [String], $tenantIDs: [ID]) { clients(clientIDs: $ids, tenantIDs: $tenantIDs) { id tenant_id } }`,
  createClient: CREATE_CLIENT,
  rotate: `mutation($id: ID!, $s: String) { rotateClientSecret(id: $id, secret: $s) { client { id } client_secret } }`,
  forceRotate: `mutation($id: ID!) { forceRotateClientSecret(id: $id) { client { id } client_secret } }`,
  deleteClient: `mutation($id: ID!) { deleteClient(id: $id) { id revoked_at } }`,
  users: `query($e: String) { users(email: $e) { id tenant_id } }`,
  me: '{ me { kind id tenant_id client_id } }',
  roles: '{ roles { id name vendor_only assignable } }',
  user: `query($id: ID!) { user(id: $id) { id email } }`,
  createUser: `mutation($e: String!) { createUser(email: $e) { user { id roles } setup_url } }`,
  assignUserRole: `mutation($u: ID!, $r: ID!) { assignUserRole(user_id: $u, role_id: $r) { id } }`,
  removeUserRole: `mutation($u: ID!, $a: ID!) { removeUserRole(user_id: $u, assignment_id: $a) { id } }`,
  disableUser: `mutation($id: ID!) { disableUser(id: $id) { id status } }`,
  enableUser: `mutation($id: ID!) { enableUser(id: $id) { id status } }`,
  resetUserSignIn: `mutation($id: ID!) { resetUserSignIn(id: $id) { user { id } setup_url } }`,
  unlockUserSignIn: `mutation($id: ID!) { unlockUserSignIn(id: $id) { id } }`,
  deleteUser: `mutation($id: ID!) { deleteUser(id: $id) { id } }`,
};

/** A user whose home is C1 (Analyst there), made by the vendor Administrator. */
async function freshUser(w: World, opts: { disabled?: boolean } = {}): Promise<{ id: string; email: string; assignment: string }> {
  const email = `${unique('user')}@example.com`;
  const d = data(
    await credCall(w, w.root, `mutation($e: String!) { createUser(email: $e) { user { id role_assignments { id } } } }`, { e: email }, w.C1),
  );
  const user = d.createUser.user;
  if (opts.disabled) data(await credCall(w, w.root, Q.disableUser, { id: user.id }, w.C1));
  return { id: user.id, email, assignment: user.role_assignments[0].id };
}

/** The target user, and for the `self` column the client whose token calls. */
async function userTarget(w: World, actor: ActorName, opts: { disabled?: boolean } = {}): Promise<State> {
  return { ...(actor === 'self' ? { self: await freshClient(w, true) } : {}), user: await freshUser(w, opts) };
}

async function userRow(w: World, id: string): Promise<any> {
  return (await rows(w, sql`select * from users where id = ${id}`))[0];
}

// fresh objects, made by the vendor Administrator
async function freshLabel(w: World, restricted: boolean, tenant = w.C1, owner = w.P1): Promise<string> {
  const d = data(
    await tenantCall(w, w.root, Q.createLabel, { id: tenant, l: { name: unique('label'), value: 'v', owner_partner_tenant_id: owner, restricted } }),
  );
  return d.createTenantLabel.id;
}
async function freshSubscription(w: World, assignTo?: string): Promise<string> {
  const d = data(await tenantCall(w, w.root, Q.createSub, { s: { service_id: w.p1Service, name: unique('sub'), partner_tenant_id: w.P1 } }));
  const id = d.createPartnerSubscription.id as string;
  if (assignTo) data(await tenantCall(w, w.root, Q.assign, { t: assignTo, s: id }));
  return id;
}
async function freshClient(w: World, withToken = false): Promise<SeededClient & { token?: string }> {
  const c = await createClient(w.t, w.root, unique('victim'), { roles: [Auditor], tenant: w.C1 });
  return withToken ? { ...c, token: await w.t.token(c.clientId, c.secret) } : c;
}
async function reenableC1(w: World): Promise<void> {
  if ((await tenantRow(w, w.C1)).enabled) return;
  data(await tenantCall(w, w.root, Q.updateTenant, { id: w.C1, u: { environments: [{ name: 'echo', enabled: true }] } }));
}

// ---------------------------------------------------------------------------------------------
// The operations: one per table row. `field` is the schema field it exercises.

type Send = (doc: string, variables?: Record<string, unknown>) => Promise<Response>;
type State = Record<string, any>;

interface Op {
  row: string;
  iface: 'tenant' | 'credential';
  /** a tenant-interface operation that acts in C1 through X-Tenant-Context (the SSO operations) */
  inC1?: boolean;
  field: string;
  mutation: boolean;
  /** C1's support_enabled before the call, when the operation needs a particular one */
  supportC1?: (actor: ActorName) => boolean;
  prepare?: (w: World, actor: ActorName) => Promise<State>;
  run: (w: World, s: State, send: Send) => Promise<Response>;
  /** lists: the target is left out (the NOT_FOUND of a list) */
  hidden?: (res: Response, w: World, s: State) => boolean;
  /** the call took effect */
  effect: (w: World, s: State, res: Response) => Promise<void>;
  cleanup?: (w: World, s: State) => Promise<void>;
}

const neverAllowed = async () => assert.fail('the table allows no one this');

const UPDATE_CASES: Record<
  string,
  Pick<Op, 'cleanup'> & {
    prepare?: (w: World) => Promise<State>;
    input: (s: State) => Record<string, unknown>;
    check: (w: World, s: State) => Promise<void>;
  }
> = {
  name: {
    prepare: async () => ({ v: unique('renamed') }),
    input: (s) => ({ name: s.v }),
    check: async (w, s) => assert.equal((await tenantRow(w, w.C1)).name, s.v),
  },
  domain: {
    prepare: async () => ({ v: `${unique('d')}.example.com` }),
    input: (s) => ({ domain: s.v }),
    check: async (w, s) => assert.equal((await tenantRow(w, w.C1)).domain, s.v),
  },
  description: {
    prepare: async () => ({ v: unique('description') }),
    input: (s) => ({ description: s.v }),
    check: async (w, s) => assert.equal((await tenantRow(w, w.C1)).description, s.v),
  },
  allow_response_actions: {
    prepare: async (w) => ({ v: !(await tenantRow(w, w.C1)).allow_response_actions }),
    input: (s) => ({ allow_response_actions: s.v }),
    check: async (w, s) => assert.equal((await tenantRow(w, w.C1)).allow_response_actions, s.v),
  },
  actions_approver: {
    prepare: async () => ({ v: `${unique('approver')}@example.com` }),
    input: (s) => ({ actions_approver: s.v }),
    check: async (w, s) => assert.equal((await tenantRow(w, w.C1)).actions_approver, s.v),
  },
  environments: {
    prepare: async (w) => {
      const [pilot] = await rows(w, sql`select enabled from tenant_environments where tenant_id = ${w.C1} and name = 'pilot'`);
      return { v: !(pilot?.enabled ?? false) };
    },
    input: (s) => ({ environments: [{ name: 'pilot', enabled: s.v }] }),
    check: async (w, s) => {
      const [pilot] = await rows(w, sql`select enabled from tenant_environments where tenant_id = ${w.C1} and name = 'pilot'`);
      assert.equal(pilot?.enabled, s.v);
    },
  },
  disable: {
    input: () => ({ disable: true }),
    check: async (w) => assert.equal((await tenantRow(w, w.C1)).enabled, false),
    cleanup: (w) => reenableC1(w),
  },
  expiresAt: {
    prepare: async (w) => ({ v: new Date(w.t.clock.now().getTime() + (100 + ++seq) * DAY_MS) }),
    input: (s) => ({ expiresAt: s.v.toISOString() }),
    check: async (w, s) => assert.equal(new Date((await tenantRow(w, w.C1)).expires_at).getTime(), s.v.getTime()),
    cleanup: async (w) => void (await sql`update tenants set expires_at = null where id = ${w.C1}`.execute(w.t.db.kysely)),
  },
  clearExpiration: {
    prepare: async (w) => {
      await sql`update tenants set expires_at = ${new Date(w.t.clock.now().getTime() + 10 * DAY_MS)} where id = ${w.C1}`.execute(w.t.db.kysely);
      return {};
    },
    input: () => ({ clearExpiration: true }),
    check: async (w) => assert.equal((await tenantRow(w, w.C1)).expires_at, null),
    cleanup: async (w) => void (await sql`update tenants set expires_at = null where id = ${w.C1}`.execute(w.t.db.kysely)),
  },
};

const labelOps = (verb: 'update' | 'delete', restricted: boolean): Op => ({
  row: `${verb}TenantLabel${restricted ? '(restricted label)' : ''}`,
  iface: 'tenant',
  field: `${verb}TenantLabel`,
  mutation: true,
  prepare: async (w) => ({ label: await freshLabel(w, restricted), name: unique('relabel') }),
  run: (w, s, send) => (verb === 'update' ? send(Q.updateLabel, { id: s.label, l: { name: s.name } }) : send(Q.deleteLabel, { id: s.label })),
  effect: restricted
    ? neverAllowed
    : async (w, s) => {
        const found = await rows(w, sql`select name from tenant_labels where id = ${s.label}`);
        if (verb === 'update') assert.equal(found[0]?.name, s.name);
        else assert.equal(found.length, 0);
      },
});

const subscriptionAssignOp = (assign: boolean): Op => ({
  row: assign ? 'assignSubscription' : 'unassignSubscription',
  iface: 'tenant',
  field: assign ? 'assignSubscription' : 'unassignSubscription',
  mutation: true,
  prepare: async (w) => ({ sub: await freshSubscription(w, assign ? undefined : w.C1) }),
  run: (w, s, send) => send(assign ? Q.assign : Q.unassign, { t: w.C1, s: s.sub }),
  effect: async (w, s) => {
    const found = await rows(w, sql`select 1 from tenant_subscriptions where tenant_id = ${w.C1} and subscription_id = ${s.sub}`);
    assert.equal(found.length, assign ? 1 : 0);
  },
});

/** the client a credential mutation works on: the caller itself in the "self" column, else a fresh one */
async function credentialTarget(w: World, actor: ActorName): Promise<State> {
  const self = actor === 'self' ? await freshClient(w, true) : undefined;
  return { self, victim: self ?? (await freshClient(w)) };
}

const USER_OPS: Op[] = [
  {
    row: 'users',
    iface: 'credential',
    field: 'users',
    mutation: false,
    prepare: (w, actor) => userTarget(w, actor),
    run: (_w, s, send) => send(Q.users, { e: s.user.email }),
    effect: async (w, s, res) => assert.deepEqual(res.body.data.users, [{ id: s.user.id, tenant_id: w.C1 }]),
  },
  {
    row: 'user',
    iface: 'credential',
    field: 'user',
    mutation: false,
    prepare: (w, actor) => userTarget(w, actor),
    run: (_w, s, send) => send(Q.user, { id: s.user.id }),
    effect: async (_w, s, res) => assert.deepEqual(res.body.data.user, { id: s.user.id, email: s.user.email }),
  },
  {
    row: 'createUser',
    iface: 'credential',
    field: 'createUser',
    mutation: true,
    prepare: async (w, actor) => ({ ...(actor === 'self' ? { self: await freshClient(w, true) } : {}), email: `${unique('new')}@example.com` }),
    run: (_w, s, send) => send(Q.createUser, { e: s.email }),
    effect: async (w, s, res) => {
      const created = res.body.data.createUser;
      assert.deepEqual(created.user.roles, ['Analyst']);
      assert.match(created.setup_url, /\/login\/setup\?token=[A-Za-z0-9_-]{43}$/);
      const row = await userRow(w, created.user.id);
      assert.deepEqual(
        { email: row.email, tenant: String(row.tenant_id), password: row.password_hash },
        { email: s.email, tenant: w.C1, password: null },
      );
    },
  },
  {
    row: 'assignUserRole',
    iface: 'credential',
    field: 'assignUserRole',
    mutation: true,
    prepare: (w, actor) => userTarget(w, actor),
    run: (_w, s, send) => send(Q.assignUserRole, { u: s.user.id, r: Auditor }),
    effect: async (w, s) => {
      const held = await rows(w, sql`select role_id, tenant_id from role_assignments where principal_id = ${s.user.id} and role_id = ${Auditor}`);
      assert.deepEqual(
        held.map((r) => String(r.tenant_id)),
        [w.C1],
      );
    },
  },
  {
    row: 'removeUserRole',
    iface: 'credential',
    field: 'removeUserRole',
    mutation: true,
    prepare: (w, actor) => userTarget(w, actor),
    run: (_w, s, send) => send(Q.removeUserRole, { u: s.user.id, a: s.user.assignment }),
    effect: async (w, s) => assert.deepEqual(await rows(w, sql`select id from role_assignments where id = ${s.user.assignment}`), []),
  },
  {
    row: 'disableUser',
    iface: 'credential',
    field: 'disableUser',
    mutation: true,
    prepare: (w, actor) => userTarget(w, actor),
    run: (_w, s, send) => send(Q.disableUser, { id: s.user.id }),
    effect: async (w, s) => assert.notEqual((await userRow(w, s.user.id)).disabled_at, null),
  },
  {
    row: 'enableUser',
    iface: 'credential',
    field: 'enableUser',
    mutation: true,
    prepare: (w, actor) => userTarget(w, actor, { disabled: true }),
    run: (_w, s, send) => send(Q.enableUser, { id: s.user.id }),
    effect: async (w, s) => assert.equal((await userRow(w, s.user.id)).disabled_at, null),
  },
  {
    row: 'resetUserSignIn',
    iface: 'credential',
    field: 'resetUserSignIn',
    mutation: true,
    prepare: async (w, actor) => {
      const state = await userTarget(w, actor);
      return { ...state, before: (await userRow(w, state.user.id)).setup_token_hash };
    },
    run: (_w, s, send) => send(Q.resetUserSignIn, { id: s.user.id }),
    effect: async (w, s, res) => {
      assert.match(res.body.data.resetUserSignIn.setup_url, /token=/);
      assert.notDeepEqual((await userRow(w, s.user.id)).setup_token_hash, s.before, 'a new set-up link replaces the old one');
    },
  },
  {
    row: 'unlockUserSignIn',
    iface: 'credential',
    field: 'unlockUserSignIn',
    mutation: true,
    prepare: async (w, actor) => {
      // a failure count of the user's account, which the unlock clears
      const state = await userTarget(w, actor);
      const key = `accountAll:${emailKey(state.user.email)}`;
      await sql`insert into sign_in_failures (key, failures, first_failure_at, last_failure_at) values (${key}, 100, now(), now())`.execute(
        w.t.db.kysely,
      );
      return { ...state, key };
    },
    run: (_w, s, send) => send(Q.unlockUserSignIn, { id: s.user.id }),
    effect: async (w, s, res) => {
      assert.equal(res.body.data.unlockUserSignIn.id, s.user.id);
      assert.deepEqual(await rows(w, sql`select key from sign_in_failures where key = ${s.key}`), [], 'the count is cleared');
    },
  },
  {
    row: 'deleteUser',
    iface: 'credential',
    field: 'deleteUser',
    mutation: true,
    prepare: (w, actor) => userTarget(w, actor),
    run: (_w, s, send) => send(Q.deleteUser, { id: s.user.id }),
    effect: async (w, s) => {
      assert.equal(await userRow(w, s.user.id), undefined);
      assert.deepEqual(await rows(w, sql`select id from role_assignments where principal_id = ${s.user.id}`), []);
    },
  },
];

/** A connection of C1 made by the root Administrator: configured by the test IdP's metadata, or just created. */
async function freshConnection(w: World, configured = false): Promise<string> {
  const created = data(await tenantCall(w, w.root, Q.createSso, { c: { name: unique('sso'), type: 'saml', domains: [`${unique('d')}.test`] } }, w.C1))
    .createSSOConnection.id as string;
  if (configured) {
    data(await tenantCall(w, w.root, Q.updateSso, { u: { id: created, samlConfiguration: { metadataURL: w.idp.metadataUrl } } }, w.C1));
  }
  return created;
}

/** A fresh connection of C1 and its one (pending) domain. */
async function domainOfC1(w: World): Promise<{ id: string; domain: string }> {
  const id = await freshConnection(w);
  return { id, domain: (await domainRow(w, id)).domain };
}

const domainRow = async (w: World, connectionId: string) =>
  (await rows(w, sql`select * from sso_connection_domains where connection_id = ${connectionId}`))[0];

const ssoRow = async (w: World, id: string) => (await rows(w, sql`select * from sso_connections where id = ${id}`))[0];

const SSO_OPS: Op[] = [
  {
    // the acting tenant's trail (C1 has no tenants below it): C1's events only, whoever reads
    row: 'auditEvents',
    iface: 'tenant',
    inC1: true,
    field: 'auditEvents',
    mutation: false,
    prepare: async (w) => ({ id: await freshConnection(w) }),
    run: (_w, _s, send) => send(Q.auditEvents),
    effect: async (w, s, res) => {
      const listed = res.body.data.auditEvents.events as { tenantID: string; action: string; targetID: string }[];
      assert.ok(
        listed.some((e) => e.action === 'sso.created' && e.targetID === s.id),
        'the event of the connection made in C1',
      );
      assert.ok(
        listed.every((e) => e.tenantID === w.C1),
        'no event of another tenant',
      );
    },
  },
  {
    row: 'ssoConnections',
    iface: 'tenant',
    inC1: true,
    field: 'ssoConnections',
    mutation: false,
    prepare: async (w) => ({ id: await freshConnection(w) }),
    run: (_w, _s, send) => send(Q.ssoConnections),
    effect: async (w, s, res) => {
      const listed = res.body.data.ssoConnections as { id: string; tenantID: string }[];
      assert.ok(listed.some((c) => c.id === s.id));
      assert.ok(listed.every((c) => c.tenantID === w.C1));
    },
  },
  {
    row: 'ssoConnection',
    iface: 'tenant',
    inC1: true,
    field: 'ssoConnection',
    mutation: false,
    prepare: async (w) => ({ id: await freshConnection(w) }),
    run: (_w, s, send) => send(Q.ssoConnection, { id: s.id }),
    effect: async (w, s, res) => assert.deepEqual(res.body.data.ssoConnection, { id: s.id, tenantID: w.C1 }),
  },
  {
    row: 'getSSOConnectionConfig',
    iface: 'tenant',
    inC1: true,
    field: 'getSSOConnectionConfig',
    mutation: false,
    run: (w, _s, send) => send(Q.ssoConfig, { c: w.idp.certificatePem }),
    effect: async (_w, _s, res) => assert.match(res.body.data.getSSOConnectionConfig.subject, /CN=idp\.test/),
  },
  {
    row: 'createSSOConnection',
    iface: 'tenant',
    inC1: true,
    field: 'createSSOConnection',
    mutation: true,
    prepare: async () => ({ name: unique('sso') }),
    run: (_w, s, send) => send(Q.createSso, { c: { name: s.name, type: 'saml', domains: [`${s.name}.test`] } }),
    effect: async (w, s, res) => {
      const row = await ssoRow(w, res.body.data.createSSOConnection.id);
      assert.deepEqual([row.name, String(row.tenant_id), row.status], [s.name, w.C1, 'Created']);
    },
  },
  {
    row: 'updateSSOConnection',
    iface: 'tenant',
    inC1: true,
    field: 'updateSSOConnection',
    mutation: true,
    prepare: async (w) => ({ id: await freshConnection(w), name: unique('renamed') }),
    run: (_w, s, send) => send(Q.updateSso, { u: { id: s.id, name: s.name } }),
    effect: async (w, s) => assert.equal((await ssoRow(w, s.id)).name, s.name),
  },
  {
    row: 'deleteSSOConnection',
    iface: 'tenant',
    inC1: true,
    field: 'deleteSSOConnection',
    mutation: true,
    prepare: async (w) => ({ id: await freshConnection(w) }),
    run: (_w, s, send) => send(Q.deleteSso, { id: s.id }),
    effect: async (w, s) => assert.equal(await ssoRow(w, s.id), undefined),
  },
  {
    row: 'refreshSSOConnectionMetadata',
    iface: 'tenant',
    inC1: true,
    field: 'refreshSSOConnectionMetadata',
    mutation: true,
    prepare: async (w) => {
      const id = await freshConnection(w, true);
      w.t.clock.advance(1000);
      return { id };
    },
    run: (_w, s, send) => send(Q.refreshSso, { id: s.id }),
    effect: async (w, s) => assert.equal((await ssoRow(w, s.id)).metadata_refreshed_at.getTime(), w.t.clock.now().getTime()),
  },
  {
    row: 'checkSSODomain',
    iface: 'tenant',
    inC1: true,
    field: 'checkSSODomain',
    mutation: true,
    prepare: async (w) => domainOfC1(w),
    run: (_w, s, send) => send(Q.checkDomain, { id: s.id, d: s.domain }),
    effect: async (w, s) => assert.match((await domainRow(w, s.id)).check_error, /NXDOMAIN/),
  },
  {
    row: 'regenerateSSODomainChallenge',
    iface: 'tenant',
    inC1: true,
    field: 'regenerateSSODomainChallenge',
    mutation: true,
    prepare: async (w) => {
      const s = await domainOfC1(w);
      return { ...s, hash: Buffer.from((await domainRow(w, s.id)).challenge_hash).toString('hex') };
    },
    run: (_w, s, send) => send(Q.regenerateDomain, { id: s.id, d: s.domain }),
    effect: async (w, s) => assert.notEqual(Buffer.from((await domainRow(w, s.id)).challenge_hash).toString('hex'), s.hash),
  },
];

const OPS: Op[] = [
  // ---- tenant interface: queries
  {
    row: 'tenants',
    iface: 'tenant',
    field: 'tenants',
    mutation: false,
    run: (w, _s, send) => send(Q.tenants, { ids: [w.C1] }),
    hidden: (res) => res.body.data?.tenants?.results.length === 0 && res.body.data.tenants.totalCount === 0,
    effect: async (w, _s, res) => {
      assert.deepEqual(res.body.data.tenants.results, [{ id: w.C1 }]);
      assert.equal(res.body.data.tenants.totalCount, 1);
    },
  },
  {
    row: 'partnerSubscriptions',
    iface: 'tenant',
    field: 'partnerSubscriptions',
    mutation: false,
    run: (w, _s, send) => send(Q.partnerSubscriptions, { p: w.P1 }),
    effect: async (w, _s, res) => {
      const subs = res.body.data.partnerSubscriptions as { id: string; partner_tenant_id: string }[];
      assert.ok(subs.some((s) => s.id === w.p1Sub));
      assert.ok(subs.every((s) => s.partner_tenant_id === w.P1));
    },
  },
  {
    row: 'services',
    iface: 'tenant',
    field: 'services',
    mutation: false,
    run: (w, _s, send) => send(Q.services, { p: w.P1 }),
    effect: async (w, _s, res) => {
      const ids = (res.body.data.services as { id: string }[]).map((s) => s.id);
      assert.ok(ids.includes(w.p1Service) && ids.includes(w.vendorService));
      assert.ok(!ids.includes(w.p2Service));
    },
  },
  // ---- tenant interface: mutations
  ...[false, true].map(
    (isPartner): Op => ({
      row: isPartner ? 'createTenant(isPartner)' : 'createTenant',
      iface: 'tenant',
      field: 'createTenant',
      mutation: true,
      prepare: async () => ({ name: unique('new-tenant') }),
      run: (w, s, send) => send(Q.createTenant, { t: { name: s.name, partnerTenantID: w.P1, ...(isPartner ? { isPartner: true } : {}) } }),
      effect: async (w, s, res) => {
        const created = res.body.data.createTenant;
        assert.deepEqual(created.partnership, { parent: w.P1, is_partner: isPartner });
        const row = await tenantRow(w, created.id);
        assert.equal(row.name, s.name);
        assert.equal(String(row.parent_id), w.P1);
      },
    }),
  ),
  ...Object.entries(UPDATE_CASES).map(
    ([field, c]): Op => ({
      row: `updateTenant(${field})`,
      iface: 'tenant',
      field: 'updateTenant',
      mutation: true,
      prepare: async (w) => (c.prepare ? c.prepare(w) : {}),
      run: (w, s, send) => send(Q.updateTenant, { id: w.C1, u: c.input(s) }),
      effect: (w, s) => c.check(w, s),
      ...(c.cleanup ? { cleanup: c.cleanup } : {}),
    }),
  ),
  {
    row: 'enableTenantSupport',
    iface: 'tenant',
    field: 'enableTenantSupport',
    mutation: true,
    // Support staff's premise is C1's consent on; everyone else finds it off
    supportC1: (actor) => actor === 'sup.C1' || actor === 'sup.P1C1',
    run: (w, _s, send) => send(Q.enableSupport, { id: w.C1 }),
    effect: async (w) => assert.equal((await tenantRow(w, w.C1)).support_enabled, true),
  },
  {
    row: 'disableTenantSupport',
    iface: 'tenant',
    field: 'disableTenantSupport',
    mutation: true,
    supportC1: (actor) => actor !== 'sup.off',
    run: (w, _s, send) => send(Q.disableSupport, { id: w.C1 }),
    effect: async (w) => assert.equal((await tenantRow(w, w.C1)).support_enabled, false),
  },
  ...[false, true].map(
    (restricted): Op => ({
      row: restricted ? 'createTenantLabel(restricted)' : 'createTenantLabel',
      iface: 'tenant',
      field: 'createTenantLabel',
      mutation: true,
      prepare: async () => ({ name: unique('label') }),
      run: (w, s, send) =>
        send(Q.createLabel, { id: w.C1, l: { name: s.name, value: 'v', owner_partner_tenant_id: w.P1, ...(restricted ? { restricted } : {}) } }),
      effect: async (w, s, res) => {
        const [label] = await rows(w, sql`select * from tenant_labels where id = ${res.body.data.createTenantLabel.id}`);
        assert.equal(label.name, s.name);
        assert.equal(String(label.tenant_id), w.C1);
        assert.equal(String(label.owner_partner_tenant_id), w.P1);
        assert.equal(label.restricted, restricted);
      },
    }),
  ),
  labelOps('update', false),
  labelOps('delete', false),
  labelOps('update', true),
  labelOps('delete', true),
  subscriptionAssignOp(true),
  subscriptionAssignOp(false),
  {
    row: 'createService',
    iface: 'tenant',
    field: 'createService',
    mutation: true,
    prepare: async () => ({ name: unique('service') }),
    run: (w, s, send) => send(Q.createService, { s: { name: s.name, owner_tenant_id: w.P1 } }),
    effect: async (w, s, res) => {
      const [row] = await rows(w, sql`select * from services where id = ${res.body.data.createService.id}`);
      assert.equal(row.name, s.name);
      assert.equal(String(row.owner_tenant_id), w.P1);
    },
  },
  {
    row: 'createPartnerSubscription',
    iface: 'tenant',
    field: 'createPartnerSubscription',
    mutation: true,
    prepare: async () => ({ name: unique('subscription') }),
    run: (w, s, send) => send(Q.createSub, { s: { service_id: w.p1Service, name: s.name, partner_tenant_id: w.P1 } }),
    effect: async (w, s, res) => {
      const [row] = await rows(w, sql`select * from partner_subscriptions where id = ${res.body.data.createPartnerSubscription.id}`);
      assert.equal(row.name, s.name);
      assert.equal(String(row.partner_tenant_id), w.P1);
    },
  },
  {
    row: 'retirePartnerSubscription',
    iface: 'tenant',
    field: 'retirePartnerSubscription',
    mutation: true,
    prepare: async (w) => ({ sub: await freshSubscription(w) }),
    run: (w, s, send) => send(Q.retireSub, { id: s.sub }),
    effect: async (w, s) => {
      const [row] = await rows(w, sql`select retired_at from partner_subscriptions where id = ${s.sub}`);
      assert.notEqual(row.retired_at, null);
    },
  },
  // ---- credential interface, acting in C1
  {
    row: 'clients',
    iface: 'credential',
    field: 'clients',
    mutation: false,
    prepare: async (w, actor) => (actor === 'self' ? { self: await freshClient(w, true) } : {}),
    run: (w, _s, send) => send(Q.clients, { ids: [w.actors['C1.adm'].client!.clientId] }),
    effect: async (w, _s, res) => assert.deepEqual(res.body.data.clients, [{ id: w.actors['C1.adm'].client!.id, tenant_id: w.C1 }]),
  },
  {
    row: 'me',
    iface: 'credential',
    field: 'me',
    mutation: false,
    prepare: async (w, actor) => ({ actor, ...(actor === 'self' ? { self: await freshClient(w, true) } : {}) }),
    run: (_w, _s, send) => send(Q.me),
    effect: async (w, s, res) => {
      const me = s.self ?? w.actors[s.actor as ActorName].client;
      // root.adm calls with the bootstrap client of tenant 1
      if (!me) assert.deepEqual({ ...res.body.data.me, id: undefined }, { kind: 'client', id: undefined, tenant_id: '1', client_id: ROOT_CLIENT_ID });
      else assert.deepEqual(res.body.data.me, { kind: 'client', id: me.id, tenant_id: me.tenantId, client_id: me.clientId });
    },
  },
  {
    row: 'roles',
    iface: 'credential',
    field: 'roles',
    mutation: false,
    prepare: async (w, actor) => ({ actor, ...(actor === 'self' ? { self: await freshClient(w, true) } : {}) }),
    run: (_w, _s, send) => send(Q.roles),
    effect: async (_w, s, res) => {
      const listed = res.body.data.roles as { id: string; name: string; vendor_only: boolean; assignable: boolean }[];
      assert.deepEqual(
        listed.map((r) => [r.name, r.id, r.vendor_only]),
        Object.entries(ROLE_IDS).map(([name, id]) => [name, id, name === 'Operations' || name === 'Support']),
      );
      // in C1 (not tenant 1): what each caller may give there, as createClient and createUser judge it
      const tenantRoles = ['Administrator', 'Analyst', 'Responder', 'Auditor'];
      const mayGive: Partial<Record<ActorName, string[]>> = {
        'P1.adm': tenantRoles,
        'C1.adm': tenantRoles,
        'root.adm': tenantRoles,
        'P1.ana': ['Analyst'],
        'C1.ana': ['Analyst'],
      };
      assert.deepEqual(
        listed.filter((r) => r.assignable).map((r) => r.name),
        mayGive[s.actor as ActorName] ?? [],
        `${s.actor} may give`,
      );
    },
  },
  {
    row: 'createClient',
    iface: 'credential',
    field: 'createClient',
    mutation: true,
    prepare: async (w, actor) => ({ ...(actor === 'self' ? { self: await freshClient(w, true) } : {}), name: unique('created') }),
    run: (_w, s, send) => send(Q.createClient, { name: s.name }),
    effect: async (w, s, res) => {
      const created = res.body.data.createClient.client;
      assert.equal(created.tenant_id, w.C1);
      assert.deepEqual(created.roles, ['Analyst']);
      const [row] = await rows(w, sql`select name, tenant_id from clients where id = ${created.id}`);
      assert.deepEqual({ name: row.name, tenant: String(row.tenant_id) }, { name: s.name, tenant: w.C1 });
    },
  },
  {
    row: 'rotateClientSecret',
    iface: 'credential',
    field: 'rotateClientSecret',
    mutation: true,
    prepare: (w, actor) => credentialTarget(w, actor),
    run: (_w, s, send) => send(Q.rotate, { id: s.victim.id, s: s.victim.secret }),
    effect: async (w, s, res) => {
      const { client, client_secret } = res.body.data.rotateClientSecret;
      assert.equal(client.id, s.victim.id);
      assert.notEqual(client_secret, s.victim.secret);
      assert.ok(await w.t.token(s.victim.clientId, client_secret));
    },
  },
  {
    row: 'forceRotateClientSecret',
    iface: 'credential',
    field: 'forceRotateClientSecret',
    mutation: true,
    prepare: (w, actor) => credentialTarget(w, actor),
    run: (_w, s, send) => send(Q.forceRotate, { id: s.victim.id }),
    effect: async (w, s, res) => {
      const { client, client_secret } = res.body.data.forceRotateClientSecret;
      assert.equal(client.id, s.victim.id);
      const live = await rows(w, sql`select id from client_secrets where client_id = ${s.victim.id} and revoked_at is null`);
      assert.equal(live.length, 1, 'every earlier secret is revoked');
      assert.ok(await w.t.token(s.victim.clientId, client_secret));
    },
  },
  {
    row: 'deleteClient',
    iface: 'credential',
    field: 'deleteClient',
    mutation: true,
    prepare: (w, actor) => credentialTarget(w, actor),
    run: (_w, s, send) => send(Q.deleteClient, { id: s.victim.id }),
    effect: async (w, s) => {
      const [row] = await rows(w, sql`select revoked_at from clients where id = ${s.victim.id}`);
      assert.notEqual(row.revoked_at, null);
    },
  },
  ...USER_OPS,
  ...SSO_OPS,
];

/** What a response amounts to: the error code, or ok (a list that leaves the target out: NOT_FOUND). */
function outcomeOf(res: Response, op: Op, w: World, s: State): Outcome | string {
  const errors = res.body?.errors as { extensions?: { code?: string } }[] | undefined;
  if (errors?.length) {
    assert.equal(errors.length, 1, res.text);
    // denied as a whole (401, 403 acting tenant), or the field is null (a non-null list nulls data)
    if (res.status === 200) assert.ok(res.body.data === null || res.body.data[op.field] === null, res.text);
    return errors[0]!.extensions?.code ?? `no code (HTTP ${res.status})`;
  }
  assert.equal(res.status, 200, res.text);
  if (op.hidden?.(res, w, s)) return 'NOT_FOUND';
  return 'ok';
}

async function runCase(w: World, op: Op, actorName: ActorName, expected: Outcome): Promise<void> {
  const actor = w.actors[actorName];
  // Support staff's consent state; for everyone else the flags are off (they must not matter)
  await setSupport(w, op.supportC1?.(actorName) ?? (actorName === 'sup.C1' || actorName === 'sup.P1C1'), actorName === 'sup.P1C1');
  const s = (await op.prepare?.(w, actorName)) ?? {};
  const token = actorName === 'self' ? (s.self?.token as string) : actor.token;
  assert.ok(actorName === 'anon' || token, `no token for ${actorName}`);
  // credential calls act in C1: X-Tenant-Context for everyone not at home there
  const send: Send = (doc, variables) =>
    op.iface === 'tenant' && !op.inC1
      ? tenantCall(w, token, doc, variables)
      : (op.iface === 'tenant' ? tenantCall : credCall)(w, token, doc, variables, actor.home === w.C1 ? undefined : w.C1);
  // a refused mutation: everything it could write; an allowed one: the audit trail (its effect is checked below)
  const snapshot = () => (expected === 'ok' ? auditCount(w) : fingerprint(w));
  const before = op.mutation ? await snapshot() : undefined;
  const refusedEvents = async () =>
    rows(
      w,
      sql`select id, tenant_id, actor_kind, outcome, details from audit_events where action = 'authorization.refused' and target_id = ${op.field}`,
    );
  const refusedBefore = op.mutation && expected === 'FORBIDDEN' ? new Set((await refusedEvents()).map((e) => e.id)) : undefined;
  try {
    const res = await op.run(w, s, send);
    assert.equal(outcomeOf(res, op, w, s), expected, `${op.row} as ${actorName}: HTTP ${res.status} ${res.text}`);
    if (expected === 'UNAUTHENTICATED') {
      assert.equal(res.status, 401);
      assert.match(String(res.headers['www-authenticate']), /^Bearer /);
    }
    const afterwards = before && (await snapshot());
    if (expected === 'ok') {
      await op.effect(w, s, res);
      if (before && afterwards) assert.ok(afterwards.audit_events! > before.audit_events!, 'an allowed mutation is audited');
    } else if (before && afterwards) {
      // a mutation refused in execution for the caller's roles (FORBIDDEN; not a whole request
      // refused before it, 401 or the acting tenant's 403) is one audit event, in the acting
      // tenant, and nothing else; any other refusal writes nothing at all
      const audited = expected === 'FORBIDDEN' && res.status === 200 ? 1 : 0;
      assert.deepEqual(
        afterwards,
        { ...before, refused: before.refused! + audited },
        `${op.row} as ${actorName} was refused, yet something was written`,
      );
      if (audited) {
        const fresh = (await refusedEvents()).filter((e) => !refusedBefore?.has(e.id));
        assert.equal(fresh.length, 1, `${op.row} as ${actorName}: one authorization.refused event`);
        const e = fresh[0]!;
        assert.equal(e.outcome, 'refused');
        assert.equal(e.actor_kind, 'client');
        // in the trail of the tenant whose roles were judged: the acting tenant, or the one the
        // operation names (C1, or above it: the calls here all act on the line 1 > P1 > C1),
        // never a tenant off that line
        assert.ok(['1', w.P1, w.C1].includes(String(e.tenant_id)), `${op.row} as ${actorName}: the event went to tenant ${e.tenant_id}`);
        assert.equal((typeof e.details === 'string' ? JSON.parse(e.details) : e.details).via, `${op.iface}-graphql`);
      }
    }
  } finally {
    await op.cleanup?.(w, s);
  }
}

// ---------------------------------------------------------------------------------------------
// Deny by default: every field of both schemas has its rows (engine independent).

describe('authorization matrix: the table covers both schemas', () => {
  it('every Query and Mutation field has a row, every row an operation (deny by default)', () => {
    const missing: string[] = [];
    const unknown: string[] = [];
    for (const [iface, schema] of [
      ['tenant', tenantSchema()],
      ['credential', credentialSchema()],
    ] as const) {
      const types = [schema.getQueryType(), schema.getMutationType()].filter((x): x is GraphQLObjectType => !!x);
      const fields = new Set<string>();
      for (const type of types) {
        for (const field of Object.keys(type.getFields())) {
          fields.add(field);
          const ops = OPS.filter((o) => o.iface === iface && o.field === field);
          if (ops.length === 0 || ops.some((o) => !EXPECTED.has(o.row))) missing.push(`${iface}: ${type.name}.${field}`);
          for (const o of ops) assert.equal(o.mutation, type === schema.getMutationType(), `${o.row}: query or mutation`);
        }
      }
      for (const o of OPS) if (o.iface === iface && !fields.has(o.field)) unknown.push(`${o.row} (${o.field})`);
    }
    assert.deepEqual(missing, [], 'fields without an authorization decision in test/authorization/matrix-table.ts');
    assert.deepEqual(unknown, [], 'operations naming fields the schemas do not have');
    assert.deepEqual([...EXPECTED.keys()].sort(), OPS.map((o) => o.row).sort(), 'table rows and walked operations differ');
  });

  it('every TenantUpdateInput field is an "edit" or a "manage" field, and walked as such', () => {
    const input = tenantSchema().getType('TenantUpdateInput') as GraphQLInputObjectType;
    assert.deepEqual(Object.keys(input.getFields()).sort(), Object.keys(TENANT_UPDATE_FIELDS).sort());
    assert.deepEqual(Object.keys(UPDATE_CASES).sort(), Object.keys(TENANT_UPDATE_FIELDS).sort());
    // one decision per kind: every edit field has the same row, every manage field too
    for (const kind of ['edit', 'manage'] as const) {
      const fields = Object.entries(TENANT_UPDATE_FIELDS)
        .filter(([, k]) => k === kind)
        .map(([f]) => f);
      const first = EXPECTED.get(`updateTenant(${fields[0]})`);
      for (const f of fields) assert.deepEqual(EXPECTED.get(`updateTenant(${f})`), first, `updateTenant(${f}) differs from the other ${kind} fields`);
    }
  });

  it('follows the doc where it is explicit', () => {
    const cell = (row: string, actor: ActorName) => EXPECTED.get(row)?.[actor];
    // vendor staff never grant support access to themselves; Support changes nothing
    for (const row of ['enableTenantSupport', 'disableTenantSupport']) assert.equal(cell(row, 'ops'), 'FORBIDDEN');
    for (const [row, cells] of EXPECTED) {
      const isMutation = OPS.find((o) => o.row === row)?.mutation;
      if (isMutation)
        for (const sup of ['sup.off', 'sup.C1', 'sup.P1C1'] as const) assert.notEqual(cells[sup], 'ok', `${row}: Support changes nothing`);
      assert.equal(cells.anon, 'UNAUTHENTICATED', `${row}: anonymous`);
      // another partner and a sibling never get past "sees"
      for (const outsider of ['P2.adm', 'C2.adm'] as const) {
        const op = OPS.find((o) => o.row === row);
        // acting in C1 through X-Tenant-Context: a context the caller does not see is FORBIDDEN
        assert.equal(cells[outsider], op?.iface === 'credential' || op?.inC1 ? 'FORBIDDEN' : 'NOT_FOUND', `${row}: ${outsider}`);
      }
    }
    // a tenant cannot lift its own limits
    for (const [field, kind] of Object.entries(TENANT_UPDATE_FIELDS)) {
      assert.equal(cell(`updateTenant(${field})`, 'C1.adm'), kind === 'edit' ? 'ok' : 'FORBIDDEN');
    }
  });
});

// ---------------------------------------------------------------------------------------------

for (const engine of transportEngines()) {
  describe(`authorization matrix (${engine})`, () => {
    const w = {} as World;

    before(async () => {
      w.dns = await startDnsServer();
      const t = await startTestApp({
        engine,
        env: { GATEHOUSE_CLIENT_CREATE_LIMIT: '1000000', GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true', GATEHOUSE_DNS_SERVERS: w.dns.address },
      });
      w.t = t;
      await countRowWrites(t.db.kysely);
      w.idp = await startTestIdp();
      w.root = await t.rootToken();
      w.P1 = await createTenant(t, '1', { isPartner: true, name: 'P1' });
      w.C1 = await createTenant(t, w.P1, { name: 'C1' });
      w.C2 = await createTenant(t, w.P1, { name: 'C2' });
      w.NP = await createTenant(t, w.P1, { isPartner: true, name: 'NP (nested partner)' });
      w.NC = await createTenant(t, w.NP, { name: 'NC' });
      w.P2 = await createTenant(t, '1', { isPartner: true, name: 'P2' });
      w.D1 = await createTenant(t, w.P2, { name: 'D1' });
      const service = async (owner: string) =>
        data(await tenantCall(w, w.root, Q.createService, { s: { name: unique('service'), owner_tenant_id: owner } })).createService.id as string;
      w.vendorService = await service('1');
      w.p1Service = await service(w.P1);
      w.p2Service = await service(w.P2);
      const subscription = async (partner: string, serviceId: string) =>
        data(await tenantCall(w, w.root, Q.createSub, { s: { service_id: serviceId, name: unique('sub'), partner_tenant_id: partner } }))
          .createPartnerSubscription.id as string;
      w.p1Sub = await subscription(w.P1, w.p1Service);
      w.p2Sub = await subscription(w.P2, w.vendorService);

      const actor = async (tenant: string, roles: string[], meta: Partial<Actor> = {}): Promise<Actor> => {
        const c = await clientWithRoles(t, tenant, roles);
        return { name: '', token: c.token, client: c, home: tenant, roleTenants: [tenant], support: false, ...meta };
      };
      const support = await actor('1', [Support], { roleTenants: [], support: true });
      const a: Omit<Record<ActorName, Actor>, 'self'> = {
        anon: { name: 'anon', token: undefined, home: '', roleTenants: [], support: false },
        'P1.adm': await actor(w.P1, [Administrator]),
        'P1.ana': await actor(w.P1, [Analyst]),
        'P1.res': await actor(w.P1, [Responder]),
        'P1.aud': await actor(w.P1, [Auditor]),
        'C1.adm': await actor(w.C1, [Administrator]),
        'C1.ana': await actor(w.C1, [Analyst]),
        'C1.res': await actor(w.C1, [Responder]),
        'C1.aud': await actor(w.C1, [Auditor]),
        'P2.adm': await actor(w.P2, [Administrator]),
        'C2.adm': await actor(w.C2, [Administrator]),
        ops: await actor('1', [Operations]),
        'sup.off': { ...support },
        'sup.C1': { ...support },
        'sup.P1C1': { ...support },
        'root.adm': { name: 'root.adm', token: w.root, home: '1', roleTenants: ['1'], support: false },
      };
      // the client itself: a fresh Auditor client of C1 per case (its token is made in prepare)
      w.actors = { ...a, self: { name: 'self', token: undefined, home: w.C1, roleTenants: [w.C1], support: false } };
      for (const [name, value] of Object.entries(w.actors)) value.name = name;
      w.npAdmin = await actor(w.NP, [Administrator], { name: 'NP.adm' });
      w.c2Client = await createClient(t, w.root, unique('c2-client'), { roles: [Auditor], tenant: w.C2 });
    });
    after(async () => {
      await w.t?.close();
      await w.idp?.close();
      await w.dns?.close();
    });

    // ---- the matrix, cell by cell
    for (const op of OPS) {
      describe(op.row, () => {
        for (const actor of ACTORS) {
          const expected = EXPECTED.get(op.row)?.[actor];
          if (expected === 'n/a') continue;
          it(`${actor}: ${expected ?? 'NO TABLE ENTRY'}`, async () => {
            assert.ok(expected, `no table entry for ${op.row} × ${actor}: deny by default means the table must decide`);
            await runCase(w, op, actor, expected);
          });
        }
      });
    }

    // ---- cross-tenant attempts, one by one
    describe('cross-tenant attempts', () => {
      // a label of P1 on C1, made before any refusal is counted
      let spareLabel = '';
      before(async () => {
        spareLabel = await freshLabel(w, false);
      });
      const code = (res: Response) => res.body?.errors?.[0]?.extensions?.code ?? (res.body?.errors ? 'no code' : 'ok');
      /** the attempts below that are reads (every other one is a mutation) */
      const READS = new Set(['clients']);
      /** every call refused with `expected`, and nothing written by any of them but the audit
       *  event of each mutation refused in execution for the caller's roles (FORBIDDEN with 200;
       *  a foreign X-Tenant-Context is refused before, with 403, and writes nothing) */
      async function refusedAll(calls: [string, () => Promise<Response>, string][]): Promise<void> {
        await setSupport(w, false, false);
        const before = await fingerprint(w);
        const wrong: string[] = [];
        let audited = 0;
        for (const [what, call, expected] of calls) {
          const res = await call();
          if (code(res) !== expected) wrong.push(`${what}: expected ${expected}, got HTTP ${res.status} ${res.text}`);
          if (expected === 'FORBIDDEN' && res.status === 200 && !READS.has(what)) audited++;
        }
        assert.deepEqual(wrong, []);
        assert.deepEqual(await fingerprint(w), { ...before, refused: before.refused! + audited }, 'refused calls wrote something');
      }
      const tenantAttacks = (token: string, target: string, foreignSub: string, ownPartner: string, ownSub: string) =>
        [
          ['updateTenant name', () => tenantCall(w, token, Q.updateTenant, { id: target, u: { name: 'taken over' } }), 'NOT_FOUND'],
          [
            'updateTenant expiresAt',
            () => tenantCall(w, token, Q.updateTenant, { id: target, u: { expiresAt: '2027-01-01T00:00:00Z' } }),
            'NOT_FOUND',
          ],
          ['updateTenant disable', () => tenantCall(w, token, Q.updateTenant, { id: target, u: { disable: true } }), 'NOT_FOUND'],
          [
            'createTenantLabel (acting tenant as owner)',
            () => tenantCall(w, token, Q.createLabel, { id: target, l: { name: unique('x') } }),
            'NOT_FOUND',
          ],
          [
            'createTenantLabel (X-Tenant-Context: own partner)',
            () => tenantCall(w, token, Q.createLabel, { id: target, l: { name: unique('x') } }, ownPartner),
            'NOT_FOUND',
          ],
          [
            'createTenantLabel (own partner as owner)',
            () => tenantCall(w, token, Q.createLabel, { id: target, l: { name: unique('x'), owner_partner_tenant_id: ownPartner } }),
            'NOT_FOUND',
          ],
          [
            'createTenantLabel (X-Tenant-Context: the foreign child)',
            () => tenantCall(w, token, Q.createLabel, { id: target, l: { name: unique('x') } }, target),
            'FORBIDDEN',
          ],
          [
            'updateTenant (X-Tenant-Context: the foreign child)',
            () => tenantCall(w, token, Q.updateTenant, { id: target, u: { name: 'x' } }, target),
            'FORBIDDEN',
          ],
          ['enableTenantSupport', () => tenantCall(w, token, Q.enableSupport, { id: target }), 'NOT_FOUND'],
          ['disableTenantSupport', () => tenantCall(w, token, Q.disableSupport, { id: target }), 'NOT_FOUND'],
          ['assignSubscription (own subscription to the foreign child)', () => tenantCall(w, token, Q.assign, { t: target, s: ownSub }), 'NOT_FOUND'],
          [
            'unassignSubscription (own subscription from the foreign child)',
            () => tenantCall(w, token, Q.unassign, { t: target, s: ownSub }),
            'NOT_FOUND',
          ],
          ['retirePartnerSubscription (foreign)', () => tenantCall(w, token, Q.retireSub, { id: foreignSub }), 'NOT_FOUND'],
          [
            'createTenant under the foreign partner',
            () => tenantCall(w, token, Q.createTenant, { t: { name: unique('x'), partnerTenantID: ownPartner === w.P2 ? w.P1 : w.P2 } }),
            'NOT_FOUND',
          ],
        ] as [string, () => Promise<Response>, string][];
      const clientAttacks = (token: string, context: string) =>
        [
          ['clients', () => credCall(w, token, Q.clients, {}, context), 'FORBIDDEN'],
          ['createClient', () => credCall(w, token, Q.createClient, { name: unique('x') }, context), 'FORBIDDEN'],
          [
            'rotateClientSecret',
            () => credCall(w, token, Q.rotate, { id: w.actors['C1.aud'].client!.id, s: w.actors['C1.aud'].client!.secret }, context),
            'FORBIDDEN',
          ],
          ['forceRotateClientSecret', () => credCall(w, token, Q.forceRotate, { id: w.actors['C1.aud'].client!.id }, context), 'FORBIDDEN'],
          ['deleteClient', () => credCall(w, token, Q.deleteClient, { id: w.actors['C1.aud'].client!.id }, context), 'FORBIDDEN'],
        ] as [string, () => Promise<Response>, string][];

      it("another partner's Administrator cannot touch P1's child C1 (tenant interface)", async () => {
        const p2 = w.actors['P2.adm'].token!;
        await refusedAll([
          ...tenantAttacks(p2, w.C1, w.p1Sub, w.P2, w.p2Sub),
          ['assignSubscription (P1 subscription to own child)', () => tenantCall(w, p2, Q.assign, { t: w.D1, s: w.p1Sub }), 'NOT_FOUND'],
          [
            "createPartnerSubscription of P1's service",
            () => tenantCall(w, p2, Q.createSub, { s: { service_id: w.p1Service, name: unique('x'), partner_tenant_id: w.P2 } }),
            'NOT_FOUND',
          ],
          ['createService owned by P1', () => tenantCall(w, p2, Q.createService, { s: { name: unique('x'), owner_tenant_id: w.P1 } }), 'NOT_FOUND'],
          ['updateTenantLabel on C1', () => tenantCall(w, p2, Q.updateLabel, { id: spareLabel, l: { name: 'x' } }), 'NOT_FOUND'],
          ['deleteTenantLabel on C1', () => tenantCall(w, p2, Q.deleteLabel, { id: spareLabel }), 'NOT_FOUND'],
        ]);
        const list = data(await tenantCall(w, p2, Q.tenants, { ids: [w.P1, w.C1, w.C2, w.NP, w.NC] })).tenants;
        assert.deepEqual({ results: list.results, totalCount: list.totalCount, count: list.count }, { results: [], totalCount: 0, count: 0 });
      });

      it("P1's Administrator cannot touch another partner's child D1 (tenant interface)", async () => {
        const p1 = w.actors['P1.adm'].token!;
        await refusedAll(tenantAttacks(p1, w.D1, w.p2Sub, w.P1, w.p1Sub));
      });

      it('client operations in a foreign tenant: 403 for the context, the same as for a tenant that does not exist', async () => {
        const p2 = w.actors['P2.adm'].token!;
        const c1 = w.actors['C1.adm'].token!;
        await refusedAll([
          ...clientAttacks(p2, w.C1),
          ...clientAttacks(p2, w.P1),
          ...clientAttacks(c1, w.C2),
          ...clientAttacks(c1, w.P1),
          ...clientAttacks(c1, '1'),
        ]);
        const missing = '987654321987';
        for (const [token, context] of [
          [p2, w.C1],
          [c1, w.C2],
          [c1, w.P1],
        ] as const) {
          const exists = await credCall(w, token, Q.clients, {}, context);
          const absent = await credCall(w, token, Q.clients, {}, missing);
          assert.equal(exists.status, 403);
          const normalized = (res: Response, id: string) => ({
            status: res.status,
            body: res.text.replace(new RegExp(`\\b${id}\\b`, 'g'), '<tenant>'),
          });
          assert.deepEqual(normalized(exists, context), normalized(absent, missing));
        }
      });

      it("client operations naming a foreign tenant's client from the caller's own tenant: NOT_FOUND, nothing written", async () => {
        const victim = w.actors['C1.aud'].client!;
        const p2 = w.actors['P2.adm'].token!;
        const c2 = w.actors['C2.adm'].token!;
        const calls: [string, () => Promise<Response>, string][] = [];
        for (const [who, token] of [
          ['P2.adm', p2],
          ['C2.adm', c2],
        ] as const) {
          for (const id of [victim.id, victim.clientId]) {
            calls.push([`${who} rotateClientSecret ${id}`, () => credCall(w, token, Q.rotate, { id, s: victim.secret }), 'NOT_FOUND']);
            calls.push([`${who} forceRotateClientSecret ${id}`, () => credCall(w, token, Q.forceRotate, { id }), 'NOT_FOUND']);
            calls.push([`${who} deleteClient ${id}`, () => credCall(w, token, Q.deleteClient, { id }), 'NOT_FOUND']);
          }
        }
        await refusedAll(calls);
        // lists leave foreign tenants out silently
        for (const token of [p2, c2]) {
          const res = data(await credCall(w, token, Q.clients, { tenantIDs: [w.C1, w.P1, w.C2, w.D1, '1'] }));
          const seen = new Set((res.clients as { tenant_id: string }[]).map((c) => c.tenant_id));
          assert.ok(!seen.has(w.C1) && !seen.has(w.P1) && !seen.has('1'), JSON.stringify([...seen]));
        }
        const byId = data(await credCall(w, p2, Q.clients, { ids: [victim.clientId] }));
        assert.deepEqual(byId.clients, []);
      });

      it('a child cannot touch its sibling or its parent', async () => {
        const c1 = w.actors['C1.adm'].token!;
        await refusedAll([
          ['updateTenant sibling', () => tenantCall(w, c1, Q.updateTenant, { id: w.C2, u: { name: 'x' } }), 'NOT_FOUND'],
          ['updateTenant parent', () => tenantCall(w, c1, Q.updateTenant, { id: w.P1, u: { name: 'x' } }), 'NOT_FOUND'],
          ['updateTenant parent environments', () => tenantCall(w, c1, Q.updateTenant, { id: w.P1, u: { disable: true } }), 'NOT_FOUND'],
          ['enableTenantSupport sibling', () => tenantCall(w, c1, Q.enableSupport, { id: w.C2 }), 'NOT_FOUND'],
          ['enableTenantSupport parent', () => tenantCall(w, c1, Q.enableSupport, { id: w.P1 }), 'NOT_FOUND'],
          [
            'createTenantLabel sibling',
            () => tenantCall(w, c1, Q.createLabel, { id: w.C2, l: { name: 'x', owner_partner_tenant_id: w.P1 } }),
            'NOT_FOUND',
          ],
          [
            'createTenantLabel own tenant as parent',
            () => tenantCall(w, c1, Q.createLabel, { id: w.C1, l: { name: 'x', owner_partner_tenant_id: w.P1 } }),
            'NOT_FOUND',
          ],
          ['createTenant under parent', () => tenantCall(w, c1, Q.createTenant, { t: { name: 'x', partnerTenantID: w.P1 } }), 'NOT_FOUND'],
          ['assignSubscription of parent to self', () => tenantCall(w, c1, Q.assign, { t: w.C1, s: w.p1Sub }), 'NOT_FOUND'],
          ['partnerSubscriptions of parent', () => tenantCall(w, c1, Q.partnerSubscriptions, { p: w.P1 }), 'NOT_FOUND'],
          ['services of parent', () => tenantCall(w, c1, Q.services, { p: w.P1 }), 'NOT_FOUND'],
          ['deleteClient of sibling', () => credCall(w, c1, Q.deleteClient, { id: w.c2Client.id }), 'NOT_FOUND'],
          ['clients in sibling', () => credCall(w, c1, Q.clients, {}, w.C2), 'FORBIDDEN'],
          ['clients in parent', () => credCall(w, c1, Q.clients, {}, w.P1), 'FORBIDDEN'],
        ]);
        const list = data(await tenantCall(w, c1, Q.tenants, { ids: [w.P1, w.C2, '1'] })).tenants;
        assert.deepEqual([list.results, list.totalCount], [[], 0]);
        const clients = data(await credCall(w, c1, Q.clients, { tenantIDs: [w.P1, w.C2] })).clients;
        assert.deepEqual(clients, []);
      });

      it("nested partners P1 > NP > NC: NP cannot change P1's label, P1 can change NP's", async () => {
        const p1 = w.actors['P1.adm'].token!;
        const np = w.npAdmin.token!;
        // P1 labels NC in its own name (the acting tenant), NP in its own
        const p1Label = data(await tenantCall(w, p1, Q.createLabel, { id: w.NC, l: { name: unique('by-p1') } })).createTenantLabel;
        assert.equal(p1Label.owner_partner_tenant_id, w.P1);
        const npLabel = data(await tenantCall(w, np, Q.createLabel, { id: w.NC, l: { name: unique('by-np') } })).createTenantLabel;
        assert.equal(npLabel.owner_partner_tenant_id, w.NP);
        await refusedAll([
          ["NP updates P1's label", () => tenantCall(w, np, Q.updateLabel, { id: p1Label.id, l: { name: 'mine now' } }), 'FORBIDDEN'],
          ["NP deletes P1's label", () => tenantCall(w, np, Q.deleteLabel, { id: p1Label.id }), 'FORBIDDEN'],
          [
            'NP labels in the name of P1',
            () => tenantCall(w, np, Q.createLabel, { id: w.NC, l: { name: unique('x'), owner_partner_tenant_id: w.P1 } }),
            'NOT_FOUND',
          ],
          ["P2 updates P1's label", () => tenantCall(w, w.actors['P2.adm'].token!, Q.updateLabel, { id: p1Label.id, l: { name: 'x' } }), 'NOT_FOUND'],
          ["P2 deletes NP's label", () => tenantCall(w, w.actors['P2.adm'].token!, Q.deleteLabel, { id: npLabel.id }), 'NOT_FOUND'],
        ]);
        const renamed = unique('renamed-by-p1');
        assert.equal(data(await tenantCall(w, p1, Q.updateLabel, { id: npLabel.id, l: { name: renamed } })).updateTenantLabel.name, renamed);
        data(await tenantCall(w, p1, Q.deleteLabel, { id: npLabel.id }));
        assert.equal((await rows(w, sql`select 1 from tenant_labels where id = ${npLabel.id}`)).length, 0);
        assert.equal((await rows(w, sql`select 1 from tenant_labels where id = ${p1Label.id}`)).length, 1);
      });

      it('mass assignment: a child Administrator sending limits with its profile changes nothing', async () => {
        const c1 = w.actors['C1.adm'].token!;
        const calls: [string, () => Promise<Response>, string][] = [
          { name: 'x', expiresAt: '2027-01-01T00:00:00Z' },
          { description: 'x', disable: true },
          { domain: 'x.example.com', environments: [{ name: 'pilot', enabled: true }] },
          { actions_approver: 'x', clearExpiration: true },
        ].map((u) => [JSON.stringify(u), () => tenantCall(w, c1, Q.updateTenant, { id: w.C1, u }), 'FORBIDDEN']);
        await refusedAll(calls);
      });

      it("Support access: on lets staff read, off denies the staff's very next request", async () => {
        const sup = w.actors['sup.off'].token!;
        const c1 = w.actors['C1.adm'].token!;
        const visitsOf = () => rows(w, sql`select id, actor_id, details from audit_events where tenant_id = ${w.C1} and action = 'support.accessed'`);
        const earlier = new Set((await visitsOf()).map((v) => v.id));
        await setSupport(w, false, false);
        data(await tenantCall(w, c1, Q.enableSupport, { id: w.C1 }));
        assert.deepEqual(data(await tenantCall(w, sup, Q.tenants, { ids: [w.C1] })).tenants.results, [{ id: w.C1 }]);
        assert.ok(data(await credCall(w, sup, Q.clients, {}, w.C1)).clients);
        data(await tenantCall(w, c1, Q.disableSupport, { id: w.C1 }));
        assert.deepEqual(data(await tenantCall(w, sup, Q.tenants, { ids: [w.C1] })).tenants.results, []);
        assert.equal((await credCall(w, sup, Q.clients, {}, w.C1)).status, 403);
        const audited = await rows(
          w,
          sql`select action from audit_events where tenant_id = ${w.C1} and action like 'tenant.support_%' order by occurred_at`,
        );
        assert.ok(audited.some((a) => a.action === 'tenant.support_enabled') && audited.some((a) => a.action === 'tenant.support_disabled'));
        // each staff request that acted in the tenant is in its trail, naming what it asked for;
        // the tenant's own Administrator's requests are not
        const visits = (await visitsOf()).filter((v) => !earlier.has(v.id));
        assert.deepEqual(
          visits.map((v) => (typeof v.details === 'string' ? JSON.parse(v.details) : v.details)),
          [{ via: 'credential-graphql', operations: ['clients'] }],
          'the one request that acted in the tenant while it allowed support access',
        );
        assert.equal(visits[0]!.actor_id, w.actors['sup.off'].client!.id);

        // a mutation sent with an Idempotency-Key, then its replay: each showed the staff member
        // the tenant's answer, so each is in the trail
        data(await tenantCall(w, c1, Q.enableSupport, { id: w.C1 }));
        const seen = new Set((await visitsOf()).map((v) => v.id));
        const variables = { name: unique('staff-keyed') };
        const keyed = () => w.t.gql(sup, Q.createClient, variables, { tenant: w.C1, headers: { 'idempotency-key': variables.name } });
        const first = await keyed();
        const replay = await keyed();
        assert.equal(replay.headers['idempotent-replayed'], 'true', replay.text);
        assert.deepEqual(replay.body, first.body, 'the replay answers what the first request did');
        const keyedVisits = (await visitsOf()).filter((v) => !seen.has(v.id));
        assert.deepEqual(
          keyedVisits.map((v) => (typeof v.details === 'string' ? JSON.parse(v.details) : v.details)),
          [
            { via: 'credential-graphql', operations: ['createClient'] },
            { via: 'credential-graphql', operations: ['createClient'] },
          ],
          'the request and its replay',
        );
        data(await tenantCall(w, c1, Q.disableSupport, { id: w.C1 }));
      });
    });

    // ---- nested traversal never lists a tenant the caller cannot see
    describe('nested traversal', () => {
      const TRAVERSE = `{ tenants(tenantsQuery: {maxResults: 500, pageNum: 1}) { count totalCount results { id
        partnership { parent child_tenants { id partnership { parent child_tenants { id partnership { child_tenants { id partnership { child_tenants { id } } } } } } } } } } }`;

      interface Node {
        id: string;
        partnership?: { child_tenants?: Node[] };
      }

      for (const actorName of ACTORS) {
        if (actorName === 'anon' || actorName === 'self') continue;
        it(`${actorName}: every list and count at every depth holds exactly the tenants it sees`, async () => {
          const actor = w.actors[actorName];
          // Support's consent per its column; for everyone else all on (consent must not widen their view)
          const supOnly = actor.support;
          await setSupport(w, supOnly ? actorName !== 'sup.off' : true, supOnly ? actorName === 'sup.P1C1' : true);
          const all = await rows(w, sql`select id::text as id, parent_id::text as parent, path, support_enabled from tenants`);
          const sees = (t: { id: string; path: string; support_enabled: boolean }) =>
            // Support staff see exactly the consenting tenants, not their home tenant (CONTRACT.md)
            (t.id === actor.home && !actor.support) ||
            actor.roleTenants.some((r) => t.path.split('.').includes(r)) ||
            (actor.support && t.support_enabled);
          const visible = new Set(all.filter(sees).map((t) => t.id as string));
          const children = (id: string) =>
            all
              .filter((t) => t.parent === id && visible.has(t.id))
              .map((t) => t.id as string)
              .sort();

          const res = data(await tenantCall(w, actor.token, TRAVERSE)).tenants;
          const top = (res.results as Node[]).map((n) => n.id);
          assert.deepEqual([...top].sort(), [...visible].sort(), 'top-level results');
          assert.equal(res.totalCount, visible.size);
          assert.equal(res.count, visible.size);
          const walk = (nodes: Node[], depth: number) => {
            for (const n of nodes) {
              assert.ok(visible.has(n.id), `${actorName} sees tenant ${n.id} at depth ${depth}, which it cannot see`);
              const kids = n.partnership?.child_tenants;
              if (kids) {
                assert.deepEqual(kids.map((k) => k.id).sort(), children(n.id), `child_tenants of ${n.id}`);
                walk(kids, depth + 1);
              }
            }
          };
          walk(res.results as Node[], 0);
        });
      }
    });
  });
}
