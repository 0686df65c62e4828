// Page mode's totalCount of an unfiltered view comes from the subtree sizes the database keeps
// (migration 20261127T1000) instead of counting the subtree: it must stay exactly the count, for
// the vendor, for a partner, with forHierarchies, under concurrent creations, and after the
// maintenance folds the appended rows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { purgeExpired } from '../../src/maintenance/purge.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const TOTAL = 'query($q: TenantsQuery!) { tenants(tenantsQuery: $q) { totalCount results { id } } }';

for (const engine of engines()) {
  describe(`unfiltered totalCount from subtree sizes (${engine})`, () => {
    let t: TestApp;
    let partner: string;
    let nested: string;
    let partnerToken: string;
    const total = async (token: string, q: Record<string, unknown> = {}) => {
      const r = await tq(t, token, TOTAL, { q: { pageNum: 1, ...q } });
      assert.equal(r.body.errors, undefined, r.text);
      return r.body.data.tenants.totalCount as number;
    };
    const counted = async (ancestor?: string) =>
      Number(
        (ancestor
          ? await sql<{ n: string }>`select count(*)::text as n from tenants where path like ${`%.${ancestor}.%`} or id = ${ancestor}`.execute(
              t.db.kysely,
            )
          : await sql<{ n: string }>`select count(*)::text as n from tenants`.execute(t.db.kysely)
        ).rows[0]!.n,
      );
    const sizeRows = async () =>
      Number((await sql<{ n: string }>`select count(*)::text as n from tenant_subtree_sizes`.execute(t.db.kysely)).rows[0]!.n);

    before(async () => {
      t = await startTestApp({ engine });
      partner = await createTenant(t, '1', { isPartner: true });
      for (let i = 0; i < 5; i++) await createTenant(t, partner);
      nested = await createTenant(t, partner, { isPartner: true });
      for (let i = 0; i < 3; i++) await createTenant(t, nested);
      partnerToken = (await clientWithRoles(t, partner, [ROLE_IDS.Administrator])).token;
    });
    after(() => t.close());

    it('equals the count for the vendor, a partner, and forHierarchies', async () => {
      const root = await t.rootToken();
      assert.equal(await total(root), await counted());
      assert.equal(await total(partnerToken), 10, 'the partner, its 5 children, the nested partner and its 3');
      assert.equal(await total(partnerToken), await counted(partner));
      assert.equal(await total(root, { forHierarchies: [nested] }), 4);
      assert.equal(await total(partnerToken, { forHierarchies: [nested, partner] }), 10, 'overlapping hierarchies count once');
      // a filter is counted, not summed: the same view with a filter that every tenant passes agrees
      assert.equal(await total(partnerToken, { withSupport: false }), 10);
    });

    it('stays exact under concurrent creations, and after the maintenance folds the rows', async () => {
      const root = await t.rootToken();
      const before = await total(root);
      await Promise.all(Array.from({ length: 12 }, (_, i) => createTenant(t, i % 2 ? partner : nested, { token: root })));
      assert.equal(await total(root), before + 12);
      assert.equal(await total(root), await counted());
      assert.equal(await total(partnerToken), 22);
      assert.equal(await total(root, { forHierarchies: [nested] }), 10);
      const rows = await sizeRows();
      const purged = await purgeExpired(t.service.store, t.clock, {
        sessionIdleSeconds: t.config.sessionIdleSeconds,
        auditRetentionDays: t.config.auditRetentionDays,
      });
      assert.ok(purged.subtreeSizeRows > 0, 'appended rows were folded');
      const ancestors = Number(
        (await sql<{ n: string }>`select count(distinct ancestor_id)::text as n from tenant_subtree_sizes`.execute(t.db.kysely)).rows[0]!.n,
      );
      assert.equal(await sizeRows(), ancestors, 'one row per tenant');
      assert.equal(rows - ancestors, purged.subtreeSizeRows);
      assert.equal(await total(root), before + 12);
      assert.equal(await total(partnerToken), 22);
      // and a second fold finds nothing to do
      assert.equal(
        (
          await purgeExpired(t.service.store, t.clock, {
            sessionIdleSeconds: t.config.sessionIdleSeconds,
            auditRetentionDays: t.config.auditRetentionDays,
          })
        ).subtreeSizeRows,
        0,
      );
    });
  });
}
