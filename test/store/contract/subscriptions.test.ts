// SubscriptionStore contract (src/subscriptions/store.ts), on every engine: services and partner
// subscriptions listed per owner (never another's), the unique rules service.name and
// subscription.name (a retired subscription frees its name), assignment that says whether it
// changed anything (of many at once, exactly one did), and what a tenant has, per tenant.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { PartnerSubscription, Service } from '../../../src/subscriptions/model.js';
import type { Tenant } from '../../../src/tenants/model.js';
import {
  at,
  childOf,
  type Contract,
  fulfilled,
  oneWinsOthersDuplicate,
  openContract,
  race,
  RACERS,
  raceTransactions,
  rejectsDuplicate,
  T0,
  trues,
  twoTenants,
  TX_RACERS,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

const service = (owner: Tenant, name: string): Service & { nameNormalized: string } => ({
  id: randomUUID(),
  ownerTenantId: owner.id,
  name,
  nameNormalized: name.toLowerCase(),
  description: `${name} described`,
  createdAt: T0,
  updatedAt: T0,
});

const subscription = (partner: Tenant, s: Service, name: string): PartnerSubscription & { nameNormalized: string } => ({
  id: randomUUID(),
  partnerTenantId: partner.id,
  serviceId: s.id,
  name,
  nameNormalized: name.toLowerCase(),
  description: null,
  createdAt: T0,
  updatedAt: T0,
  retiredAt: null,
});

/** the domain object of a row as inserted */
const plain = <T extends { nameNormalized: string }>(row: T): Omit<T, 'nameNormalized'> => {
  const { nameNormalized: _, ...rest } = row;
  return rest;
};

for (const engine of engines()) {
  describe(`SubscriptionStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    it('services: found by id, listed per owner by name then id, never another owner’s', async () => {
      const pa = await childOf(c.store, a, { isPartner: true });
      const pb = await childOf(c.store, b, { isPartner: true });
      const [s1, s2, s3] = [service(pa, 'Backup'), service(pa, 'Antivirus'), service(pb, 'Backup')];
      for (const s of [s1!, s2!, s3!]) await c.store.subscriptions.insertService(s);
      assert.deepEqual(await c.store.subscriptions.findService(s1!.id), plain(s1!));
      assert.equal(await c.store.subscriptions.findService(randomUUID()), undefined);
      assert.deepEqual(await c.store.subscriptions.listServices([pa.id]), [plain(s2!), plain(s1!)]);
      assert.deepEqual(await c.store.subscriptions.listServices([pb.id]), [plain(s3!)]);
      assert.equal((await c.store.subscriptions.listServices([pa.id, pb.id])).length, 3);
      assert.deepEqual(await c.store.subscriptions.listServices([]), []);
    });

    it('service.name: unique per owner by its key; of one name claimed at once, one insert wins', async () => {
      const pa = await childOf(c.store, a, { isPartner: true });
      const pb = await childOf(c.store, b, { isPartner: true });
      await c.store.subscriptions.insertService(service(pa, 'Mail'));
      await rejectsDuplicate(c.store.subscriptions.insertService(service(pa, 'MAIL')), 'service.name');
      await c.store.subscriptions.insertService(service(pb, 'Mail'));
      const results = await race(RACERS, () => c.store.subscriptions.insertService(service(pa, 'Contended')));
      oneWinsOthersDuplicate(results, 'service.name');
      assert.deepEqual(
        (await c.store.subscriptions.listServices([pa.id])).map((s) => s.name),
        ['Contended', 'Mail'],
      );
    });

    it('subscriptions: listed per partner by name then id, retired ones only when asked; retiring frees the name', async () => {
      const pa = await childOf(c.store, a, { isPartner: true });
      const pb = await childOf(c.store, b, { isPartner: true });
      const s = service(pa, 'Filtering');
      await c.store.subscriptions.insertService(s);
      const gold = subscription(pa, s, 'Gold');
      const bronze = subscription(pa, s, 'Bronze');
      const theirs = subscription(pb, s, 'Gold');
      for (const x of [gold, bronze, theirs]) await c.store.subscriptions.insertSubscription(x);
      assert.deepEqual(await c.store.subscriptions.findSubscription(gold.id), plain(gold));
      assert.equal(await c.store.subscriptions.findSubscription(randomUUID()), undefined);
      assert.deepEqual(await c.store.subscriptions.listSubscriptions([pa.id], false), [plain(bronze), plain(gold)]);
      await rejectsDuplicate(c.store.subscriptions.insertSubscription(subscription(pa, s, 'GOLD')), 'subscription.name');

      await c.store.subscriptions.retireSubscription(gold.id, at(5000));
      const retired = { ...plain(gold), retiredAt: at(5000), updatedAt: at(5000) };
      assert.deepEqual(await c.store.subscriptions.findSubscription(gold.id), retired);
      assert.deepEqual(await c.store.subscriptions.listSubscriptions([pa.id], false), [plain(bronze)]);
      assert.deepEqual(await c.store.subscriptions.listSubscriptions([pa.id], true), [plain(bronze), retired]);
      assert.deepEqual(await c.store.subscriptions.listSubscriptions([pb.id], true), [plain(theirs)], 'the other partner’s of that name is live');
      const again = subscription(pa, s, 'Gold');
      await c.store.subscriptions.insertSubscription(again);
      assert.deepEqual(
        (await c.store.subscriptions.listSubscriptions([pa.id], false)).map((x) => x.id),
        [bronze.id, again.id],
      );
      assert.deepEqual(await c.store.subscriptions.listSubscriptions([], true), []);
    });

    it('findSubscription forUpdate serialises read-modify-writes of one subscription', async () => {
      const pa = await childOf(c.store, a, { isPartner: true });
      const s = service(pa, 'Locked');
      await c.store.subscriptions.insertService(s);
      const sub = subscription(pa, s, 'Plan');
      await c.store.subscriptions.insertSubscription(sub);
      // each transaction retires it only if it finds it live: one does
      const retiredHere = fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx, i) => {
          const found = await tx.subscriptions.findSubscription(sub.id, true);
          if (!found || found.retiredAt) return false;
          await tx.subscriptions.retireSubscription(sub.id, at(i * 1000 + 1000));
          return true;
        }),
      );
      assert.equal(trues(retiredHere), 1);
      assert.deepEqual((await c.store.subscriptions.findSubscription(sub.id))?.retiredAt, at((retiredHere.indexOf(true) + 1) * 1000));
    });

    it('assign and unassign say whether they changed anything: of many at once, exactly one did', async () => {
      const pa = await childOf(c.store, a, { isPartner: true });
      const s = service(pa, 'Assigned');
      await c.store.subscriptions.insertService(s);
      const sub = subscription(pa, s, 'Plan');
      await c.store.subscriptions.insertSubscription(sub);
      const t = await childOf(c.store, pa);
      const u = await childOf(c.store, pa);
      assert.equal(trues(fulfilled(await race(RACERS, (i) => c.store.subscriptions.assign(t.id, sub.id, at(i), `actor ${i}`)))), 1);
      assert.equal(await c.store.subscriptions.assign(t.id, sub.id, at(99), 'again'), false);
      assert.equal(await c.store.subscriptions.assign(u.id, sub.id, at(99), 'other'), true, 'another tenant has its own assignment');
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.subscriptions.unassign(t.id, sub.id)))), 1);
      assert.equal(await c.store.subscriptions.unassign(t.id, sub.id), false);
      assert.deepEqual(
        (await c.store.subscriptions.subscriptionsFor([t.id, u.id])).map((x) => x.tenantId),
        [u.id],
        'unassigning from one tenant leaves the other’s',
      );
    });

    it('subscriptionsFor: what each tenant asked for has, with its service, by tenant then name; nothing of others', async () => {
      const pa = await childOf(c.store, a, { isPartner: true });
      const pb = await childOf(c.store, b, { isPartner: true });
      const sa = service(pa, 'Edr');
      const sb = service(pb, 'Edr');
      await c.store.subscriptions.insertService(sa);
      await c.store.subscriptions.insertService(sb);
      const [zeta, alpha, theirs] = [subscription(pa, sa, 'Zeta'), subscription(pa, sa, 'Alpha'), subscription(pb, sb, 'Alpha')];
      for (const x of [zeta!, alpha!, theirs!]) await c.store.subscriptions.insertSubscription(x);
      const ta = await childOf(c.store, pa);
      const tb = await childOf(c.store, pb);
      await c.store.subscriptions.assign(ta.id, zeta!.id, T0, 'x');
      await c.store.subscriptions.assign(ta.id, alpha!.id, T0, 'x');
      await c.store.subscriptions.assign(tb.id, theirs!.id, T0, 'x');
      const had = await c.store.subscriptions.subscriptionsFor([ta.id]);
      assert.deepEqual(had, [
        { tenantId: ta.id, subscription: plain(alpha!), service: plain(sa) },
        { tenantId: ta.id, subscription: plain(zeta!), service: plain(sa) },
      ]);
      const both = await c.store.subscriptions.subscriptionsFor([tb.id, ta.id]);
      // ta was created first: its id is the smaller
      assert.deepEqual(
        both.map((x) => x.tenantId),
        [ta.id, ta.id, tb.id],
      );
      assert.deepEqual(both.find((x) => x.tenantId === tb.id)?.service, plain(sb));
      assert.deepEqual(await c.store.subscriptions.subscriptionsFor([]), []);
    });
  });
}
