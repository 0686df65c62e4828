// LabelStore contract (src/labels/store.ts), on every engine: labels listed per tenant (never
// another's), the unique rule label.name (per tenant and owner), no partial batch, updates and
// deletes that reach one label only, and a name claimed at once by many: one wins.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { NewLabel } from '../../../src/labels/store.js';
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
  twoTenants,
  TX_RACERS,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

function label(tenant: Tenant, owner: Tenant, name: string, over: Partial<NewLabel> = {}): NewLabel {
  return {
    id: randomUUID(),
    tenantId: tenant.id,
    name,
    nameNormalized: name.toLowerCase(),
    value: `${name} value`,
    ownerPartnerTenantId: owner.id,
    restricted: false,
    createdAt: T0,
    ...over,
  };
}

for (const engine of engines()) {
  describe(`LabelStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    it('labelsFor lists the labels of the tenants asked for only, by name then id, as inserted', async () => {
      const ta = await childOf(c.store, a);
      const tb = await childOf(c.store, b);
      const mine = [label(ta, a, 'Zone'), label(ta, a, 'Cost centre', { value: null, restricted: true }), label(ta, ta, 'zone')];
      await c.store.labels.insertLabels(mine);
      await c.store.labels.insertLabels([label(tb, b, 'Zone')]);
      const listed = await c.store.labels.labelsFor([ta.id]);
      const expected = [mine[1]!, ...[mine[0]!, mine[2]!].sort((x, y) => x.id.localeCompare(y.id))];
      assert.deepEqual(
        listed,
        expected.map((l) => ({
          id: l.id,
          tenantId: l.tenantId,
          name: l.name,
          value: l.value,
          ownerPartnerTenantId: l.ownerPartnerTenantId,
          restricted: l.restricted,
          createdAt: T0,
          updatedAt: T0,
        })),
      );
      assert.deepEqual((await c.store.labels.labelsFor([tb.id, ta.id])).map((l) => l.tenantId).sort(), [ta.id, ta.id, ta.id, tb.id].sort());
      assert.deepEqual(await c.store.labels.labelsFor([]), []);
    });

    it('label.name: one owner names a label once per tenant; other owners and other tenants may reuse the name', async () => {
      const ta = await childOf(c.store, a);
      const tb = await childOf(c.store, b);
      await c.store.labels.insertLabels([label(ta, a, 'Team')]);
      await rejectsDuplicate(c.store.labels.insertLabels([label(ta, a, 'TEAM', { nameNormalized: 'team' })]), 'label.name');
      // a batch with one duplicate writes none of its labels
      await rejectsDuplicate(c.store.labels.insertLabels([label(ta, a, 'Fresh'), label(ta, a, 'team')]), 'label.name');
      assert.deepEqual(
        (await c.store.labels.labelsFor([ta.id])).map((l) => l.name),
        ['Team'],
        'no partial batch',
      );
      await c.store.labels.insertLabels([label(ta, ta, 'Team'), label(tb, b, 'Team')]);
      assert.equal((await c.store.labels.labelsFor([ta.id, tb.id])).length, 3);
    });

    it('of one label name claimed at once, one insert wins and the others fail with label.name', async () => {
      const t = await childOf(c.store, a);
      const results = await race(RACERS, (i) => c.store.labels.insertLabels([label(t, a, 'Contended', { value: String(i) })]));
      const winner = oneWinsOthersDuplicate(results, 'label.name');
      const stored = await c.store.labels.labelsFor([t.id]);
      assert.deepEqual(
        stored.map((l) => l.value),
        [String(winner)],
      );
    });

    it('findLabel reads one label (undefined when there is none); forUpdate serialises read-modify-writes', async () => {
      const t = await childOf(c.store, a);
      const l = label(t, a, 'Counter', { value: '0' });
      await c.store.labels.insertLabels([l]);
      assert.equal((await c.store.labels.findLabel(l.id))?.name, 'Counter');
      assert.equal(await c.store.labels.findLabel(randomUUID()), undefined);
      fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx) => {
          const found = await tx.labels.findLabel(l.id, true);
          assert.ok(found);
          await tx.labels.updateLabel(l.id, { name: found.name, nameNormalized: 'counter', value: String(Number(found.value) + 1), updatedAt: T0 });
        }),
      );
      assert.equal((await c.store.labels.findLabel(l.id))?.value, String(TX_RACERS), 'no increment lost');
    });

    it('updateLabel changes that label only; renaming onto a taken name fails with label.name and changes nothing', async () => {
      const ta = await childOf(c.store, a);
      const tb = await childOf(c.store, b);
      const first = label(ta, a, 'First');
      const second = label(ta, a, 'Second');
      const elsewhere = label(tb, b, 'First');
      await c.store.labels.insertLabels([first, second]);
      await c.store.labels.insertLabels([elsewhere]);
      await c.store.labels.updateLabel(first.id, { name: 'Renamed', nameNormalized: 'renamed', value: null, updatedAt: at(5000) });
      const renamed = await c.store.labels.findLabel(first.id);
      assert.deepEqual([renamed?.name, renamed?.value, renamed?.createdAt, renamed?.updatedAt], ['Renamed', null, T0, at(5000)]);
      const untouched = await c.store.labels.findLabel(elsewhere.id);
      assert.deepEqual([untouched?.name, untouched?.updatedAt], ['First', T0], 'the other tenant’s label of that name is untouched');
      await rejectsDuplicate(
        c.store.labels.updateLabel(second.id, { name: 'renamed', nameNormalized: 'renamed', value: 'x', updatedAt: at(6000) }),
        'label.name',
      );
      const kept = await c.store.labels.findLabel(second.id);
      assert.deepEqual([kept?.name, kept?.value, kept?.updatedAt], ['Second', 'Second value', T0]);
    });

    it('deleteLabel deletes that label only; an unknown id deletes nothing', async () => {
      const ta = await childOf(c.store, a);
      const tb = await childOf(c.store, b);
      const gone = label(ta, a, 'Gone');
      const stays = label(ta, a, 'Stays');
      const other = label(tb, b, 'Gone');
      await c.store.labels.insertLabels([gone, stays]);
      await c.store.labels.insertLabels([other]);
      await c.store.labels.deleteLabel(gone.id);
      await c.store.labels.deleteLabel(randomUUID());
      assert.equal(await c.store.labels.findLabel(gone.id), undefined);
      assert.deepEqual((await c.store.labels.labelsFor([ta.id, tb.id])).map((l) => l.id).sort(), [stays.id, other.id].sort());
      // its name is free again
      await c.store.labels.insertLabels([label(ta, a, 'Gone')]);
    });
  });
}
