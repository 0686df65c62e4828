import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { createLogger } from '../../src/logger.js';
import { createService } from '../../src/compose.js';
import { openDb } from '../../src/store/db.js';
import { disableExpiredTenants } from '../../src/tenants/expiry.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, rowCounts } from '../helpers/seed.js';
import { createTenant, tq, tenantSnapshot } from '../helpers/tenants.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

const ENABLE = `mutation($id: ID!, $until: Time, $reason: String) {
  enableTenantSupport(tenantID: $id, until: $until, reason: $reason) { id support_enabled support_expires_at support_reason updated_at } }`;
const DISABLE = `mutation($id: ID!) { disableTenantSupport(tenantID: $id) { id support_enabled support_expires_at support_reason updated_at } }`;
const READ = `query($id: ID!) { tenants(tenantsQuery: {ids: [$id]}) { count results { id name support_enabled } } }`;
const UPDATE = `mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { id enabled expires_at } }`;

async function expiryAudits(t: TestApp, ids: string[]) {
  if (ids.length === 0) return [];
  return t.db.kysely
    .selectFrom('audit_events')
    .select(['tenant_id', 'actor_kind', 'actor_id', 'target_id', 'occurred_at', 'details'])
    .where('action', '=', 'tenant.disabled_expired')
    .where('tenant_id', 'in', ids)
    .execute();
}

const code = (res: Response): string | undefined => res.body?.errors?.[0]?.extensions?.code;
const iso = (d: Date) => d.toISOString();

