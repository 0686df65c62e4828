import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { ROLE_IDS } from '../../src/access/roles.js';
import { disableExpiredTenants } from '../../src/tenants/expiry.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, rowCounts } from '../helpers/seed.js';
import { createTenant, tq, tenantSnapshot } from '../helpers/tenants.js';

const DAY = 86_400_000;

const TENANT_FIELDS = `id created_at updated_at name name_normalized enabled domain domain_normalized description
  allow_response_actions actions_approver
  labels { id tenant_id name value owner_partner_tenant_id restricted created_at updated_at }
  environments { id created_at updated_at tenant_id name enabled }
  services { id name description owner_tenant_id created_at updated_at }
  expires_at
  partnership { parent is_partner subscriptions { id service_id name description created_at updated_at partner_tenant_id retired_at } child_tenants { id name } }
  support_enabled support_expires_at support_reason enabled_in_production enabled_in_pilot`;

const CREATE = `mutation($t: TenantCreateInput!) { createTenant(newTenant: $t) { ${TENANT_FIELDS} } }`;
const UPDATE = `mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) {
  id name updated_at enabled expires_at enabled_in_production enabled_in_pilot environments { name enabled updated_at } } }`;

function code(res: Response): string | undefined {
  return res.body?.errors?.[0]?.extensions?.code;
}

function envMap(envs: { name: string; enabled: boolean }[]): Record<string, boolean> {
  return Object.fromEntries(envs.map((e) => [e.name, e.enabled]));
}

