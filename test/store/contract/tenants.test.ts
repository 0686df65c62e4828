// TenantStore contract (src/tenants/store.ts), on every engine: the bootstrap lock, tenants and
// their hierarchy, environments, the visibility every listing applies (one partner's subtree is
// never listed through another's), search filters and paging, count agreeing with search, the
// subtree-size fold under concurrent writes, and the locks (lockTenant, lockExpired).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { orderValue, type Tenant, type TenantSearch, type Visibility } from '../../../src/tenants/model.js';
import {
  at,
  childOf,
  type Contract,
  fulfilled,
  HOUR,
  newTenant,
  openContract,
  race,
  RACERS,
  raceTransactions,
  ROOT,
  T0,
  twoTenants,
  TX_RACERS,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

const ids = (tenants: Tenant[]) => tenants.map((t) => t.id);
const sortedIds = (tenants: Tenant[]) => ids(tenants).sort((x, y) => Number(BigInt(x) - BigInt(y)));
const ALL: Visibility = { kind: 'all' };
const subtrees = (paths: string[], homeId: string | null = null): Visibility => ({
  kind: 'some',
  subtreePaths: paths,
  homeId,
  consentingTenants: false,
});
const BY_ID: TenantSearch = { orderBy: 'Id', orderDir: 'asc' };

for (const engine of engines()) {
  describe(`TenantStore contract: first start (${engine})`, () => {
    let c: Contract;
    before(async () => {
      c = await openContract(engine);
    });
    after(() => c.db.close());

    it('of first starts racing under lockBootstrap, exactly one writes the root; the root is "1" with its environments', async () => {
      assert.equal(await c.store.tenants.rootExists(), false, 'a migrated database has no root');
      const wrote = fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx, i) => {
          await tx.tenants.lockBootstrap();
          if (await tx.tenants.rootExists()) return false;
          await tx.tenants.insertRoot({ name: `Vendor ${i}`, nameNormalized: `vendor ${i}`, createdAt: T0, environments: ['echo', 'pilot'] });
          return true;
        }),
      );
      assert.equal(wrote.filter(Boolean).length, 1, 'one process bootstraps; the others find it done and fail nothing');
      assert.equal(await c.store.tenants.rootExists(), true);
      const root = await c.store.tenants.findTenant(ROOT);
      assert.ok(root);
      assert.deepEqual([root.id, root.parentId, root.path, root.isPartner, root.enabled], [ROOT, null, '1.', true, true]);
      assert.equal(root.name, `Vendor ${wrote.indexOf(true)}`, 'the root is the winner’s');
      const envs = await c.store.tenants.environments([ROOT]);
      assert.deepEqual(
        envs.map((e) => [e.tenantId, e.name, e.enabled]),
        [
          [ROOT, 'echo', true],
          [ROOT, 'pilot', true],
        ],
      );
    });
  });

  describe(`TenantStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    it('insertTenant returns the tenant as stored, under its parent, with a path ending in its own id', async () => {
      const t = await c.store.tenants.insertTenant({
        parentId: a.id,
        parentPath: a.path,
        name: 'Child One',
        nameNormalized: 'child one',
        isPartner: false,
        domain: 'Child.Example',
        domainNormalized: 'child.example',
        description: 'a child',
        allowResponseActions: true,
        actionsApprover: 'ops@example.com',
        createdAt: at(1000),
      });
      assert.deepEqual(await c.store.tenants.findTenant(t.id), t);
      assert.equal(t.parentId, a.id);
      assert.equal(t.path, `${a.path}${t.id}.`);
      assert.deepEqual(
        [t.name, t.nameNormalized, t.domain, t.domainNormalized, t.description, t.allowResponseActions, t.actionsApprover],
        ['Child One', 'child one', 'Child.Example', 'child.example', 'a child', true, 'ops@example.com'],
      );
      assert.deepEqual([t.enabled, t.supportEnabled, t.supportExpiresAt, t.expiresAt], [true, false, null, null], 'the defaults');
      assert.deepEqual([t.createdAt, t.updatedAt], [at(1000), at(1000)]);
      assert.equal(await c.store.tenants.findTenant('987654321'), undefined);
    });

    it('tenants inserted at once get distinct ids, each path ending in its own', async () => {
      const made = fulfilled(await race(RACERS, () => childOf(c.store, b)));
      assert.equal(new Set(ids(made)).size, RACERS);
      for (const t of made) {
        assert.equal(t.path, `${b.path}${t.id}.`);
        assert.deepEqual(await c.store.tenants.findTenant(t.id), t);
      }
    });

    it('findScope and findScopes read the scope of the tenants asked for, and no other', async () => {
      assert.deepEqual(await c.store.tenants.findScope(a.id), { id: a.id, path: a.path, supportEnabled: false, supportExpiresAt: null });
      assert.equal(await c.store.tenants.findScope('987654321'), undefined);
      const scopes = await c.store.tenants.findScopes([b.id, a.id, '987654321']);
      assert.deepEqual(scopes.map((s) => [s.id, s.path]).sort(), [
        [a.id, a.path],
        [b.id, b.path],
      ]);
      assert.deepEqual(await c.store.tenants.findScopes([]), []);
    });

    it('updateTenant changes the fields of the patch of that tenant only', async () => {
      const t = await childOf(c.store, a, { name: 'Before', domain: 'before.example' });
      const sibling = await childOf(c.store, a);
      const other = await c.store.tenants.findTenant(b.id);
      await c.store.tenants.updateTenant(t.id, {
        name: 'After',
        nameNormalized: 'after',
        domain: null,
        description: 'described',
        supportEnabled: true,
        supportExpiresAt: at(HOUR),
        supportReason: 'ticket 1',
        expiresAt: at(2 * HOUR),
        updatedAt: at(5000),
      });
      const now = await c.store.tenants.findTenant(t.id);
      assert.deepEqual(now, {
        ...t,
        name: 'After',
        nameNormalized: 'after',
        domain: null,
        domainNormalized: null,
        description: 'described',
        supportEnabled: true,
        supportExpiresAt: at(HOUR),
        supportReason: 'ticket 1',
        expiresAt: at(2 * HOUR),
        updatedAt: at(5000),
      });
      // a patch of one field leaves the others as they are
      await c.store.tenants.updateTenant(t.id, { enabled: false, updatedAt: at(6000) });
      assert.deepEqual(await c.store.tenants.findTenant(t.id), { ...now, enabled: false, updatedAt: at(6000) });
      assert.deepEqual(await c.store.tenants.findTenant(sibling.id), sibling, 'a sibling is untouched');
      assert.deepEqual(await c.store.tenants.findTenant(b.id), other, 'another partner is untouched');
    });

    it('lockTenant holds the tenant until the transaction ends: read-modify-writes at once lose nothing', async () => {
      const t = await childOf(c.store, a);
      await c.store.tenants.updateTenant(t.id, { description: '0', updatedAt: T0 });
      assert.equal(await c.store.tenants.lockTenant('987654321'), undefined);
      fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx) => {
          const locked = await tx.tenants.lockTenant(t.id);
          assert.ok(locked);
          await tx.tenants.updateTenant(t.id, { description: String(Number(locked.description) + 1), updatedAt: T0 });
        }),
      );
      assert.equal((await c.store.tenants.findTenant(t.id))?.description, String(TX_RACERS));
    });

    it('environments: set per tenant, listed by tenant then name; updatedAt moves only when the flag changes', async () => {
      const x = await childOf(c.store, a);
      const y = await childOf(c.store, b);
      await c.store.tenants.setEnvironments(
        x.id,
        new Map([
          ['pilot', false],
          ['echo', true],
        ]),
        at(1000),
      );
      await c.store.tenants.setEnvironments(y.id, new Map([['delta', true]]), at(1000));
      const before = await c.store.tenants.environments([x.id]);
      assert.deepEqual(
        before.map((e) => [e.tenantId, e.name, e.enabled]),
        [
          [x.id, 'echo', true],
          [x.id, 'pilot', false],
        ],
        'only the tenant asked for, by name',
      );
      await c.store.tenants.setEnvironments(
        x.id,
        new Map([
          ['echo', true],
          ['pilot', true],
        ]),
        at(9000),
      );
      await c.store.tenants.setEnvironments(x.id, new Map(), at(9999));
      const afterSet = await c.store.tenants.environments([y.id, x.id]);
      const [echo, pilot, delta] = afterSet;
      assert.deepEqual(
        afterSet.map((e) => [e.tenantId, e.name, e.enabled]),
        [
          [x.id, 'echo', true],
          [x.id, 'pilot', true],
          [y.id, 'delta', true],
        ],
      );
      assert.deepEqual(echo, before[0], 'an unchanged flag keeps its row and its updatedAt');
      assert.deepEqual([pilot?.id, pilot?.createdAt, pilot?.updatedAt], [before[1]?.id, at(1000), at(9000)]);
      assert.deepEqual([delta?.createdAt, delta?.updatedAt], [at(1000), at(1000)], 'the other tenant’s are untouched');
      assert.deepEqual(await c.store.tenants.environments([]), []);
    });

    it('childTenants: the direct children of the tenants asked for, in id order, that the visibility allows', async () => {
      const p = await newTenant(c.store, ROOT, '1.', { isPartner: true });
      const q = await newTenant(c.store, ROOT, '1.', { isPartner: true });
      const p1 = await childOf(c.store, p);
      const p2 = await childOf(c.store, p);
      await childOf(c.store, p1);
      const q1 = await childOf(c.store, q);
      const now = at(HOUR);
      assert.deepEqual(ids(await c.store.tenants.childTenants([p.id], ALL, now, 100)), [p1.id, p2.id], 'not the grandchild');
      assert.deepEqual(ids(await c.store.tenants.childTenants([q.id, p.id], ALL, now, 100)), sortedIds([p1, p2, q1]));
      const ofP = subtrees([p.path]);
      const roots = await c.store.tenants.childTenants([ROOT], ofP, now, 100);
      assert.deepEqual(ids(roots), [p.id], 'a partner sees itself among the root’s children, not the other partner');
      assert.deepEqual(await c.store.tenants.childTenants([q.id], ofP, now, 100), [], 'nor the other’s children');
      assert.deepEqual(ids(await c.store.tenants.childTenants([p.id], subtrees([], p1.id), now, 100)), [p1.id], 'a home tenant alone');
      // Support staff see the tenants that consent, while their consent lasts
      const support: Visibility = { kind: 'some', subtreePaths: [], homeId: null, consentingTenants: true };
      assert.deepEqual(await c.store.tenants.childTenants([q.id], support, now, 100), []);
      await c.store.tenants.updateTenant(q1.id, { supportEnabled: true, supportExpiresAt: at(2 * HOUR), updatedAt: now });
      assert.deepEqual(ids(await c.store.tenants.childTenants([q.id], support, now, 100)), [q1.id]);
      assert.deepEqual(await c.store.tenants.childTenants([q.id], support, at(2 * HOUR), 100), [], 'consent that has ended');
      assert.deepEqual(await c.store.tenants.childTenants([], ALL, now, 100), []);
      // at most `limit`, the first in id order over all the parents asked for
      assert.deepEqual(ids(await c.store.tenants.childTenants([q.id, p.id], ALL, now, 2)), sortedIds([p1, p2, q1]).slice(0, 2));
      assert.deepEqual(await c.store.tenants.childTenants([q.id, p.id], ALL, now, 0), []);
    });

    describe('search and count', () => {
      // p (partner)              q (partner)
      //   p1 alpha (partner)       q1 alpha (support, ended)
      //     p11 alpha beta         q2 delta (support, lasting)
      //   p2 gamma (support)
      let p: Tenant, p1: Tenant, p11: Tenant, p2: Tenant, q: Tenant, q1: Tenant, q2: Tenant;
      const now = at(10 * HOUR);
      before(async () => {
        const s = c.store;
        p = await newTenant(s, ROOT, '1.', { name: 'zeta', isPartner: true, at: T0 });
        q = await newTenant(s, ROOT, '1.', { name: 'omega', isPartner: true, at: T0 });
        p1 = await childOf(s, p, { name: 'alpha', isPartner: true, at: at(HOUR) });
        p11 = await childOf(s, p1, { name: 'alpha beta', at: at(2 * HOUR) });
        p2 = await childOf(s, p, { name: 'gamma', at: at(3 * HOUR) });
        q1 = await childOf(s, q, { name: 'alpha', at: at(HOUR) });
        q2 = await childOf(s, q, { name: 'delta', at: at(4 * HOUR) });
        await s.tenants.updateTenant(p2.id, { supportEnabled: true, updatedAt: p2.createdAt });
        await s.tenants.updateTenant(q1.id, { supportEnabled: true, supportExpiresAt: at(5 * HOUR), updatedAt: q1.createdAt });
        await s.tenants.updateTenant(q2.id, { supportEnabled: true, supportExpiresAt: at(20 * HOUR), updatedAt: q2.createdAt });
        await s.tenants.updateTenant(p11.id, { enabled: false, updatedAt: p11.createdAt });
        await s.tenants.setEnvironments(p1.id, new Map([['echo', true]]), T0);
        await s.tenants.setEnvironments(p2.id, new Map([['echo', false]]), T0);
        await s.tenants.setEnvironments(q1.id, new Map([['echo', true]]), T0);
        await s.labels.insertLabels(
          [p11, q1].map((t) => ({
            id: randomUUID(),
            tenantId: t.id,
            name: 'Region',
            nameNormalized: 'region',
            value: 'eu',
            ownerPartnerTenantId: t.id === p11.id ? p.id : q.id,
            restricted: false,
            createdAt: T0,
          })),
        );
        // a subscription named gold of each partner, assigned to one tenant of each
        for (const [partner, tenant] of [
          [p, p2],
          [q, q2],
        ] as const) {
          const service = {
            id: randomUUID(),
            ownerTenantId: partner.id,
            name: 'Edr',
            nameNormalized: 'edr',
            description: null,
            createdAt: T0,
            updatedAt: T0,
          };
          await s.subscriptions.insertService(service);
          const gold = { id: randomUUID(), partnerTenantId: partner.id, serviceId: service.id, name: 'Gold', nameNormalized: 'gold' };
          await s.subscriptions.insertSubscription({ ...gold, description: null, createdAt: T0, updatedAt: T0, retiredAt: null });
          await s.subscriptions.assign(tenant.id, gold.id, T0, 'admin');
        }
      });

      /** each case: a search, a visibility, and exactly the tenants it finds */
      const cases = (): [string, Partial<TenantSearch>, Visibility, Tenant[]][] => {
        const ofP = subtrees([p.path]);
        const both = { hierarchyPaths: [p.path, q.path] };
        const support: Visibility = { kind: 'some', subtreePaths: [], homeId: null, consentingTenants: true };
        return [
          ['a partner’s subtree', {}, ofP, [p, p1, p11, p2]],
          ['a subtree and a home tenant', {}, subtrees([p1.path], p.id), [p, p1, p11]],
          ['a home tenant alone', {}, subtrees([], q1.id), [q1]],
          ['nothing', {}, subtrees([]), []],
          ['vendor-wide within two hierarchies', both, ALL, [p, p1, p11, p2, q, q1, q2]],
          ['support: consenting tenants, while consent lasts', both, support, [p2, q2]],
          ['a name, exactly', { name: { pattern: 'alpha', wildcard: false, id: null } }, ofP, [p1]],
          ['a name, exactly, vendor-wide', { ...both, name: { pattern: 'alpha', wildcard: false, id: null } }, ALL, [p1, q1]],
          ['a name pattern', { name: { pattern: 'alpha%', wildcard: true, id: null } }, ofP, [p1, p11]],
          ['a name, or the id it spells', { name: { pattern: 'nothing', wildcard: false, id: p2.id } }, ofP, [p2]],
          ['the id of another partner’s tenant', { name: { pattern: 'nothing', wildcard: false, id: q1.id } }, ofP, []],
          ['ids', { ids: [p1.id, q1.id] }, ofP, [p1]],
          ['partners', { isPartner: true }, ofP, [p, p1]],
          ['a parent', { parentId: p.id }, ofP, [p1, p2]],
          ['another partner’s children', { parentId: q.id }, ofP, []],
          ['enabled in an environment', { environment: { name: 'echo', enabled: true } }, ofP, [p1]],
          ['not enabled in an environment', { environment: { name: 'echo', enabled: false } }, ofP, [p, p11, p2]],
          ['disabled', { environment: { name: null, enabled: false } }, ofP, [p11]],
          ['a label', { labelName: { pattern: 'region', wildcard: false } }, ofP, [p11]],
          ['a subscription', { subscriptionName: { pattern: 'gold', wildcard: false } }, ofP, [p2]],
          ['a subscription pattern, vendor-wide', { ...both, subscriptionName: { pattern: 'go%', wildcard: true } }, ALL, [p2, q2]],
          ['a creation range', { created: { start: at(HOUR), end: at(2 * HOUR) } }, ofP, [p1, p11]],
          ['with support', { withSupport: true }, ofP, [p2]],
          ['without support', { withSupport: false }, ofP, [p, p1, p11]],
          ['a hierarchy inside the visible subtree', { hierarchyPaths: [p1.path] }, ofP, [p1, p11]],
          ['a hierarchy outside it', { hierarchyPaths: [q.path] }, ofP, []],
        ];
      };

      it('finds exactly the tenants of each filter that the visibility allows, and count agrees', async () => {
        for (const [what, filter, visibility, expected] of cases()) {
          const search: TenantSearch = { ...BY_ID, ...filter };
          const found = await c.store.tenants.search(search, visibility, { limit: 500 }, now);
          assert.deepEqual(ids(found), sortedIds(expected), what);
          assert.equal(await c.store.tenants.count(search, visibility, now), expected.length, `count: ${what}`);
        }
      });

      it('pages by offset and by keyset alike, in both directions of each order', async () => {
        const views: [Partial<TenantSearch>, Visibility][] = [
          [{}, subtrees([p.path])],
          [{ hierarchyPaths: [p.path, q.path] }, ALL],
          [{ hierarchyPaths: [p.path, q.path], isPartner: false }, ALL],
        ];
        for (const [filter, visibility] of views) {
          for (const orderBy of ['Id', 'Name', 'CreatedAt'] as const) {
            const whole = { ...filter, orderBy, orderDir: 'asc' as const };
            const all = ids(await c.store.tenants.search(whole, visibility, { limit: 500 }, now));
            assert.ok(all.length >= 3, 'enough rows for several pages');
            for (const orderDir of ['asc', 'desc'] as const) {
              const search: TenantSearch = { ...filter, orderBy, orderDir };
              const expected = orderDir === 'asc' ? all : [...all].reverse();
              const byOffset: string[] = [];
              const byKeyset: string[] = [];
              for (let offset = 0; offset < all.length + 2; offset += 2) {
                byOffset.push(...ids(await c.store.tenants.search(search, visibility, { offset, limit: 2 }, now)));
              }
              let last: Tenant | undefined;
              for (let page = 0; page <= all.length; page++) {
                const window = last ? { after: { orderBy, orderDir, value: orderValue(last, orderBy), id: last.id }, limit: 2 } : { limit: 2 };
                const rows = await c.store.tenants.search(search, visibility, window, now);
                if (rows.length === 0) break;
                byKeyset.push(...ids(rows));
                last = rows.at(-1);
              }
              const label = `${JSON.stringify(filter)} by ${orderBy} ${orderDir}`;
              assert.deepEqual(byOffset, expected, `offset pages: ${label}`);
              assert.deepEqual(byKeyset, expected, `keyset pages: ${label}`);
            }
          }
        }
      });
    });

    it('foldSubtreeSizes folds rows, several at once and beside new tenants, without changing any count', async () => {
      const direct = () => c.store.tenants.count({ ...BY_ID, created: { start: new Date(0), end: null } }, ALL, T0);
      const summed = () => c.store.tenants.count(BY_ID, ALL, T0);
      assert.equal(await summed(), await direct(), 'the sum of subtree sizes is the number of tenants');
      const parent = await childOf(c.store, a, { isPartner: true });
      const folds = race(RACERS, () => c.store.tenants.foldSubtreeSizes());
      const inserts = race(RACERS, () => childOf(c.store, parent));
      fulfilled(await inserts);
      const removed = fulfilled(await folds);
      assert.ok(
        removed.every((n) => n >= 0),
        'a count of rows removed',
      );
      const total = await direct();
      assert.equal(await summed(), total, 'no change lost by folds at once');
      assert.equal(await c.store.tenants.count(BY_ID, subtrees([parent.path]), T0), RACERS + 1, 'the subtree’s size too');
      await c.store.tenants.foldSubtreeSizes();
      assert.equal(await c.store.tenants.foldSubtreeSizes(), 0, 'nothing left to fold');
      assert.equal(await summed(), total);
    });

    it('lockExpired: enabled tenants expired before the cutoff, oldest first; workers at once each take a different one', async () => {
      const parent = await childOf(c.store, b, { isPartner: true });
      const expired: Tenant[] = [];
      for (let i = 5; i >= 1; i--) {
        const t = await childOf(c.store, parent);
        await c.store.tenants.updateTenant(t.id, { expiresAt: at(-i * HOUR), updatedAt: T0 });
        expired.push(t);
      }
      const disabled = await childOf(c.store, parent);
      await c.store.tenants.updateTenant(disabled.id, { expiresAt: at(-9 * HOUR), enabled: false, updatedAt: T0 });
      const later = await childOf(c.store, parent);
      await c.store.tenants.updateTenant(later.id, { expiresAt: at(HOUR), updatedAt: T0 });
      const cutoff = T0;
      assert.deepEqual(ids(await c.store.tenants.lockExpired(cutoff, 10)), ids(expired), 'the expired enabled ones, oldest first');
      assert.deepEqual(ids(await c.store.tenants.lockExpired(cutoff, 2)), ids(expired.slice(0, 2)));
      assert.deepEqual(ids(await c.store.tenants.lockExpired(at(-5 * HOUR), 10)), [], 'expired before the cutoff only');
      // the expiry job: each worker locks one and disables it, in its transaction
      const taken = fulfilled(
        await raceTransactions(c, expired.length, async (tx) => {
          const [t] = await tx.tenants.lockExpired(cutoff, 1);
          if (t) await tx.tenants.updateTenant(t.id, { enabled: false, updatedAt: cutoff });
          return t?.id;
        }),
      );
      assert.deepEqual([...taken].sort(), ids(expired).sort(), 'each expired tenant taken by exactly one worker, and every worker took one');
      assert.deepEqual(await c.store.tenants.lockExpired(cutoff, 10), []);
    });
  });
}