for (const engine of engines()) {
  describe(`tenant support access (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let partner: string;
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
      partner = await createTenant(t, '1', { isPartner: true });
    });
    after(() => t.close());

    it('enableTenantSupport and disableTenantSupport toggle support_enabled and return the tenant', async () => {
      const id = await createTenant(t, partner);
      t.clock.advance(1000);
      const on = await tq(t, root, ENABLE, { id });
      assert.equal(on.body.errors, undefined, on.text);
      assert.deepEqual(on.body.data.enableTenantSupport, {
        id,
        support_enabled: true,
        support_expires_at: null,
        support_reason: null,
        updated_at: iso(t.clock.now()),
      });
      const withSupport = await tq(t, root, `{ tenants(tenantsQuery: {withSupport: true, maxResults: 500}) { results { id } } }`);
      assert.ok(withSupport.body.data.tenants.results.some((r: any) => r.id === id));

      t.clock.advance(1000);
      const off = await tq(t, root, DISABLE, { id });
      assert.equal(off.body.errors, undefined, off.text);
      assert.deepEqual(off.body.data.disableTenantSupport, {
        id,
        support_enabled: false,
        support_expires_at: null,
        support_reason: null,
        updated_at: iso(t.clock.now()),
      });
      const actions = await t.db.kysely.selectFrom('audit_events').select('action').where('tenant_id', '=', id).orderBy('occurred_at').execute();
      assert.deepEqual(
        actions.map((a) => a.action),
        ['tenant.created', 'tenant.support_enabled', 'tenant.support_disabled'],
      );
    });

    it('records the reason on the tenant and in the audit event, and refuses one over 500 characters', async () => {
      const id = await createTenant(t, partner);
      const res = await tq(t, root, ENABLE, { id, reason: 'ticket 4711: login failures' });
      assert.equal(res.body.data.enableTenantSupport.support_reason, 'ticket 4711: login failures');
      const read = await tq(t, root, `query($id: ID!) { tenants(tenantsQuery: {ids: [$id]}) { results { support_reason } } }`, { id });
      assert.equal(read.body.data.tenants.results[0].support_reason, 'ticket 4711: login failures');
      const audit = await t.db.kysely
        .selectFrom('audit_events')
        .select('details')
        .where('tenant_id', '=', id)
        .where('action', '=', 'tenant.support_enabled')
        .executeTakeFirstOrThrow();
      assert.equal((audit.details as any).reason, 'ticket 4711: login failures');

      const before = await tenantSnapshot(t, id);
      assert.equal(code(await tq(t, root, ENABLE, { id, reason: 'x'.repeat(501) })), 'BAD_USER_INPUT');
      assert.deepEqual(await tenantSnapshot(t, id), before);
    });

    it('refuses an until in the past or more than 366 days ahead with BAD_USER_INPUT, writing nothing', async () => {
      const id = await createTenant(t, partner);
      const before = await rowCounts(t);
      const now = t.clock.now().getTime();
      for (const until of [new Date(now - 1000), new Date(now), new Date(now + 367 * DAY), new Date(now + 366 * DAY + 1)]) {
        const res = await tq(t, root, ENABLE, { id, until: iso(until) });
        assert.equal(code(res), 'BAD_USER_INPUT', iso(until));
        assert.equal(res.body.data.enableTenantSupport, null);
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.equal((await tenantSnapshot(t, id)).tenant.support_enabled, false);
      // 366 days is the longest allowed
      const max = await tq(t, root, ENABLE, { id, until: iso(new Date(now + 366 * DAY)) });
      assert.equal(max.body.errors, undefined, max.text);
      assert.equal(max.body.data.enableTenantSupport.support_expires_at, iso(new Date(now + 366 * DAY)));
    });

    it('ends support access by itself at until: support_enabled turns false and Support staff lose read access at that moment', async () => {
      const id = await createTenant(t, partner);
      const support = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
      const until = new Date(t.clock.now().getTime() + 2 * HOUR);
      const res = await tq(t, root, ENABLE, { id, until: iso(until), reason: 'time-boxed' });
      assert.equal(res.body.data.enableTenantSupport.support_expires_at, iso(until));

      t.clock.set(new Date(until.getTime() - 1));
      const seen = await tq(t, support.token, READ, { id });
      assert.equal(seen.body.data.tenants.count, 1);
      assert.deepEqual({ ...seen.body.data.tenants.results[0], name: undefined }, { id, name: undefined, support_enabled: true });
      assert.equal((await tq(t, support.token, READ, { id }, id)).status, 200);

      t.clock.set(until);
      const gone = await tq(t, support.token, READ, { id });
      assert.equal(gone.status, 200);
      assert.deepEqual(gone.body.data.tenants, { count: 0, results: [] });
      assert.equal((await tq(t, support.token, READ, { id }, id)).status, 403);
      const asAdmin = await tq(
        t,
        root,
        `query($id: ID!) { tenants(tenantsQuery: {ids: [$id]}) { results { support_enabled support_expires_at } } }`,
        { id },
      );
      assert.deepEqual(asAdmin.body.data.tenants.results, [{ support_enabled: false, support_expires_at: null }]);
      const withSupport = await tq(t, root, `{ tenants(tenantsQuery: {withSupport: true, maxResults: 500}) { results { id } } }`);
      assert.ok(!withSupport.body.data.tenants.results.some((r: any) => r.id === id));
    });

    it('lets Support staff read a tenant only while its support is on; the very next request after disabling is refused', async () => {
      const id = await createTenant(t, partner);
      const support = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
      const before = await tq(t, support.token, READ, { id });
      assert.deepEqual(before.body.data.tenants, { count: 0, results: [] });
      assert.equal((await tq(t, support.token, READ, { id }, id)).status, 403);

      await tq(t, root, ENABLE, { id });
      const during = await tq(t, support.token, READ, { id });
      assert.equal(during.body.data.tenants.count, 1);
      assert.equal(during.body.data.tenants.results[0].id, id);
      assert.equal((await tq(t, support.token, READ, { id }, id)).status, 200);

      await tq(t, root, DISABLE, { id });
      const afterOff = await tq(t, support.token, READ, { id });
      assert.deepEqual(afterOff.body.data.tenants, { count: 0, results: [] });
      const ctx = await tq(t, support.token, READ, { id }, id);
      assert.equal(ctx.status, 403);
      assert.equal(ctx.body.errors[0].extensions.code, 'FORBIDDEN');
    });

    it('lets only Administrators of the tenant or of its partners toggle support; vendor staff and Analysts get FORBIDDEN', async () => {
      const id = await createTenant(t, partner);
      const ops = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
      const support = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
      const analyst = await clientWithRoles(t, id, [ROLE_IDS.Analyst]);
      const own = await clientWithRoles(t, id, [ROLE_IDS.Administrator]);
      const partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
      const otherPartner = await createTenant(t, '1', { isPartner: true });
      const otherAdmin = await clientWithRoles(t, otherPartner, [ROLE_IDS.Administrator]);

      let before = await rowCounts(t);
      for (const [who, token] of [
        ['operations', ops.token],
        ['analyst', analyst.token],
      ] as const) {
        assert.equal(code(await tq(t, token, ENABLE, { id })), 'FORBIDDEN', who);
      }
      // Support cannot see the tenant while support is off
      assert.equal(code(await tq(t, support.token, ENABLE, { id })), 'NOT_FOUND');
      assert.equal(code(await tq(t, otherAdmin.token, ENABLE, { id })), 'NOT_FOUND');
      assert.deepEqual(await rowCounts(t), before);

      // the tenant's own Administrator consents, and can withdraw
      const on = await tq(t, own.token, ENABLE, { id, reason: 'our consent' });
      assert.equal(on.body.errors, undefined, on.text);
      assert.equal(on.body.data.enableTenantSupport.support_enabled, true);

      before = await rowCounts(t);
      for (const [who, token] of [
        ['operations', ops.token],
        ['support', support.token],
        ['analyst', analyst.token],
      ] as const) {
        assert.equal(code(await tq(t, token, DISABLE, { id })), 'FORBIDDEN', who);
        assert.equal(code(await tq(t, token, ENABLE, { id, reason: 'self-granted' })), 'FORBIDDEN', who);
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.equal((await tenantSnapshot(t, id)).tenant.support_reason, 'our consent');

      const off = await tq(t, own.token, DISABLE, { id });
      assert.equal(off.body.data.disableTenantSupport.support_enabled, false);
      // the partner's Administrator above may too
      const byPartner = await tq(t, partnerAdmin.token, ENABLE, { id });
      assert.equal(byPartner.body.data.enableTenantSupport.support_enabled, true);
      const offByPartner = await tq(t, partnerAdmin.token, DISABLE, { id });
      assert.equal(offByPartner.body.data.disableTenantSupport.support_enabled, false);
    });
  });

  describe(`tenant expiry job (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let partner: string;
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
      partner = await createTenant(t, '1', { isPartner: true });
    });
    after(() => t.close());

    /** a tenant whose expires_at lies `daysAgo` days in the past */
    async function expiredTenant(app: TestApp, daysAgo: number, opts: { environments?: string[]; from?: Date } = {}): Promise<string> {
      const id = await createTenant(app, partner, opts.environments ? { environments: opts.environments } : {});
      const from = (opts.from ?? app.clock.now()).getTime();
      const res = await tq(app, await app.rootToken(), UPDATE, { id, u: { expiresAt: iso(new Date(from - daysAgo * DAY)) } });
      assert.equal(res.body.errors, undefined, res.text);
      return id;
    }

    it('disables tenants more than 60 days past expires_at, once, and leaves the others alone', async () => {
      assert.equal(t.config.expiryGraceDays, 60);
      // the job runs 5 s from now; days are counted back from that moment
      const runAt = new Date(t.clock.now().getTime() + 5000);
      const expired = await expiredTenant(t, 61, { environments: ['echo', 'delta', 'pilot'], from: runAt });
      const recent = await expiredTenant(t, 59, { from: runAt });
      const boundary = await expiredTenant(t, 60, { from: runAt });
      const future = await createTenant(t, partner);
      await tq(t, root, UPDATE, { id: future, u: { expiresAt: iso(new Date(t.clock.now().getTime() + 30 * DAY)) } });
      const never = await createTenant(t, partner);
      const alreadyOff = await expiredTenant(t, 90);
      await tq(t, root, UPDATE, { id: alreadyOff, u: { disable: true } });
      const client = await clientWithRoles(t, expired, [ROLE_IDS.Analyst]);

      const untouched = [recent, boundary, future, never, alreadyOff];
      const before = await Promise.all(untouched.map((id) => tenantSnapshot(t, id)));
      t.clock.set(runAt);
      const now = t.clock.now();
      const disabled = await disableExpiredTenants(t.service.store, t.clock, t.config.expiryGraceDays);
      assert.deepEqual(disabled, [expired]);

      const row = await t.db.kysely.selectFrom('tenants').select(['enabled', 'updated_at']).where('id', '=', expired).executeTakeFirstOrThrow();
      assert.deepEqual(row, { enabled: false, updated_at: now });
      const envs = await t.db.kysely
        .selectFrom('tenant_environments')
        .select(['name', 'enabled', 'updated_at'])
        .where('tenant_id', '=', expired)
        .orderBy('name')
        .execute();
      assert.deepEqual(envs, [
        { name: 'delta', enabled: false, updated_at: now },
        { name: 'echo', enabled: false, updated_at: now },
        { name: 'pilot', enabled: false, updated_at: now },
      ]);
      const audits = await expiryAudits(t, [expired, ...untouched]);
      assert.equal(audits.length, 1);
      assert.deepEqual(
        { tenant: audits[0]!.tenant_id, actor: audits[0]!.actor_kind, target: audits[0]!.target_id, at: audits[0]!.occurred_at },
        { tenant: expired, actor: 'system', target: expired, at: now },
      );
      assert.deepEqual(await Promise.all(untouched.map((id) => tenantSnapshot(t, id))), before);

      // what a user notices: the tenant reads as disabled, and its clients get no tokens
      const read = await tq(
        t,
        root,
        `query($id: ID!) { tenants(tenantsQuery: {ids: [$id]}) { results { enabled enabled_in_production enabled_in_pilot updated_at } } }`,
        {
          id: expired,
        },
      );
      assert.deepEqual(read.body.data.tenants.results, [
        { enabled: false, enabled_in_production: false, enabled_in_pilot: false, updated_at: iso(now) },
      ]);
      assert.equal((await t.tokenResponse(client.clientId, client.secret)).status, 401);
      assert.equal((await t.gql(client.token, `{ clients { id } }`)).status, 401);

      // a second run, 5 s later, leaves the disabled tenant alone (same updated_at, no second audit row);
      // only the tenant that was exactly 60 days past is now more than 60 days past
      t.clock.advance(5000);
      assert.deepEqual(await disableExpiredTenants(t.service.store, t.clock, t.config.expiryGraceDays), [boundary]);
      const again = await t.db.kysely.selectFrom('tenants').select(['enabled', 'updated_at']).where('id', '=', expired).executeTakeFirstOrThrow();
      assert.deepEqual(again, { enabled: false, updated_at: now });
      assert.equal((await expiryAudits(t, [expired])).length, 1);
    });

    it('of two concurrent runs, each tenant is disabled exactly once', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push(await expiredTenant(t, 61 + i));
      const [a, b] = await Promise.all([disableExpiredTenants(t.service.store, t.clock, 60), disableExpiredTenants(t.service.store, t.clock, 60)]);
      assert.deepEqual([...a, ...b].sort(), [...ids].sort());
      const audits = await expiryAudits(t, ids);
      assert.deepEqual(audits.map((r) => r.tenant_id).sort(), [...ids].sort());
    });

    it('works through more expired tenants than one batch holds', async () => {
      const parent = await t.db.kysely.selectFrom('tenants').select(['path', 'depth']).where('id', '=', partner).executeTakeFirstOrThrow();
      const now = t.clock.now();
      const rows = Array.from({ length: 205 }, (_, i) => ({
        parent_id: partner,
        path: '',
        depth: parent.depth + 1,
        name: `bulk-${i}`,
        name_normalized: `bulk-${i}`,
        expires_at: new Date(now.getTime() - 100 * DAY - i * 1000),
        created_at: now,
        updated_at: now,
      }));
      const inserted = await t.db.kysely.insertInto('tenants').values(rows).returning('id').execute();
      await sql`update tenants set path = ${parent.path} || id::text || '.' where path = ''`.execute(t.db.kysely);
      const ids = inserted.map((r) => r.id);

      const disabled = await disableExpiredTenants(t.service.store, t.clock, 60);
      assert.deepEqual([...disabled].sort(), [...ids].sort());
      const still = await t.db.kysely.selectFrom('tenants').select('id').where('id', 'in', ids).where('enabled', '=', true).execute();
      assert.deepEqual(still, []);
      assert.equal((await expiryAudits(t, ids)).length, 205);
      assert.deepEqual(await disableExpiredTenants(t.service.store, t.clock, 60), []);
    });

    if (engine === 'postgres') {
      it('of runs in two services on the same schema, each tenant is disabled exactly once', async () => {
        const other = await startTestApp({
          engine,
          clock: t.clock,
          db: await openDb({ engine: 'postgres', url: t.db.url!, poolSize: 4 }),
        });
        try {
          const ids: string[] = [];
          for (let i = 0; i < 12; i++) ids.push(await expiredTenant(t, 70 + i));
          const parent = await t.db.kysely.selectFrom('tenants').select(['path', 'depth']).where('id', '=', partner).executeTakeFirstOrThrow();
          const now = t.clock.now();
          const bulk = await t.db.kysely
            .insertInto('tenants')
            .values(
              Array.from({ length: 450 }, (_, i) => ({
                parent_id: partner,
                path: '',
                depth: parent.depth + 1,
                name: `race-${i}`,
                name_normalized: `race-${i}`,
                expires_at: new Date(now.getTime() - 80 * DAY - i * 1000),
                created_at: now,
                updated_at: now,
              })),
            )
            .returning('id')
            .execute();
          await sql`update tenants set path = ${parent.path} || id::text || '.' where path = ''`.execute(t.db.kysely);
          ids.push(...bulk.map((r) => r.id));

          const results = await Promise.all([
            disableExpiredTenants(t.service.store, t.clock, 60),
            disableExpiredTenants(other.service.store, t.clock, 60),
            disableExpiredTenants(t.service.store, t.clock, 60),
            disableExpiredTenants(other.service.store, t.clock, 60),
          ]);
          const all = results.flat();
          assert.equal(all.length, ids.length);
          assert.deepEqual([...all].sort(), [...ids].sort());
          const audits = await expiryAudits(t, ids);
          assert.equal(audits.length, ids.length);
          assert.equal(new Set(audits.map((r) => r.tenant_id)).size, ids.length);
        } finally {
          await other.close();
        }
      });
    }
  });

  describe(`tenant expiry with GATEHOUSE_EXPIRY_GRACE_DAYS=10 (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let partner: string;
    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_EXPIRY_GRACE_DAYS: '10' } });
      root = await t.rootToken();
      partner = await createTenant(t, '1', { isPartner: true });
    });
    after(() => t.close());

    const expireDaysAgo = async (days: number) => {
      const id = await createTenant(t, partner);
      const res = await tq(t, root, UPDATE, { id, u: { expiresAt: iso(new Date(t.clock.now().getTime() - days * DAY)) } });
      assert.equal(res.body.errors, undefined, res.text);
      return id;
    };

    it('disables after the configured grace, in the job a service runs at start', async () => {
      assert.equal(t.config.expiryGraceDays, 10);
      const eleven = await expireDaysAgo(11);
      const nine = await expireDaysAgo(9);
      // a second service on the same database with the background job on: it runs once at start,
      // and close() waits for that run
      const svc = await createService({
        config: t.config,
        db: { ...t.db, close: async () => {} },
        logger: createLogger('silent'),
        clock: t.clock,
        migrate: false,
        flushIntervalMs: null,
        expiryIntervalMs: 3_600_000,
      });
      await svc.close();
      const rows = await t.db.kysely.selectFrom('tenants').select(['id', 'enabled']).where('id', 'in', [eleven, nine]).orderBy('id').execute();
      assert.deepEqual(Object.fromEntries(rows.map((r) => [r.id, r.enabled])), { [eleven]: false, [nine]: true });
      assert.equal((await expiryAudits(t, [eleven, nine])).length, 1);
      assert.deepEqual(await disableExpiredTenants(t.service.store, t.clock, t.config.expiryGraceDays), []);
    });

    it('uses the configured grace when deciding whether a disabled tenant may be enabled again', async () => {
      const id = await expireDaysAgo(12);
      await disableExpiredTenants(t.service.store, t.clock, t.config.expiryGraceDays);
      const enable = { environments: [{ name: 'echo', enabled: true }] };
      assert.equal(code(await tq(t, root, UPDATE, { id, u: enable })), 'BAD_USER_INPUT');
      // 12 days past is refused above (the default 60 would allow it); 9 days past is within the 10-day grace
      const within = iso(new Date(t.clock.now().getTime() - 9 * DAY));
      const ok = await tq(t, root, UPDATE, { id, u: { ...enable, expiresAt: within } });
      assert.equal(ok.body.errors, undefined, ok.text);
      assert.deepEqual(ok.body.data.updateTenant, { id, enabled: true, expires_at: within });
    });
  });
}
