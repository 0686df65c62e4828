// The tenants query: every TenantsQuery filter alone and combined, ordering, both pagination
// modes, the caller's visibility, and bad input. One small hierarchy is built through the API
// with a hand-moved clock, so every created_at / updated_at below is known to the minute.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { ManualClock } from '../../src/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, rowCounts } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
/** the instant `m` minutes after the app started (the root tenant's creation) */
const at = (m: number) => new Date(T0 + m * 60_000);
const iso = (m: number) => at(m).toISOString();
/** the same instant written without the trailing Z (no zone means UTC) */
const isoNoZone = (m: number) => iso(m).replace(/Z$/, '');

const SEARCH = `query($q: TenantsQuery!) {
  tenants(tenantsQuery: $q) { results { id name name_normalized support_enabled } cursorPos count hasMore totalCount }
}`;

interface Page {
  results: { id: string; name: string; name_normalized: string; support_enabled: boolean }[];
  cursorPos: string | null;
  count: number;
  hasMore: boolean;
  totalCount: number | null;
}

function ok(res: { body: any; text: string }) {
  assert.equal(res.body.errors, undefined, res.text);
  return res.body.data;
}

/** The tenant hierarchy every read test below works on (ids as the service assigned them). */
interface World {
  A: string; // partner "Acme Partners"
  B: string; // partner "Globex Reseller"
  N: string; // nested partner "Acme Nested" under A
  a1: string; // "acme_one" under A
  a2: string; // "AcmeXone" under A, support on
  n1: string; // "Zeta Corp" under N
  b1: string; // "beta" under B, support on
  b2: string; // "Ölfabrik" under B, disabled
  nm: string; // named after a1's id, under B
  z2: string; // "zeta corp" under B, created before A
}