for (const engine of engines()) {
  describe(`createTenant and updateTenant (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let partner: string;
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
      partner = await createTenant(t, '1', { isPartner: true, name: 'Acme Partner' });
    });
    after(() => t.close());

    const update = (token: string, id: string, u: Record<string, unknown>) => tq(t, token, UPDATE, { id, u });

    describe('createTenant', () => {
      it('creates an active tenant under a partner, with labels and environments, and every field resolves', async () => {
        const now = t.clock.now().toISOString();
        const res = await tq(t, root, CREATE, {
          t: {
            name: '  ＡＣＭＥ   Widgets ',
            partnerTenantID: partner,
            environments: ['Echo', 'pilot'],
            labels: [
              { name: 'tier', value: 'gold' },
              { name: 'region', value: 'eu', owner_partner_tenant_id: '1' },
            ],
            domain: 'Bücher.Example',
            description: 'widgets and more',
            allow_response_actions: true,
            actions_approver: 'secops@acme.example',
          },
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.errors, undefined, res.text);
        const c = res.body.data.createTenant;
        assert.match(c.id, /^[1-9][0-9]*$/);
        assert.equal(c.created_at, now);
        assert.equal(c.updated_at, now);
        assert.equal(c.name, 'ＡＣＭＥ Widgets');
        assert.equal(c.name_normalized, 'acme widgets');
        assert.equal(c.enabled, true);
        assert.equal(c.domain, 'Bücher.Example');
        assert.equal(c.domain_normalized, 'xn--bcher-kva.example');
        assert.equal(c.description, 'widgets and more');
        assert.equal(c.allow_response_actions, true);
        assert.equal(c.actions_approver, 'secops@acme.example');
        assert.deepEqual(
          c.labels.map((l: any) => ({
            name: l.name,
            value: l.value,
            owner: l.owner_partner_tenant_id,
            tenant: l.tenant_id,
            restricted: l.restricted,
          })),
          [
            { name: 'region', value: 'eu', owner: '1', tenant: c.id, restricted: false },
            { name: 'tier', value: 'gold', owner: partner, tenant: c.id, restricted: false },
          ],
        );
        for (const l of c.labels) {
          assert.match(l.id, /^[0-9a-f-]{36}$/);
          assert.equal(l.created_at, now);
        }
        assert.deepEqual(
          c.environments.map((e: any) => ({ name: e.name, enabled: e.enabled, tenant_id: e.tenant_id, created_at: e.created_at })),
          [
            { name: 'echo', enabled: true, tenant_id: c.id, created_at: now },
            { name: 'pilot', enabled: true, tenant_id: c.id, created_at: now },
          ],
        );
        assert.deepEqual(c.services, []);
        assert.equal(c.expires_at, null);
        assert.deepEqual(c.partnership, { parent: partner, is_partner: false, subscriptions: [], child_tenants: [] });
        assert.equal(c.support_enabled, false);
        assert.equal(c.support_expires_at, null);
        assert.equal(c.support_reason, null);
        assert.equal(c.enabled_in_production, true);
        assert.equal(c.enabled_in_pilot, true);

        // the partner lists it among its children, and a search finds it by its normalized name
        const p = await tq(
          t,
          root,
          `query($id: ID!) { tenants(tenantsQuery: {ids: [$id]}) { results { partnership { is_partner child_tenants { id } } } } }`,
          {
            id: partner,
          },
        );
        const partnership = p.body.data.tenants.results[0].partnership;
        assert.equal(partnership.is_partner, true);
        assert.ok(partnership.child_tenants.some((x: any) => x.id === c.id));
        const found = await tq(t, root, `{ tenants(tenantsQuery: {name: "acme widgets"}) { results { id } } }`);
        assert.deepEqual(found.body.data.tenants.results, [{ id: c.id }]);
        // one audit event for the creation
        const audit = await t.db.kysely.selectFrom('audit_events').select(['action', 'target_id']).where('tenant_id', '=', c.id).execute();
        assert.deepEqual(audit, [{ action: 'tenant.created', target_id: c.id }]);
      });

      it('enables a tenant created without environments in echo only', async () => {
        const res = await tq(t, root, CREATE, { t: { name: 'default-env', partnerTenantID: partner } });
        const c = res.body.data.createTenant;
        assert.deepEqual(envMap(c.environments), { echo: true });
        assert.equal(c.enabled, true);
        assert.equal(c.enabled_in_production, true);
        assert.equal(c.enabled_in_pilot, false);
      });

      it('refuses an empty environment list with BAD_USER_INPUT and writes nothing', async () => {
        const before = await rowCounts(t);
        const res = await tq(t, root, CREATE, { t: { name: 'no-envs', partnerTenantID: partner, environments: [] } });
        assert.equal(code(res), 'BAD_USER_INPUT');
        assert.equal(res.body.data.createTenant, null);
        assert.deepEqual(await rowCounts(t), before);
      });

      it('refuses an unknown environment with BAD_USER_INPUT naming it, and writes nothing', async () => {
        const before = await rowCounts(t);
        const res = await tq(t, root, CREATE, {
          t: { name: 'bad-env', partnerTenantID: partner, environments: ['echo', 'gamma'], labels: [{ name: 'x', value: 'y' }] },
        });
        assert.equal(code(res), 'BAD_USER_INPUT');
        assert.match(res.body.errors[0].message, /gamma/);
        assert.deepEqual(await rowCounts(t), before);
      });

      it('refuses labels named twice, or owned by a tenant that is not a partner above, with BAD_USER_INPUT, writing nothing', async () => {
        const other = await createTenant(t, '1', { isPartner: true });
        const before = await rowCounts(t);
        const twice = await tq(t, root, CREATE, {
          t: {
            name: 'twice',
            partnerTenantID: partner,
            labels: [
              { name: 'tier', value: 'a' },
              { name: 'TIER', value: 'b' },
            ],
          },
        });
        assert.equal(code(twice), 'BAD_USER_INPUT');
        const sideways = await tq(t, root, CREATE, {
          t: { name: 'sideways', partnerTenantID: partner, labels: [{ name: 'tier', value: 'a', owner_partner_tenant_id: other }] },
        });
        assert.equal(code(sideways), 'BAD_USER_INPUT');
        assert.deepEqual(await rowCounts(t), before);
      });

      it('refuses to create under a tenant that is not a partner (BAD_USER_INPUT, nothing written)', async () => {
        const plain = await createTenant(t, partner);
        const before = await rowCounts(t);
        const res = await tq(t, root, CREATE, { t: { name: 'under-plain', partnerTenantID: plain } });
        assert.equal(code(res), 'BAD_USER_INPUT');
        assert.deepEqual(await rowCounts(t), before);
      });

      it('lets an Administrator create a partner, and refuses isPartner to Operations with FORBIDDEN', async () => {
        const made = await tq(t, root, CREATE, { t: { name: 'new-partner', partnerTenantID: '1', isPartner: true } });
        assert.equal(made.body.data.createTenant.partnership.is_partner, true);
        assert.equal(made.body.data.createTenant.partnership.parent, '1');

        const ops = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
        const before = await rowCounts(t);
        const refused = await tq(t, ops.token, CREATE, { t: { name: 'ops-partner', partnerTenantID: '1', isPartner: true } });
        assert.equal(code(refused), 'FORBIDDEN');
        assert.deepEqual(await rowCounts(t), before);
        // Operations still creates ordinary tenants
        const plain = await tq(t, ops.token, CREATE, { t: { name: 'ops-plain', partnerTenantID: partner } });
        assert.equal(plain.body.errors, undefined, plain.text);
        assert.equal(plain.body.data.createTenant.partnership.is_partner, false);
      });

      it('refuses Analysts of the partner with FORBIDDEN', async () => {
        const analyst = await clientWithRoles(t, partner, [ROLE_IDS.Analyst]);
        const before = await rowCounts(t);
        const res = await tq(t, analyst.token, CREATE, { t: { name: 'by-analyst', partnerTenantID: partner } });
        assert.equal(code(res), 'FORBIDDEN');
        assert.deepEqual(await rowCounts(t), before);
      });

      it('answers NOT_FOUND for a partner the caller cannot see, the same as for one that does not exist', async () => {
        const other = await createTenant(t, '1', { isPartner: true });
        const admin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
        const before = await rowCounts(t);
        const hidden = await tq(t, admin.token, CREATE, { t: { name: 'sneaky', partnerTenantID: other } });
        const missing = await tq(t, admin.token, CREATE, { t: { name: 'sneaky', partnerTenantID: '987654321' } });
        assert.equal(code(hidden), 'NOT_FOUND');
        assert.equal(code(missing), 'NOT_FOUND');
        assert.equal(hidden.body.errors[0].message, missing.body.errors[0].message);
        assert.deepEqual(await rowCounts(t), before);
      });

      it('lets a partner Administrator create a nested partner and tenants under it', async () => {
        const admin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
        const nested = await tq(t, admin.token, CREATE, { t: { name: 'nested-partner', partnerTenantID: partner, isPartner: true } });
        assert.equal(nested.body.errors, undefined, nested.text);
        const n = nested.body.data.createTenant;
        assert.deepEqual({ parent: n.partnership.parent, is_partner: n.partnership.is_partner }, { parent: partner, is_partner: true });
        const grandchild = await tq(t, admin.token, CREATE, { t: { name: 'grandchild', partnerTenantID: n.id } });
        assert.equal(grandchild.body.errors, undefined, grandchild.text);
        assert.equal(grandchild.body.data.createTenant.partnership.parent, n.id);
        const list = await tq(
          t,
          admin.token,
          `query($id: ID!) { tenants(tenantsQuery: {ids: [$id]}) { results { partnership { child_tenants { id } } } } }`,
          {
            id: n.id,
          },
        );
        assert.deepEqual(list.body.data.tenants.results[0].partnership.child_tenants, [{ id: grandchild.body.data.createTenant.id }]);
      });

      it('normalizes internationalized domains to lower-case ASCII and refuses what is not a domain', async () => {
        const res = await tq(t, root, CREATE, { t: { name: 'idn', partnerTenantID: partner, domain: 'MÜNCHEN.Bücher.example.' } });
        const c = res.body.data.createTenant;
        assert.equal(c.domain, 'MÜNCHEN.Bücher.example');
        assert.equal(c.domain_normalized, 'xn--mnchen-3ya.xn--bcher-kva.example');
        const before = await rowCounts(t);
        const bad = await tq(t, root, CREATE, { t: { name: 'bad-domain', partnerTenantID: partner, domain: 'not a domain' } });
        assert.equal(code(bad), 'BAD_USER_INPUT');
        assert.deepEqual(await rowCounts(t), before);
      });
    });

    describe('updateTenant: the state table', () => {
      it('changes several environments in one request; all disabled is inactive, one re-enabled is active again', async () => {
        const id = await createTenant(t, partner, { environments: ['echo', 'delta', 'pilot'] });
        const a = await update(root, id, {
          environments: [
            { name: 'echo', enabled: false },
            { name: 'DELTA', enabled: false },
          ],
        });
        assert.equal(a.body.errors, undefined, a.text);
        let u = a.body.data.updateTenant;
        assert.deepEqual(envMap(u.environments), { delta: false, echo: false, pilot: true });
        assert.deepEqual([u.enabled, u.enabled_in_production, u.enabled_in_pilot], [true, false, true]);

        u = (await update(root, id, { environments: [{ name: 'pilot', enabled: false }] })).body.data.updateTenant;
        assert.deepEqual(envMap(u.environments), { delta: false, echo: false, pilot: false });
        assert.deepEqual([u.enabled, u.enabled_in_production, u.enabled_in_pilot], [false, false, false]);
        const off = await tq(t, root, `{ tenants(tenantsQuery: {environmentFilter: {enabled: false}, maxResults: 500}) { results { id } } }`);
        assert.ok(off.body.data.tenants.results.some((r: any) => r.id === id));

        u = (await update(root, id, { environments: [{ name: 'delta', enabled: true }] })).body.data.updateTenant;
        assert.deepEqual(envMap(u.environments), { delta: true, echo: false, pilot: false });
        assert.deepEqual([u.enabled, u.enabled_in_production, u.enabled_in_pilot], [true, true, false]);
      });

      it('applies entries in order and adds an environment the tenant was not in', async () => {
        const id = await createTenant(t, partner);
        const u = (
          await update(root, id, {
            environments: [
              { name: 'echo', enabled: false },
              { name: 'pilot', enabled: true },
              { name: 'echo', enabled: true },
              { name: 'pilot', enabled: false },
            ],
          })
        ).body.data.updateTenant;
        assert.deepEqual(envMap(u.environments), { echo: true, pilot: false });
        assert.equal(u.enabled, true);
      });

      it('refuses an unknown environment name with BAD_USER_INPUT and changes nothing', async () => {
        const id = await createTenant(t, partner);
        const before = await tenantSnapshot(t, id);
        const res = await update(root, id, {
          environments: [
            { name: 'echo', enabled: false },
            { name: 'zulu', enabled: true },
          ],
        });
        assert.equal(code(res), 'BAD_USER_INPUT');
        assert.deepEqual(await tenantSnapshot(t, id), before);
      });

      it('disable: true disables every environment', async () => {
        const id = await createTenant(t, partner, { environments: ['echo', 'pilot'] });
        const u = (await update(root, id, { disable: true })).body.data.updateTenant;
        assert.deepEqual(envMap(u.environments), { echo: false, pilot: false });
        assert.deepEqual([u.enabled, u.enabled_in_production, u.enabled_in_pilot], [false, false, false]);
      });

      it('applies environments first and disable last when both are sent', async () => {
        const id = await createTenant(t, partner);
        const u = (await update(root, id, { environments: [{ name: 'pilot', enabled: true }], disable: true })).body.data.updateTenant;
        assert.deepEqual(envMap(u.environments), { echo: false, pilot: false });
        assert.equal(u.enabled, false);
      });

      it('sets expiresAt with and without a trailing Z, and clears it', async () => {
        const id = await createTenant(t, partner);
        let u = (await update(root, id, { expiresAt: '2027-03-01T00:00:00Z' })).body.data.updateTenant;
        assert.equal(u.expires_at, '2027-03-01T00:00:00.000Z');
        assert.equal(u.enabled, true);
        u = (await update(root, id, { expiresAt: '2027-04-15T12:30:00' })).body.data.updateTenant;
        assert.equal(u.expires_at, '2027-04-15T12:30:00.000Z');
        u = (await update(root, id, { clearExpiration: true })).body.data.updateTenant;
        assert.equal(u.expires_at, null);
        assert.equal(u.enabled, true);
        const bad = await update(root, id, { expiresAt: 'next tuesday' });
        assert.equal(code(bad), 'BAD_USER_INPUT');
      });

      it('disables and clears the expiration in one request', async () => {
        const id = await createTenant(t, partner);
        await update(root, id, { expiresAt: '2027-03-01T00:00:00Z' });
        const u = (await update(root, id, { disable: true, clearExpiration: true })).body.data.updateTenant;
        assert.equal(u.enabled, false);
        assert.equal(u.expires_at, null);
      });

      it('refuses expiresAt together with clearExpiration with BAD_USER_INPUT and changes nothing', async () => {
        const id = await createTenant(t, partner);
        await update(root, id, { expiresAt: '2027-03-01T00:00:00Z' });
        const before = await tenantSnapshot(t, id);
        const res = await update(root, id, { expiresAt: '2028-01-01T00:00:00Z', clearExpiration: true, name: 'renamed-too' });
        assert.equal(code(res), 'BAD_USER_INPUT');
        assert.deepEqual(await tenantSnapshot(t, id), before);
      });

      it('moves updated_at on a change and not on a no-op', async () => {
        const id = await createTenant(t, partner, { name: 'stable-name' });
        const created = (await tenantSnapshot(t, id)).tenant.updated_at;
        t.clock.advance(1000);
        const empty = await update(root, id, {});
        assert.equal(empty.body.errors, undefined, empty.text);
        assert.equal(empty.body.data.updateTenant.updated_at, created.toISOString());
        // restating what is already so changes nothing either
        const before = await tenantSnapshot(t, id);
        const same = await update(root, id, { name: 'stable-name', environments: [{ name: 'echo', enabled: true }] });
        assert.equal(same.body.errors, undefined, same.text);
        assert.equal(same.body.data.updateTenant.updated_at, created.toISOString());
        assert.deepEqual(await tenantSnapshot(t, id), before);

        t.clock.advance(1000);
        const renamed = await update(root, id, { name: 'moving-name' });
        assert.equal(renamed.body.data.updateTenant.name, 'moving-name');
        assert.equal(renamed.body.data.updateTenant.updated_at, t.clock.now().toISOString());
        t.clock.advance(1000);
        const env = await update(root, id, { environments: [{ name: 'pilot', enabled: true }] });
        assert.equal(env.body.data.updateTenant.updated_at, t.clock.now().toISOString());
        // only the environment that changed moved
        const envs = Object.fromEntries(env.body.data.updateTenant.environments.map((e: any) => [e.name, e.updated_at]));
        assert.equal(envs.pilot, t.clock.now().toISOString());
        assert.equal(envs.echo, created.toISOString());
      });

      it('never disables the root tenant 1 nor gives it an expiry', async () => {
        const before = await tenantSnapshot(t, '1');
        for (const u of [
          { disable: true },
          { expiresAt: '2030-01-01T00:00:00Z' },
          {
            environments: [
              { name: 'echo', enabled: false },
              { name: 'delta', enabled: false },
              { name: 'pilot', enabled: false },
            ],
          },
        ]) {
          const res = await update(root, '1', u);
          assert.equal(code(res), 'BAD_USER_INPUT', JSON.stringify(u));
        }
        assert.deepEqual(await tenantSnapshot(t, '1'), before);
      });
    });

    describe('updateTenant: who may change what', () => {
      it("lets the tenant's own Administrator rename it, but not change its environments or expiry (FORBIDDEN, nothing changes)", async () => {
        const id = await createTenant(t, partner, { name: 'self-managed' });
        const own = await clientWithRoles(t, id, [ROLE_IDS.Administrator]);
        const renamed = await update(own.token, id, { name: 'self-renamed', description: 'ours' });
        assert.equal(renamed.body.errors, undefined, renamed.text);
        assert.equal(renamed.body.data.updateTenant.name, 'self-renamed');

        const before = await tenantSnapshot(t, id);
        for (const u of [
          { expiresAt: '2030-01-01T00:00:00Z' },
          { environments: [{ name: 'pilot', enabled: true }] },
          { disable: true },
          { clearExpiration: true },
          { name: 'sneaky-rename', expiresAt: '2030-01-01T00:00:00Z' },
        ]) {
          const res = await update(own.token, id, u);
          assert.equal(code(res), 'FORBIDDEN', JSON.stringify(u));
          assert.equal(res.body.data.updateTenant, null);
        }
        assert.deepEqual(await tenantSnapshot(t, id), before);

        // the partner's Administrator above may
        const partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
        const managed = await update(partnerAdmin.token, id, { expiresAt: '2030-01-01T00:00:00Z', environments: [{ name: 'pilot', enabled: true }] });
        assert.equal(managed.body.errors, undefined, managed.text);
        assert.equal(managed.body.data.updateTenant.expires_at, '2030-01-01T00:00:00.000Z');
        assert.deepEqual(envMap(managed.body.data.updateTenant.environments), { echo: true, pilot: true });
      });

      it('refuses a rename to an Analyst (FORBIDDEN) and hides tenants of other partners (NOT_FOUND)', async () => {
        const id = await createTenant(t, partner);
        const analyst = await clientWithRoles(t, id, [ROLE_IDS.Analyst]);
        const before = await tenantSnapshot(t, id);
        assert.equal(code(await update(analyst.token, id, { name: 'analyst-name' })), 'FORBIDDEN');
        const otherPartner = await createTenant(t, '1', { isPartner: true });
        const otherAdmin = await clientWithRoles(t, otherPartner, [ROLE_IDS.Administrator]);
        assert.equal(code(await update(otherAdmin.token, id, { name: 'foreign-name' })), 'NOT_FOUND');
        assert.equal(code(await update(otherAdmin.token, id, { disable: true })), 'NOT_FOUND');
        assert.deepEqual(await tenantSnapshot(t, id), before);
      });

      it('cannot re-enable a tenant disabled past its grace period without a later expiresAt or clearExpiration', async () => {
        const grace = t.config.expiryGraceDays;
        const id = await createTenant(t, partner);
        const past = new Date(t.clock.now().getTime() - (grace + 1) * DAY).toISOString();
        await update(root, id, { expiresAt: past });
        assert.deepEqual(await disableExpiredTenants(t.service.store, t.clock, grace), [id]);

        const before = await tenantSnapshot(t, id);
        const refused = await update(root, id, { environments: [{ name: 'echo', enabled: true }] });
        assert.equal(code(refused), 'BAD_USER_INPUT');
        assert.match(refused.body.errors[0].message, /expiresAt|clearExpiration/);
        // an expiresAt that is still past its grace does not help
        const stillPast = new Date(t.clock.now().getTime() - (grace + 1) * DAY + 3600_000).toISOString();
        assert.equal(code(await update(root, id, { environments: [{ name: 'echo', enabled: true }], expiresAt: stillPast })), 'BAD_USER_INPUT');
        assert.deepEqual(await tenantSnapshot(t, id), before);

        const later = new Date(t.clock.now().getTime() + 30 * DAY).toISOString();
        const ok = await update(root, id, { environments: [{ name: 'echo', enabled: true }], expiresAt: later });
        assert.equal(ok.body.errors, undefined, ok.text);
        assert.equal(ok.body.data.updateTenant.enabled, true);
        assert.equal(ok.body.data.updateTenant.expires_at, later);

        // the same with clearExpiration
        const other = await createTenant(t, partner);
        await update(root, other, { expiresAt: past });
        await disableExpiredTenants(t.service.store, t.clock, grace);
        const cleared = await update(root, other, { environments: [{ name: 'echo', enabled: true }], clearExpiration: true });
        assert.equal(cleared.body.errors, undefined, cleared.text);
        assert.deepEqual([cleared.body.data.updateTenant.enabled, cleared.body.data.updateTenant.expires_at], [true, null]);
      });
    });

    describe('updateTenant: administrators at once', () => {
      /** What a user can see of the tenant: its row and its environments, straight from the database. */
      const state = async (id: string) => {
        const row = await t.db.kysely
          .selectFrom('tenants')
          .select(['name', 'description', 'domain', 'enabled', 'expires_at'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        const envs = await t.db.kysely.selectFrom('tenant_environments').select(['name', 'enabled']).where('tenant_id', '=', id).execute();
        return {
          name: row.name,
          description: row.description,
          domain: row.domain,
          enabled: row.enabled,
          expires_at: row.expires_at ? new Date(row.expires_at).toISOString() : null,
          envs: envMap(envs),
        };
      };
      const ok = (res: Response, who: string) => assert.equal(res.body.errors, undefined, `${who}: ${res.text}`);

      it("two administrators' conflicting updates at once, round after round, end as one of the serial orders, never half-applied", async (ctx) => {
        // T under the nested partner NP under partner: T's own Administrator edits T's profile,
        // NP's and partner's Administrators manage its environments and expiry
        const np = await createTenant(t, partner, { isPartner: true });
        const id = await createTenant(t, np, { name: 'contested', environments: ['echo'] });
        const own = await clientWithRoles(t, id, [ROLE_IDS.Administrator]);
        const npAdmin = await clientWithRoles(t, np, [ROLE_IDS.Administrator]);
        const topAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
        const at = (days: number) => new Date(t.clock.now().getTime() + days * DAY).toISOString();
        // On PostgreSQL, hold each racing transaction until both have begun, so that they really
        // overlap (on PGlite one connection runs one transaction at a time: they cannot).
        let arrived: (() => void)[] | undefined;
        const bothBegun = () =>
          new Promise<void>((resolve) => {
            if (!arrived) return resolve();
            arrived.push(resolve);
            if (arrived.length === 2) for (const go of arrived.splice(0)) go();
          });
        const store = t.service.store;
        const transaction = store.transaction.bind(store);
        if (engine === 'postgres') {
          ctx.mock.method(store, 'transaction', (fn: Parameters<typeof store.transaction>[0]) =>
            transaction((tx) =>
              fn({
                ...tx,
                tenants: {
                  ...tx.tenants,
                  lockTenant: async (tenantId: string) => {
                    await bothBegun();
                    return tx.tenants.lockTenant(tenantId);
                  },
                },
              }),
            ),
          );
        }
        const race = async <T>(a: () => Promise<T>, b: () => Promise<T>): Promise<[T, T]> => {
          arrived = engine === 'postgres' ? [] : undefined;
          try {
            return await Promise.all([a(), b()]);
          } finally {
            arrived = undefined;
          }
        };
        for (let r = 0; r < 8; r++) {
          // the tenant's Administrator against its partner's: profile against profile and limits
          const before = await state(id);
          const pilot = r % 2 === 0;
          const expires = at(30 + r);
          const ownToken = await t.token(own.clientId, own.secret);
          const [mine, theirs] = await race(
            () => update(ownToken, id, { name: `own-${r}`, description: `own ${r}`, domain: `own${r}.example` }),
            () =>
              update(npAdmin.token, id, {
                name: `np-${r}`,
                description: `np ${r}`,
                environments: [{ name: 'pilot', enabled: pilot }],
                expiresAt: expires,
              }),
          );
          ok(mine, 'own');
          ok(theirs, 'np');
          const both = { domain: `own${r}.example`, enabled: true, expires_at: expires, envs: { ...before.envs, echo: true, pilot } };
          const serial = [
            { ...both, name: `own-${r}`, description: `own ${r}` }, // the partner's first
            { ...both, name: `np-${r}`, description: `np ${r}` }, // the tenant's first
          ];
          const after1 = await state(id);
          assert.ok(
            serial.some((s) => isDeepStrictEqual(s, after1)),
            `round ${r}, profile against limits: ${JSON.stringify(after1)} is none of ${JSON.stringify(serial)}`,
          );

          // two partners' Administrators: one turns an environment on, the other disables the tenant with a new expiry
          const until = at(60 + r);
          const [enabling, disabling] = await race(
            () => update(npAdmin.token, id, { environments: [{ name: 'pilot', enabled: true }] }),
            () => update(topAdmin.token, id, { disable: true, expiresAt: until }),
          );
          ok(enabling, 'np');
          ok(disabling, 'partner');
          const profile = { name: after1.name, description: after1.description, domain: after1.domain, expires_at: until };
          const limits = [
            { ...profile, enabled: false, envs: { echo: false, pilot: false } }, // pilot on, then all off
            { ...profile, enabled: true, envs: { echo: false, pilot: true } }, // all off, then pilot on
          ];
          const after2 = await state(id);
          assert.ok(
            limits.some((s) => isDeepStrictEqual(s, after2)),
            `round ${r}, enable against disable: ${JSON.stringify(after2)} is none of ${JSON.stringify(limits)}`,
          );
          // back to enabled for the next round; the tenant's client gets a token issued after that
          ok(await update(root, id, { environments: [{ name: 'echo', enabled: true }], clearExpiration: true }), 'root');
          t.clock.advance(1000);
        }
      });
    });

    describe('disabled tenants', () => {
      it("stops a disabled tenant's clients: no new tokens (401 invalid_client) and held tokens get 401", async () => {
        const id = await createTenant(t, partner);
        const client = await clientWithRoles(t, id, [ROLE_IDS.Analyst]);
        assert.equal((await t.gql(client.token, `{ clients { id } }`)).status, 200);

        await update(root, id, { disable: true });
        const tokenRes = await t.tokenResponse(client.clientId, client.secret);
        assert.equal(tokenRes.status, 401);
        assert.equal(tokenRes.body.error, 'invalid_client');
        const held = await t.gql(client.token, `{ clients { id } }`);
        assert.equal(held.status, 401);
        assert.equal(held.body.errors[0].extensions.code, 'UNAUTHENTICATED');
        const heldTenant = await tq(t, client.token, `{ tenants { count } }`);
        assert.equal(heldTenant.status, 401);

        // enabled again, the same credentials work again
        await update(root, id, { environments: [{ name: 'echo', enabled: true }] });
        assert.equal((await t.tokenResponse(client.clientId, client.secret)).status, 200);
        assert.equal((await t.gql(client.token, `{ clients { id } }`)).status, 200);
      });

      it('does not affect the children of a disabled partner', async () => {
        const p = await createTenant(t, '1', { isPartner: true });
        const child = await createTenant(t, p);
        const client = await clientWithRoles(t, child, [ROLE_IDS.Analyst]);
        await update(root, p, { disable: true });
        assert.equal((await t.tokenResponse(client.clientId, client.secret)).status, 200);
        assert.equal((await t.gql(client.token, `{ clients { id } }`)).status, 200);
      });
    });
  });
}