for (const engine of engines()) {
  describe(`tenants search (${engine})`, () => {
    let t: TestApp;
    let w: World;
    let all: string[]; // every tenant, by id

    const root = () => t.rootToken();
    /** page mode (pageNum 1) unless the query names pageNum or cursorPos itself */
    const search = async (q: Record<string, unknown>, token?: string): Promise<Page> =>
      ok(await tq(t, token ?? (await root()), SEARCH, { q: 'pageNum' in q || 'cursorPos' in q ? q : { pageNum: 1, ...q } })).tenants;
    /** ids of every match (one page big enough for all of them) */
    const ids = async (q: Record<string, unknown>, token?: string) => (await search({ maxResults: 100, ...q }, token)).results.map((r) => r.id);
    const byId = (list: string[]) => [...list].sort((x, y) => Number(x) - Number(y));

    const mutate = async (query: string, variables: Record<string, unknown>) => ok(await tq(t, await root(), query, variables));
    const setClock = (m: number) => t.clock.set(at(m));

    before(async () => {
      t = await startTestApp({ engine, clock: new ManualClock(at(0)) });
      const partner = { isPartner: true };
      setClock(1);
      const A = await createTenant(t, '1', { ...partner, name: 'Acme Partners', environments: ['echo'], labels: [{ name: 'Tier', value: 'gold' }] });
      setClock(2);
      const B = await createTenant(t, '1', { ...partner, name: 'Globex Reseller', environments: ['delta', 'pilot'] });
      setClock(3);
      const N = await createTenant(t, A, { ...partner, name: 'Acme Nested', environments: ['echo'] });
      setClock(4);
      const a1 = await createTenant(t, A, { name: 'acme_one', environments: ['echo', 'pilot'], labels: [{ name: 'region', value: 'eu' }] });
      const a2 = await createTenant(t, A, { name: 'AcmeXone', environments: ['pilot'] }); // same instant as a1
      setClock(5);
      const n1 = await createTenant(t, N, { name: 'Zeta Corp', environments: ['delta'], labels: [{ name: 'cost_center', value: '42' }] });
      setClock(6);
      const b1 = await createTenant(t, B, { name: 'beta', supportEnabled: true });
      setClock(7);
      const b2 = await createTenant(t, B, { name: 'Ölfabrik', environments: ['echo'] });
      setClock(8);
      const nm = await createTenant(t, B, { name: a1 });
      setClock(0.5); // created later, but with an earlier created_at: CreatedAt order differs from Id order
      const z2 = await createTenant(t, B, { name: 'zeta corp', labels: [{ name: 'costXcenter', value: '7' }] });
      w = { A, B, N, a1, a2, n1, b1, b2, nm, z2 };
      all = byId(['1', ...Object.values(w)]);

      setClock(10);
      const service = (await mutate(`mutation($s: InputService!) { createService(service_input: $s) { id } }`, { s: { name: 'Falcon Insight' } }))
        .createService.id;
      const subscribe = async (partnerId: string, name: string) =>
        (
          await mutate(`mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { id } }`, {
            s: { service_id: service, name, partner_tenant_id: partnerId },
          })
        ).createPartnerSubscription.id as string;
      const gold = await subscribe(A, 'Gold Plan');
      const silver = await subscribe(B, 'Silver Plan');
      const assign = (tenant: string, sub: string) =>
        mutate(`mutation($t: ID!, $s: ID!) { assignSubscription(tenant_id: $t, subscription_id: $s) { id } }`, { t: tenant, s: sub });
      await assign(a1, gold);
      setClock(11);
      await assign(n1, gold); // n1 is below A's nested partner: still below A
      await assign(b2, silver);
      setClock(12);
      await mutate(`mutation($id: ID!) { enableTenantSupport(tenantID: $id) { id } }`, { id: a2 });
      setClock(13);
      const update = (id: string, u: Record<string, unknown>) =>
        mutate(`mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { id } }`, { id, u });
      await update(a1, { environments: [{ name: 'pilot', enabled: false }] });
      await update(b2, { disable: true }); // same instant as a1's update
      setClock(15);
      await mutate(`mutation($id: ID!, $l: InputTenantLabel!) { createTenantLabel(tenant_id: $id, label_input: $l) { id } }`, {
        id: N,
        l: { name: 'Region', value: 'us' },
      });
      setClock(20);
    });
    after(() => t?.close());

    // Final state (m = minutes after T0):
    //   id  name             parent partner envs enabled   labels       subscription support created updated
    //   1   Vendor           -      yes     echo,delta,pilot -          -            -       0       0
    //   A   Acme Partners    1      yes     echo          Tier          -            -       1       1
    //   B   Globex Reseller  1      yes     delta,pilot   -             -            -       2       2
    //   N   Acme Nested      A      yes     echo          Region        -            -       3       15
    //   a1  acme_one         A      no      echo (pilot off) region     Gold Plan    -       4       13
    //   a2  AcmeXone         A      no      pilot         -             -            on      4       12
    //   n1  Zeta Corp        N      no      delta         cost_center   Gold Plan    -       5       11
    //   b1  beta             B      no      echo          -             -            on      6       6
    //   b2  Ölfabrik         B      no      none (echo off) -           Silver Plan  -       7       13
    //   nm  "<a1's id>"      B      no      echo          -             -            -       8       8
    //   z2  zeta corp        B      no      echo          costXcenter   -            -       0.5     0.5

    describe('each filter alone', () => {
      it('without filters returns every tenant, ordered by id', async () => {
        assert.deepEqual(await ids({}), all);
        assert.equal(all.length, 11);
      });

      it('ids: only these tenants (unknown ids match nothing, an empty list matches nothing)', async () => {
        assert.deepEqual(await ids({ ids: [w.b1, w.a2, '999999'] }), byId([w.a2, w.b1]));
        assert.deepEqual(await ids({ ids: [w.a2, w.a2] }), [w.a2]);
        assert.deepEqual(await ids({ ids: [] }), []);
      });

      it('name: the whole name, case-insensitive', async () => {
        assert.deepEqual(await ids({ name: 'acme partners' }), [w.A]);
        assert.deepEqual(await ids({ name: 'ACME PARTNERS' }), [w.A]);
        assert.deepEqual(await ids({ name: 'Acme' }), [], 'without % the whole name must match');
        assert.deepEqual(await ids({ name: 'ölfabrik' }), [w.b2]);
        assert.deepEqual(await ids({ name: 'ÖLFABRIK' }), [w.b2]);
        // the search text is normalized like the names (NFKC, lower case): full-width letters match
        assert.deepEqual(await ids({ name: 'Ｚｅｔａ Corp' }), byId([w.n1, w.z2]));
      });

      it('name: % is a wildcard', async () => {
        assert.deepEqual(await ids({ name: 'acme%' }), byId([w.A, w.N, w.a1, w.a2]));
        assert.deepEqual(await ids({ name: '%CORP' }), byId([w.n1, w.z2]));
        assert.deepEqual(await ids({ name: '%o%' }), byId(['1', w.B, w.a1, w.a2, w.n1, w.z2]), 'ö is not o');
        assert.deepEqual(await ids({ name: '%' }), all);
      });

      it('name: _ is a literal underscore, with and without %', async () => {
        assert.deepEqual(await ids({ name: 'acme_one' }), [w.a1], '"acme_one" exactly');
        assert.deepEqual(await ids({ name: 'ACME_ONE' }), [w.a1]);
        assert.deepEqual(await ids({ name: 'acme_%' }), [w.a1], 'not AcmeXone: _ is no single-character wildcard');
        assert.deepEqual(await ids({ name: '%_one' }), [w.a1]);
      });

      it('name: a tenant id finds that tenant and a tenant named like it', async () => {
        assert.deepEqual(await ids({ name: w.a1 }), byId([w.a1, w.nm]));
        assert.deepEqual(await ids({ name: w.b1 }), [w.b1]);
        assert.deepEqual(await ids({ name: '999999' }), []);
      });

      it('environmentFilter {name} and {name, enabled: true}: enabled in that environment', async () => {
        const inEcho = byId(['1', w.A, w.N, w.a1, w.b1, w.nm, w.z2]);
        assert.deepEqual(await ids({ environmentFilter: { name: 'echo' } }), inEcho);
        assert.deepEqual(await ids({ environmentFilter: { name: 'echo', enabled: true } }), inEcho);
        assert.deepEqual(await ids({ environmentFilter: { name: 'ECHO' } }), inEcho, 'environment names are case-insensitive');
        // a1 was enabled in pilot, then disabled there
        assert.deepEqual(await ids({ environmentFilter: { name: 'pilot' } }), byId(['1', w.B, w.a2]));
        assert.deepEqual(await ids({ environmentFilter: { name: 'delta' } }), byId(['1', w.B, w.n1]));
      });

      it('environmentFilter {name, enabled: false}: not enabled there (never in it, or disabled in it)', async () => {
        assert.deepEqual(await ids({ environmentFilter: { name: 'echo', enabled: false } }), byId([w.B, w.a2, w.n1, w.b2]));
        assert.deepEqual(await ids({ environmentFilter: { name: 'pilot', enabled: false } }), byId([w.A, w.N, w.a1, w.n1, w.b1, w.b2, w.nm, w.z2]));
      });

      it('environmentFilter {enabled} alone: active or not active', async () => {
        assert.deepEqual(
          await ids({ environmentFilter: { enabled: true } }),
          all.filter((id) => id !== w.b2),
        );
        assert.deepEqual(await ids({ environmentFilter: { enabled: false } }), [w.b2]);
      });

      it('labelFilter: has a label of that name (case-insensitive, % wildcard, _ literal)', async () => {
        assert.deepEqual(await ids({ labelFilter: { label_name: 'region' } }), byId([w.N, w.a1]));
        assert.deepEqual(await ids({ labelFilter: { label_name: 'REGION' } }), byId([w.N, w.a1]));
        assert.deepEqual(await ids({ labelFilter: { label_name: 'reg%' } }), byId([w.N, w.a1]));
        assert.deepEqual(await ids({ labelFilter: { label_name: 'tier' } }), [w.A]);
        assert.deepEqual(await ids({ labelFilter: { label_name: 'cost_center' } }), [w.n1]);
        assert.deepEqual(await ids({ labelFilter: { label_name: 'cost_%' } }), [w.n1]);
        assert.deepEqual(await ids({ labelFilter: { label_name: '%center' } }), byId([w.n1, w.z2]));
        assert.deepEqual(await ids({ labelFilter: { label_name: 'gold' } }), [], 'values are not names');
      });

      it('withPartnerSubscription: has an assigned subscription of that name (case-insensitive, % wildcard)', async () => {
        assert.deepEqual(await ids({ withPartnerSubscription: 'Gold Plan' }), byId([w.a1, w.n1]));
        assert.deepEqual(await ids({ withPartnerSubscription: 'gold plan' }), byId([w.a1, w.n1]));
        assert.deepEqual(await ids({ withPartnerSubscription: '%plan' }), byId([w.a1, w.n1, w.b2]));
        assert.deepEqual(await ids({ withPartnerSubscription: 'silver%' }), [w.b2]);
        assert.deepEqual(await ids({ withPartnerSubscription: 'Gold' }), []);
      });

      it('partnership {parent, is_partner}: direct children; partners or not', async () => {
        assert.deepEqual(await ids({ partnership: { parent: w.A } }), byId([w.N, w.a1, w.a2]), 'direct children only, not n1');
        assert.deepEqual(await ids({ partnership: { parent: '1' } }), byId([w.A, w.B]));
        assert.deepEqual(await ids({ partnership: { parent: w.B, is_partner: false } }), byId([w.b1, w.b2, w.nm, w.z2]));
        assert.deepEqual(await ids({ partnership: { parent: w.A, is_partner: true } }), [w.N]);
        assert.deepEqual(await ids({ partnership: { is_partner: true } }), byId(['1', w.A, w.B, w.N]));
        assert.deepEqual(await ids({ partnership: { parent: w.a1 } }), []);
      });

      it('isPartner: partners or not (agreeing with partnership.is_partner)', async () => {
        assert.deepEqual(await ids({ isPartner: true }), byId(['1', w.A, w.B, w.N]));
        assert.deepEqual(await ids({ isPartner: false }), byId([w.a1, w.a2, w.n1, w.b1, w.b2, w.nm, w.z2]));
        assert.deepEqual(await ids({ isPartner: true, partnership: { is_partner: true } }), byId(['1', w.A, w.B, w.N]));
      });

      it('createdTimeFilter: both ends inclusive, with or without trailing Z', async () => {
        const expected = byId([w.a1, w.a2, w.n1, w.b1]);
        assert.deepEqual(await ids({ createdTimeFilter: { startTime: iso(4), endTime: iso(6) } }), expected);
        assert.deepEqual(await ids({ createdTimeFilter: { startTime: isoNoZone(4), endTime: isoNoZone(6) } }), expected);
        assert.deepEqual(await ids({ createdTimeFilter: { startTime: '2026-11-22T10:04:00', endTime: '2026-11-22T10:06:00Z' } }), expected);
        // one millisecond inside either end drops the tenants created exactly there
        assert.deepEqual(
          await ids({
            createdTimeFilter: { startTime: new Date(at(4).getTime() + 1).toISOString(), endTime: new Date(at(6).getTime() - 1).toISOString() },
          }),
          [w.n1],
        );
        // start equal to end
        assert.deepEqual(await ids({ createdTimeFilter: { startTime: iso(4), endTime: iso(4) } }), byId([w.a1, w.a2]));
      });

      it('createdTimeFilter: only start, only end', async () => {
        assert.deepEqual(await ids({ createdTimeFilter: { startTime: iso(7) } }), byId([w.b2, w.nm]));
        assert.deepEqual(await ids({ createdTimeFilter: { endTime: iso(1) } }), byId(['1', w.A, w.z2]));
        assert.deepEqual(await ids({ createdTimeFilter: { endTime: isoNoZone(0) } }), ['1']);
        assert.deepEqual(await ids({ createdTimeFilter: { startTime: iso(9) } }), []);
        assert.deepEqual(await ids({ createdTimeFilter: {} }), all, 'an empty range filters nothing');
      });

      it('modifiedTimeFilter: updated_at in the range (labels, subscriptions, support and updates move it)', async () => {
        assert.deepEqual(await ids({ modifiedTimeFilter: { startTime: iso(11), endTime: iso(13) } }), byId([w.a1, w.a2, w.n1, w.b2]));
        assert.deepEqual(await ids({ modifiedTimeFilter: { startTime: isoNoZone(11), endTime: isoNoZone(13) } }), byId([w.a1, w.a2, w.n1, w.b2]));
        assert.deepEqual(await ids({ modifiedTimeFilter: { startTime: iso(13), endTime: iso(13) } }), byId([w.a1, w.b2]));
        assert.deepEqual(await ids({ modifiedTimeFilter: { startTime: iso(14) } }), [w.N], 'the label created at minute 15');
        assert.deepEqual(await ids({ modifiedTimeFilter: { endTime: iso(1) } }), byId(['1', w.A, w.z2]));
        assert.deepEqual(await ids({ modifiedTimeFilter: { startTime: iso(6), endTime: iso(8) } }), byId([w.b1, w.nm]));
      });

      it('withSupport: support access on, or off', async () => {
        assert.deepEqual(await ids({ withSupport: true }), byId([w.a2, w.b1]));
        assert.deepEqual(
          await ids({ withSupport: false }),
          all.filter((id) => id !== w.a2 && id !== w.b1),
        );
        const page = await search({ withSupport: true });
        assert.ok(page.results.every((r) => r.support_enabled));
      });

      it('forHierarchies: the subtrees of these tenants, the tenants included', async () => {
        assert.deepEqual(await ids({ forHierarchies: [w.A] }), byId([w.A, w.N, w.a1, w.a2, w.n1]));
        assert.deepEqual(await ids({ forHierarchies: [w.N, w.B] }), byId([w.B, w.N, w.n1, w.b1, w.b2, w.nm, w.z2]));
        assert.deepEqual(await ids({ forHierarchies: [w.a1] }), [w.a1]);
        assert.deepEqual(await ids({ forHierarchies: ['1'] }), all);
        assert.deepEqual(await ids({ forHierarchies: ['999999'] }), []);
        assert.deepEqual(await ids({ forHierarchies: [] }), []);
      });
    });

    describe('filters combined (AND)', () => {
      it('name and environment', async () => {
        assert.deepEqual(await ids({ name: 'acme%', environmentFilter: { name: 'pilot' } }), [w.a2]);
        assert.deepEqual(await ids({ name: 'acme%', environmentFilter: { name: 'echo', enabled: false } }), [w.a2]);
      });

      it('parent, support and activity', async () => {
        assert.deepEqual(await ids({ partnership: { parent: w.B }, withSupport: false, environmentFilter: { enabled: true } }), byId([w.nm, w.z2]));
      });

      it('label and subscription', async () => {
        assert.deepEqual(await ids({ labelFilter: { label_name: 'region' }, withPartnerSubscription: 'gold%' }), [w.a1]);
        assert.deepEqual(await ids({ labelFilter: { label_name: 'cost%' }, withPartnerSubscription: '%' }), [w.n1]);
      });

      it('hierarchy and support, hierarchy and isPartner', async () => {
        assert.deepEqual(await ids({ forHierarchies: [w.A], withSupport: true }), [w.a2]);
        assert.deepEqual(await ids({ forHierarchies: [w.A], isPartner: false }), byId([w.a1, w.a2, w.n1]));
        assert.deepEqual(await ids({ forHierarchies: [w.B], ids: [w.A, w.b1, w.n1] }), [w.b1]);
      });

      it('created range, isPartner and Name order', async () => {
        assert.deepEqual(await ids({ createdTimeFilter: { startTime: iso(4) }, isPartner: false, orderBy: 'Name', orderDir: 'desc' }), [
          w.b2,
          w.n1,
          w.b1,
          w.a2,
          w.a1,
          w.nm,
        ]);
      });

      it('every filter at once', async () => {
        const q = {
          ids: [w.a1, w.a2, w.n1],
          name: 'acme%',
          environmentFilter: { name: 'echo', enabled: true },
          labelFilter: { label_name: 'region' },
          withPartnerSubscription: 'Gold Plan',
          partnership: { parent: w.A, is_partner: false },
          isPartner: false,
          createdTimeFilter: { startTime: iso(4), endTime: isoNoZone(4) },
          modifiedTimeFilter: { startTime: iso(13) },
          withSupport: false,
          forHierarchies: [w.A],
        };
        assert.deepEqual(await ids(q), [w.a1]);
        // each filter taken back out of an impossible combination makes it possible again
        assert.deepEqual(await ids({ ...q, withSupport: true }), []);
        assert.deepEqual(await ids({ ...q, forHierarchies: [w.B] }), []);
        assert.deepEqual(await ids({ ...q, modifiedTimeFilter: { endTime: iso(12) } }), []);
      });
    });

    describe('ordering', () => {
      const orders = (): Record<string, string[]> => ({
        Id: all,
        // z2 was created at minute 0.5; a1 and a2 at the same instant (ties broken by id)
        CreatedAt: ['1', w.z2, w.A, w.B, w.N, w.a1, w.a2, w.n1, w.b1, w.b2, w.nm],
        // a1 and b2 were updated at the same instant
        UpdatedAt: ['1', w.z2, w.A, w.B, w.b1, w.nm, w.n1, w.a2, w.a1, w.b2, w.N],
        // normalized names in code-point order; "zeta corp" twice (ties broken by id)
        Name: [w.nm, w.N, w.A, w.a1, w.a2, w.b1, w.B, '1', w.n1, w.z2, w.b2],
      });

      it('Id orders numerically, not as text', async () => {
        assert.ok(
          all.some((id) => id.length > 1),
          'the data has ids of more than one digit',
        );
        assert.deepEqual(all, byId(all));
      });

      for (const orderBy of ['Id', 'CreatedAt', 'UpdatedAt', 'Name']) {
        for (const orderDir of ['asc', 'desc']) {
          it(`${orderBy} ${orderDir}: exact order, ties broken by id`, async () => {
            const expected = orderDir === 'asc' ? orders()[orderBy]! : [...orders()[orderBy]!].reverse();
            assert.deepEqual(await ids({ orderBy, orderDir }), expected);
          });
        }
      }

      it('defaults to Id asc', async () => {
        assert.deepEqual(await ids({ orderDir: 'asc' }), all);
        assert.deepEqual(await ids({ orderBy: 'Id' }), all);
      });

      it('Name orders by name_normalized', async () => {
        const page = await search({ orderBy: 'Name', maxResults: 100 });
        const names = page.results.map((r) => r.name_normalized);
        assert.deepEqual(names, [
          w.a1,
          'acme nested',
          'acme partners',
          'acme_one',
          'acmexone',
          'beta',
          'globex reseller',
          'vendor',
          'zeta corp',
          'zeta corp',
          'ölfabrik',
        ]);
        assert.equal(page.results.find((r) => r.id === w.a2)!.name, 'AcmeXone');
      });
    });

    describe('page mode', () => {
      it('walks pages from 1 with totalCount, count and an exact hasMore', async () => {
        const q = { orderBy: 'Name', maxResults: 4 };
        const p1 = await search({ ...q, pageNum: 1 });
        const p2 = await search({ ...q, pageNum: 2 });
        const p3 = await search({ ...q, pageNum: 3 });
        const p4 = await search({ ...q, pageNum: 4 });
        assert.deepEqual(
          p1.results.map((r) => r.id),
          [w.nm, w.N, w.A, w.a1],
        );
        assert.deepEqual(
          p2.results.map((r) => r.id),
          [w.a2, w.b1, w.B, '1'],
        );
        assert.deepEqual(
          p3.results.map((r) => r.id),
          [w.n1, w.z2, w.b2],
        );
        assert.deepEqual(
          [p1, p2, p3, p4].map((p) => [p.count, p.hasMore, p.totalCount]),
          [
            [4, true, 11],
            [4, true, 11],
            [3, false, 11],
            [0, false, 11],
          ],
        );
        assert.deepEqual(p4.results, []);
        assert.equal(p4.cursorPos, null, 'an empty page in page mode has no last row');
        assert.ok(p1.cursorPos && p2.cursorPos && p3.cursorPos);
      });

      it('without pageNum or cursorPos: the first page of a cursor walk, with no totalCount', async () => {
        const first = ok(await tq(t, await root(), SEARCH, { q: { orderBy: 'CreatedAt', maxResults: 3 } })).tenants as Page;
        assert.deepEqual(
          first.results.map((r) => r.id),
          ['1', w.z2, w.A],
        );
        assert.deepEqual([first.count, first.hasMore, first.totalCount], [3, true, null]);
        const paged = await search({ orderBy: 'CreatedAt', maxResults: 3, pageNum: 1 });
        assert.deepEqual(
          paged.results.map((r) => r.id),
          ['1', w.z2, w.A],
        );
        assert.equal(paged.totalCount, 11);
        // and its cursor continues the walk
        const next = await search({ orderBy: 'CreatedAt', maxResults: 3, cursorPos: first.cursorPos });
        assert.equal(next.count, 3);
        assert.equal(
          next.results.some((r) => ['1', w.z2, w.A].includes(r.id)),
          false,
        );
      });

      it('hasMore is exact: false when the page ends exactly at the last match', async () => {
        const full = await search({ maxResults: 11 });
        assert.deepEqual([full.count, full.hasMore, full.totalCount], [11, false, 11]);
        const short = await search({ maxResults: 10 });
        assert.deepEqual([short.count, short.hasMore, short.totalCount], [10, true, 11]);
        const filtered = await search({ forHierarchies: [w.A], maxResults: 5 });
        assert.deepEqual([filtered.count, filtered.hasMore, filtered.totalCount], [5, false, 5]);
        const second = await search({ forHierarchies: [w.A], maxResults: 5, pageNum: 2 });
        assert.deepEqual([second.count, second.hasMore, second.totalCount], [0, false, 5]);
      });

      it('totalCount counts the matches of the filters', async () => {
        const p = await search({ isPartner: false, maxResults: 2 });
        assert.deepEqual([p.count, p.hasMore, p.totalCount], [2, true, 7]);
        const none = await search({ name: 'nobody' });
        assert.deepEqual([none.count, none.hasMore, none.totalCount, none.cursorPos], [0, false, 0, null]);
      });

      it('the cursor of a page continues in cursor mode', async () => {
        const q = { orderBy: 'UpdatedAt', orderDir: 'desc', maxResults: 4 };
        const p1 = await search({ ...q, pageNum: 1 });
        const p2 = await search({ ...q, pageNum: 2 });
        const next = await search({ ...q, cursorPos: p1.cursorPos });
        assert.deepEqual(
          next.results.map((r) => r.id),
          p2.results.map((r) => r.id),
        );
        assert.equal(next.totalCount, null);
      });
    });

    describe('cursor mode', () => {
      for (const [orderBy, orderDir] of [
        ['Id', 'asc'],
        ['Name', 'desc'],
        ['CreatedAt', 'asc'],
        ['UpdatedAt', 'desc'],
      ] as const) {
        it(`walks to the end (${orderBy} ${orderDir}, 3 a page): each tenant once, in order, hasMore false at the end`, async () => {
          const everything = await ids({ orderBy, orderDir });
          const seen: string[] = [];
          const pages: Page[] = [];
          let cursor: string | null = null;
          for (let i = 0; i < 10; i++) {
            const p: Page = await search({ orderBy, orderDir, maxResults: 3, ...(cursor ? { cursorPos: cursor } : {}) });
            pages.push(p);
            seen.push(...p.results.map((r) => r.id));
            assert.equal(p.count, p.results.length);
            if (cursor) assert.equal(p.totalCount, null, 'no totalCount in cursor mode');
            cursor = p.cursorPos;
            if (!p.hasMore) break;
          }
          assert.deepEqual(seen, everything);
          assert.deepEqual(
            pages.map((p) => [p.count, p.hasMore]),
            [
              [3, true],
              [3, true],
              [3, true],
              [2, false],
            ],
          );
          // past the end: an empty page that hands back the cursor it was given
          const empty = await search({ orderBy, orderDir, maxResults: 3, cursorPos: cursor });
          assert.deepEqual([empty.results, empty.count, empty.hasMore, empty.totalCount, empty.cursorPos], [[], 0, false, null, cursor]);
        });
      }

      it('hasMore is false on a last page that is exactly full', async () => {
        const p1 = await search({ forHierarchies: [w.B], maxResults: 3 }); // B, b1, b2, nm, z2
        assert.deepEqual([p1.count, p1.hasMore], [3, true]);
        const p2 = await search({ forHierarchies: [w.B], maxResults: 2, cursorPos: p1.cursorPos });
        assert.deepEqual(
          p2.results.map((r) => r.id),
          [w.nm, w.z2],
        );
        assert.deepEqual([p2.count, p2.hasMore], [2, false]);
      });

      it('cursorPos wins over pageNum', async () => {
        const q = { orderBy: 'Name', maxResults: 4 };
        const p1 = await search(q);
        const withBoth = await search({ ...q, cursorPos: p1.cursorPos, pageNum: 3 });
        assert.deepEqual(
          withBoth.results.map((r) => r.id),
          [w.a2, w.b1, w.B, '1'],
          'the page after the cursor, not page 3',
        );
        assert.equal(withBoth.totalCount, null);
      });

      it('an empty cursorPos is no cursor (page mode)', async () => {
        const p = await search({ maxResults: 2, cursorPos: '', pageNum: 1 });
        assert.deepEqual(
          p.results.map((r) => r.id),
          all.slice(0, 2),
        );
        assert.equal(p.totalCount, 11);
      });
    });

    describe('page size', () => {
      it('defaults to 10', async () => {
        const p = await search({});
        assert.deepEqual([p.count, p.hasMore, p.totalCount], [10, true, 11]);
        assert.deepEqual(
          p.results.map((r) => r.id),
          all.slice(0, 10),
        );
        // the argument itself defaults to {maxResults: 10}
        const res = ok(await tq(t, await root(), `{ tenants { count hasMore totalCount results { id } } }`)).tenants;
        assert.deepEqual([res.count, res.hasMore, res.totalCount], [10, true, null]);
      });

      it('accepts 1 and 500', async () => {
        assert.equal((await search({ maxResults: 1 })).count, 1);
        assert.equal((await search({ maxResults: 500 })).count, 11);
      });
    });

    describe('visibility', () => {
      it('a partner Administrator sees only its subtree, and counts only that', async () => {
        const admin = await clientWithRoles(t, w.A, [ROLE_IDS.Administrator]);
        const subtree = byId([w.A, w.N, w.a1, w.a2, w.n1]);
        assert.deepEqual(await ids({}, admin.token), subtree);
        assert.deepEqual(await ids({ name: '%' }, admin.token), subtree);
        assert.deepEqual(await ids({ forHierarchies: ['1'] }, admin.token), subtree);
        assert.deepEqual(await ids({ ids: [w.b1, '1', w.a1] }, admin.token), [w.a1]);
        assert.deepEqual(await ids({ partnership: { parent: '1' } }, admin.token), [w.A]);
        assert.deepEqual(await ids({ withSupport: true }, admin.token), [w.a2]);
        assert.deepEqual(await ids({ name: '%corp' }, admin.token), [w.n1], 'not z2 under B');
        const p = await search({ maxResults: 2 }, admin.token);
        assert.deepEqual([p.count, p.hasMore, p.totalCount], [2, true, 5]);
        const last = await search({ maxResults: 2, pageNum: 3 }, admin.token);
        assert.deepEqual([last.count, last.hasMore, last.totalCount], [1, false, 5]);
        // cursor mode ends at the subtree's end too
        const c = await search({ maxResults: 4, cursorPos: p.cursorPos }, admin.token);
        assert.deepEqual(
          c.results.map((r) => r.id),
          subtree.slice(2),
        );
        assert.equal(c.hasMore, false);
      });

      it('an Analyst of the nested partner sees the nested subtree', async () => {
        const analyst = await clientWithRoles(t, w.N, [ROLE_IDS.Analyst]);
        assert.deepEqual(await ids({}, analyst.token), byId([w.N, w.n1]));
        assert.equal((await search({}, analyst.token)).totalCount, 2);
      });

      it('a child Administrator sees only itself', async () => {
        const admin = await clientWithRoles(t, w.a1, [ROLE_IDS.Administrator]);
        assert.deepEqual(await ids({}, admin.token), [w.a1]);
        const p = await search({}, admin.token);
        assert.deepEqual([p.count, p.hasMore, p.totalCount], [1, false, 1]);
        assert.deepEqual(await ids({ forHierarchies: [w.A] }, admin.token), [w.a1]);
        assert.deepEqual(await ids({ partnership: { parent: w.A } }, admin.token), [w.a1], 'not its siblings');
        assert.deepEqual(await ids({ name: w.A }, admin.token), [], 'not its parent, even by id');
      });

      it('a Support client sees exactly the support-enabled tenants (not even its home tenant 1)', async () => {
        const support = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
        // CONTRACT.md: Support staff read exactly the tenants whose support_enabled is true
        assert.deepEqual(await ids({}, support.token), byId([w.a2, w.b1]));
        assert.deepEqual(await ids({ withSupport: true }, support.token), byId([w.a2, w.b1]));
        assert.deepEqual(await ids({ withSupport: false }, support.token), []);
        assert.deepEqual(await ids({ forHierarchies: [w.A] }, support.token), [w.a2]);
        const p = await search({ maxResults: 1 }, support.token);
        assert.deepEqual([p.count, p.hasMore, p.totalCount], [1, true, 2]);
      });
    });

    describe('bad input: BAD_USER_INPUT, a clear message, nothing written', () => {
      const rejects = async (q: Record<string, unknown>, message: RegExp) => {
        const before = await rowCounts(t);
        const res = await tq(t, await root(), SEARCH, { q });
        assert.equal(res.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', `${JSON.stringify(q)}: ${res.text}`);
        assert.match(res.body.errors[0].message, message);
        assert.equal(res.body.data?.tenants ?? null, null);
        assert.deepEqual(await rowCounts(t), before);
      };

      it('an unknown environment name', async () => {
        await rejects({ environmentFilter: { name: 'prod' } }, /unknown environment "prod".*echo, delta, pilot/);
        await rejects({ environmentFilter: { name: 'prod', enabled: false } }, /unknown environment "prod"/);
      });

      it('malformed timestamps', async () => {
        for (const bad of ['yesterday', '2026-13-01', '2026-02-30T00:00:00Z']) {
          await rejects({ createdTimeFilter: { startTime: bad } }, new RegExp(`"${bad}" is not an ISO 8601 timestamp`));
          await rejects({ modifiedTimeFilter: { endTime: bad } }, new RegExp(`"${bad}" is not an ISO 8601 timestamp`));
        }
      });

      it('startTime after endTime', async () => {
        await rejects({ createdTimeFilter: { startTime: iso(5), endTime: iso(4) } }, /createdTimeFilter: startTime is after endTime/);
        await rejects({ modifiedTimeFilter: { startTime: isoNoZone(5), endTime: iso(4) } }, /modifiedTimeFilter: startTime is after endTime/);
      });

      it('maxResults 0, -1, 501', async () => {
        for (const maxResults of [0, -1, 501]) await rejects({ maxResults }, /maxResults must be from 1 to 500/);
      });

      it('pageNum 0 (pages count from 1)', async () => {
        await rejects({ pageNum: 0 }, /pageNum must be 1 or more/);
        await rejects({ pageNum: -3 }, /pageNum must be 1 or more/);
        await rejects(
          { pageNum: 100_002, maxResults: 10 },
          /pageNum is too deep: a page starts at most 1,000,000 rows in; use cursorPos to page that far/,
        );
      });

      it('a cursor from another orderBy or orderDir', async () => {
        const { cursorPos } = await search({ orderBy: 'Name', orderDir: 'asc', maxResults: 2 });
        await rejects({ orderBy: 'Id', cursorPos }, /cursorPos was issued for orderBy Name asc; this query orders by Id asc/);
        await rejects({ orderBy: 'Name', orderDir: 'desc', cursorPos }, /cursorPos was issued for orderBy Name asc; this query orders by Name desc/);
        await rejects({ orderBy: 'CreatedAt', cursorPos }, /cursorPos was issued for orderBy Name asc/);
      });

      it('a garbage cursor', async () => {
        for (const cursorPos of [
          'garbage',
          Buffer.from('["c1","Id","asc","x","1"]').toString('base64url'),
          Buffer.from('{}').toString('base64url'),
          '%%%',
        ]) {
          await rejects({ cursorPos }, /cursorPos is not a cursor this service issued/);
        }
      });

      it('a non-numeric id in ids', async () => {
        await rejects({ ids: [w.a1, 'abc'] }, /"abc" is not a tenant id/);
        await rejects({ ids: ['01'] }, /"01" is not a tenant id/);
      });

      it('isPartner disagreeing with partnership.is_partner', async () => {
        await rejects({ isPartner: true, partnership: { is_partner: false } }, /isPartner and partnership.is_partner disagree/);
      });
    });
  });

  describe(`tenants search: support access with an end (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine, clock: new ManualClock(at(0)) });
    });
    after(() => t?.close());

    it('a tenant whose support `until` has passed no longer counts as support-enabled', async () => {
      const root = await t.rootToken();
      const partner = await createTenant(t, '1', { isPartner: true, name: 'Timebox Partner' });
      const boxed = await createTenant(t, partner, { name: 'boxed' });
      const open = await createTenant(t, partner, { name: 'open', supportEnabled: true });
      const enable = await tq(
        t,
        root,
        `mutation($id: ID!, $until: Time) { enableTenantSupport(tenantID: $id, until: $until) { id support_enabled } }`,
        {
          id: boxed,
          until: new Date(t.clock.now().getTime() + 30 * 60_000).toISOString(),
        },
      );
      assert.equal(ok(enable).enableTenantSupport.support_enabled, true);
      const support = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
      const find = async (q: Record<string, unknown>, token = root) =>
        (ok(await tq(t, token, SEARCH, { q: { maxResults: 50, ...q } })).tenants as Page).results.map((r) => r.id);

      assert.deepEqual(await find({ withSupport: true }), [boxed, open]);
      assert.deepEqual(await find({ forHierarchies: [partner], withSupport: false }), [partner]);
      assert.deepEqual(await find({}, support.token), [boxed, open]);

      t.clock.advance(29 * 60_000);
      assert.deepEqual(await find({ withSupport: true }), [boxed, open], 'still on a minute before the end');

      t.clock.advance(60_000); // exactly at `until`: over
      assert.deepEqual(await find({ withSupport: true }), [open]);
      assert.deepEqual(await find({ forHierarchies: [partner], withSupport: false }), [partner, boxed]);
      const page = ok(await tq(t, root, SEARCH, { q: { ids: [boxed] } })).tenants as Page;
      assert.equal(page.results[0]!.support_enabled, false);
      // Support staff lose sight of it
      assert.deepEqual(await find({}, support.token), [open]);
      assert.equal((ok(await tq(t, support.token, SEARCH, { q: { pageNum: 1 } })).tenants as Page).totalCount, 1);
    });
  });
}
