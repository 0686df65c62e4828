// Property: for any caller, any combination of filters, any ordering and any page size, paging
// to the end (in cursor mode and in page mode) yields exactly the matching tenants the caller
// can see, each once, in the requested order, with exact count / hasMore / totalCount, equal to
// an independent model computed here from the data the test created.
//
// One random dataset per engine (~50 tenants, built through the API from a fast-check sample with
// a fixed seed); fast-check then varies the caller and the query.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ROLE_IDS } from '../../src/access/roles.js';
import { ManualClock } from '../../src/clock.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const SEED = 20261122;
// runs are cheap (the dataset is built once); fewer than ~100 missed e.g. `_` taken as a wildcard
const NUM_RUNS = 100;
const TENANTS = 50;

const T0 = Date.parse('2026-11-22T10:00:00.000Z');
const minute = (m: number) => T0 + m * 60_000;
/** the instant every query is asked at; some support grants have ended by then, some not */
const NOW = minute(200);

const ENVS = ['echo', 'delta', 'pilot'] as const;
const LABELS = ['region', 'Tier', 'cost_center', 'costXcenter'];
const SUBSCRIPTIONS = ['Gold Plan', 'goldXplan', 'gold_plan', 'Silver'];
const NAME_CHARS = ['a', 'b', 'B', '_', '%', 'é', 'É', 'Ａ', ' '];

// ---- the independent model ---------------------------------------------------------------------

interface ModelTenant {
  id: string;
  parent: string | null;
  /** ancestors and self, root first */
  lineage: string[];
  name: string;
  norm: string;
  isPartner: boolean;
  envs: Map<string, boolean>;
  labels: string[]; // normalized names
  subs: string[]; // normalized names of assigned subscriptions
  support: boolean;
  supportUntil: number | null;
  created: number;
  updated: number;
}

const normalize = (s: string) => s.normalize('NFKC').toLowerCase();
/** a tenant name as the service stores it: NFC, trimmed, whitespace collapsed */
const displayName = (raw: string) => raw.normalize('NFC').trim().replace(/\s+/g, ' ');
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `%` is a wildcard (everything else literal, `_` too); without `%` the whole text must match */
function textMatches(value: string, raw: string): boolean {
  const p = normalize(raw.trim());
  if (!raw.includes('%')) return value === p;
  return new RegExp('^' + p.split('%').map(escapeRe).join('.*') + '$', 's').test(value);
}

const supportOn = (t: ModelTenant) => t.support && (t.supportUntil === null || t.supportUntil > NOW);
const active = (t: ModelTenant) => [...t.envs.values()].some(Boolean);

type Caller = { label: string; token: string; sees: (t: ModelTenant) => boolean };

interface Query {
  ids?: string[];
  name?: string;
  environmentFilter?: { name?: string; enabled?: boolean };
  labelFilter?: { label_name: string };
  withPartnerSubscription?: string;
  partnership?: { parent?: string; is_partner?: boolean };
  isPartner?: boolean;
  createdTimeFilter?: { startTime?: string; endTime?: string };
  modifiedTimeFilter?: { startTime?: string; endTime?: string };
  withSupport?: boolean;
  forHierarchies?: string[];
  orderBy: 'Id' | 'CreatedAt' | 'UpdatedAt' | 'Name';
  orderDir: 'asc' | 'desc';
  maxResults: number;
}

const inRange = (v: number, r: { startTime?: string; endTime?: string } | undefined) =>
  !r || ((r.startTime === undefined || Date.parse(withZone(r.startTime)) <= v) && (r.endTime === undefined || v <= Date.parse(withZone(r.endTime))));
const withZone = (s: string) => (s.endsWith('Z') ? s : s + 'Z');

function matches(t: ModelTenant, q: Query): boolean {
  if (q.ids && !q.ids.includes(t.id)) return false;
  if (q.name !== undefined && !(textMatches(t.norm, q.name) || (/^[1-9][0-9]{0,17}$/.test(q.name.trim()) && q.name.trim() === t.id))) return false;
  if (q.environmentFilter) {
    const { name, enabled } = q.environmentFilter;
    if (name === undefined) {
      if (active(t) !== (enabled ?? true)) return false;
    } else {
      const there = t.envs.get(name.toLowerCase()) === true;
      if (there !== (enabled !== false)) return false;
    }
  }
  if (q.labelFilter && !t.labels.some((l) => textMatches(l, q.labelFilter!.label_name))) return false;
  if (q.withPartnerSubscription !== undefined && !t.subs.some((s) => textMatches(s, q.withPartnerSubscription!))) return false;
  if (q.partnership?.parent !== undefined && t.parent !== q.partnership.parent) return false;
  const isPartner = q.isPartner ?? q.partnership?.is_partner;
  if (isPartner !== undefined && t.isPartner !== isPartner) return false;
  if (!inRange(t.created, q.createdTimeFilter) || !inRange(t.updated, q.modifiedTimeFilter)) return false;
  if (q.withSupport !== undefined && supportOn(t) !== q.withSupport) return false;
  if (q.forHierarchies && !q.forHierarchies.some((id) => t.lineage.includes(id))) return false;
  return true;
}

function compare(a: ModelTenant, b: ModelTenant, q: Query): number {
  const byId = Number(BigInt(a.id) - BigInt(b.id));
  let c = 0;
  if (q.orderBy === 'CreatedAt') c = a.created - b.created;
  if (q.orderBy === 'UpdatedAt') c = a.updated - b.updated;
  // the database orders text by code point (C collation): the UTF-8 bytes
  if (q.orderBy === 'Name') c = Buffer.compare(Buffer.from(a.norm), Buffer.from(b.norm));
  const r = c !== 0 ? Math.sign(c) : Math.sign(byId);
  return q.orderDir === 'asc' ? r : -r;
}

function expected(model: ModelTenant[], caller: Caller, q: Query): string[] {
  return model
    .filter((t) => caller.sees(t) && matches(t, q))
    .sort((a, b) => compare(a, b, q))
    .map((t) => t.id);
}

// ---- the random dataset ----------------------------------------------------------------------

const minutes = (min: number, max: number) => fc.integer({ min, max });
const tenantSpec = fc.record({
  partner: fc.integer({ min: 0, max: 99 }).map((n) => n < 18),
  parentPick: fc.nat(),
  name: fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: fc.constantFrom(...NAME_CHARS), minLength: 1, maxLength: 5 }).filter((s) => s.trim().length > 0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 60 }).map(String) }, // looks like a tenant id
  ),
  envs: fc.subarray([...ENVS], { minLength: 1 }),
  labels: fc.subarray(LABELS),
  created: minutes(1, 120),
  support: fc.option(fc.record({ after: minutes(0, 60), until: fc.option(minutes(1, 60)) }), { freq: 3 }),
  envChange: fc.option(
    fc.record({
      after: minutes(0, 60),
      changes: fc.array(fc.record({ name: fc.constantFrom(...ENVS), enabled: fc.boolean() }), { maxLength: 3 }),
      disable: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    }),
    { freq: 3 },
  ),
  assigns: fc.array(fc.record({ pick: fc.nat(), after: minutes(0, 60) }), { maxLength: 2 }),
  subscriptions: fc.subarray(SUBSCRIPTIONS, { minLength: 1, maxLength: 2 }),
});

async function buildDataset(t: TestApp): Promise<{ model: ModelTenant[]; byId: Map<string, ModelTenant> }> {
  const [specs] = fc.sample(fc.array(tenantSpec, { minLength: TENANTS, maxLength: TENANTS }), { seed: SEED, numRuns: 1 });
  const root = await t.rootToken();
  const ok = async (query: string, variables: Record<string, unknown>) => {
    const res = await tq(t, root, query, variables);
    assert.equal(res.body.errors, undefined, res.text);
    return res.body.data;
  };

  const rootTenant: ModelTenant = {
    id: '1',
    parent: null,
    lineage: ['1'],
    name: 'Vendor',
    norm: 'vendor',
    isPartner: true,
    envs: new Map(ENVS.map((e) => [e, true])),
    labels: [],
    subs: [],
    support: false,
    supportUntil: null,
    created: minute(0),
    updated: minute(0),
  };
  const model: ModelTenant[] = [rootTenant];
  const byId = new Map([['1', rootTenant]]);
  const partners: ModelTenant[] = [rootTenant];

  // tenants, parents first, each at its own (random, not increasing) creation time
  for (const [i, spec] of specs!.entries()) {
    const parent = i < 3 ? rootTenant : partners[spec.parentPick % partners.length]!;
    const isPartner = i < 6 || spec.partner;
    t.clock.set(new Date(minute(spec.created)));
    const id = await createTenant(t, parent.id, {
      name: spec.name,
      isPartner,
      environments: spec.envs,
      labels: spec.labels.map((name) => ({ name, value: 'v' })),
    });
    const m: ModelTenant = {
      id,
      parent: parent.id,
      lineage: [...parent.lineage, id],
      name: displayName(spec.name),
      norm: normalize(displayName(spec.name)),
      isPartner,
      envs: new Map(spec.envs.map((e) => [e, true])),
      labels: spec.labels.map(normalize),
      subs: [],
      support: false,
      supportUntil: null,
      created: minute(spec.created),
      updated: minute(spec.created),
    };
    model.push(m);
    byId.set(id, m);
    if (isPartner) partners.push(m);
  }

  // every partner packages one or two subscriptions of one vendor service
  t.clock.set(new Date(minute(0)));
  const service = (await ok(`mutation($s: InputService!) { createService(service_input: $s) { id } }`, { s: { name: 'Platform' } })).createService.id;
  const subsOf = new Map<string, { id: string; norm: string }[]>();
  for (const p of partners) {
    const spec = p.id === '1' ? { subscriptions: ['Silver'] } : specs![model.indexOf(p) - 1]!;
    const list: { id: string; norm: string }[] = [];
    for (const name of spec.subscriptions) {
      const data = await ok(`mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { id } }`, {
        s: { service_id: service, name, partner_tenant_id: p.id },
      });
      list.push({ id: data.createPartnerSubscription.id, norm: normalize(name) });
    }
    subsOf.set(p.id, list);
  }

  // then support grants, environment changes and assignments, in time order
  type Event = { at: number; seq: number; run: () => Promise<void> };
  const events: Event[] = [];
  let seq = 0;
  for (const [i, spec] of specs!.entries()) {
    const m = model[i + 1]!;
    if (spec.support) {
      const at = m.created + spec.support.after * 60_000;
      const until = spec.support.until === null ? null : at + spec.support.until * 60_000;
      events.push({
        at,
        seq: seq++,
        run: async () => {
          await ok(`mutation($id: ID!, $until: Time) { enableTenantSupport(tenantID: $id, until: $until) { id } }`, {
            id: m.id,
            until: until === null ? null : new Date(until).toISOString(),
          });
          m.support = true;
          m.supportUntil = until;
          m.updated = at;
        },
      });
    }
    if (spec.envChange && (spec.envChange.changes.length > 0 || spec.envChange.disable)) {
      const change = spec.envChange;
      const at = m.created + change.after * 60_000;
      events.push({
        at,
        seq: seq++,
        run: async () => {
          await ok(`mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { id } }`, {
            id: m.id,
            u: { environments: change.changes, ...(change.disable ? { disable: true } : {}) },
          });
          const next = new Map(m.envs);
          for (const c of change.changes) next.set(c.name, c.enabled);
          if (change.disable) for (const k of next.keys()) next.set(k, false);
          // a request that only restates the current state changes nothing, updated_at included
          if ([...next].some(([name, enabled]) => m.envs.get(name) !== enabled)) m.updated = at;
          m.envs = next;
        },
      });
    }
    // subscriptions of the partners strictly above the tenant
    const available = m.lineage.slice(0, -1).flatMap((pid) => subsOf.get(pid) ?? []);
    const picked = new Set<string>();
    for (const a of spec.assigns) {
      const sub = available[a.pick % available.length];
      if (!sub || picked.has(sub.id)) continue;
      picked.add(sub.id);
      const at = m.created + a.after * 60_000;
      events.push({
        at,
        seq: seq++,
        run: async () => {
          await ok(`mutation($t: ID!, $s: ID!) { assignSubscription(tenant_id: $t, subscription_id: $s) { id } }`, { t: m.id, s: sub.id });
          m.subs.push(sub.norm);
          m.updated = at;
        },
      });
    }
  }
  events.sort((a, b) => a.at - b.at || a.seq - b.seq);
  for (const e of events) {
    t.clock.set(new Date(e.at));
    await e.run();
  }
  t.clock.set(new Date(NOW));
  return { model, byId };
}

// ---- queries -----------------------------------------------------------------------------------

const SEARCH = `query($q: TenantsQuery!) { tenants(tenantsQuery: $q) { results { id } cursorPos count hasMore totalCount } }`;

function queryArb(model: ModelTenant[]): fc.Arbitrary<Query> {
  const ids = model.map((t) => t.id);
  const partnerIds = model.filter((t) => t.isPartner).map((t) => t.id);
  const anyId = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: fc.constant('999999') });
  const flipCase = (s: string) => fc.constantFrom(s, s.toUpperCase(), s.toLowerCase());
  const name = fc.oneof(
    fc.constantFrom(...model.map((t) => t.name)).chain(flipCase), // an exact name
    fc.string({ unit: fc.constantFrom(...NAME_CHARS.filter((c) => c !== ' ')), minLength: 1, maxLength: 4 }), // may carry % and _
    { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom('a', 'B', '_', 'é', 'Ａ'), minLength: 0, maxLength: 2 }).map((s) => `%${s}%`) },
    fc
      .constantFrom(...model.map((t) => t.norm))
      .chain((n) => fc.tuple(fc.nat(n.length), fc.nat(n.length)).map(([a, b]) => `%${n.slice(Math.min(a, b), Math.max(a, b))}%`)),
    anyId, // a tenant id
  );
  const time = fc.tuple(minutes(0, 200), fc.constantFrom(-1, 0, 0, 1), fc.boolean()).map(([m, ms, z]) => {
    const s = new Date(minute(m) + ms).toISOString();
    return z ? s : s.slice(0, -1);
  });
  const range = fc.tuple(fc.option(time), fc.option(time)).map(([a, b]) => {
    const [start, end] = a !== null && b !== null && Date.parse(withZone(a)) > Date.parse(withZone(b)) ? [b, a] : [a, b];
    return { ...(start !== null ? { startTime: start } : {}), ...(end !== null ? { endTime: end } : {}) };
  });
  const bool = fc.boolean();
  return fc
    .record(
      {
        ids: fc.uniqueArray(anyId, { minLength: 0, maxLength: 30 }),
        name,
        environmentFilter: fc.oneof(
          fc.record({ name: fc.constantFrom('echo', 'delta', 'pilot', 'Pilot') }),
          fc.record({ name: fc.constantFrom('echo', 'delta', 'pilot', 'ECHO'), enabled: bool }),
          fc.record({ enabled: bool }),
        ),
        labelFilter: fc.record({
          label_name: fc.constantFrom('region', 'REGION', 'reg%', '%center', 'cost_center', 'cost_%', 'costxcenter', 'tier', '%', 'nope', '%x%'),
        }),
        withPartnerSubscription: fc.constantFrom(
          'Gold Plan',
          'gold plan',
          'gold_plan',
          'gold_%',
          'gold%plan',
          '%plan',
          'goldxplan',
          'SILVER',
          '%',
          'nope',
        ),
        partnership: fc.record({ parent: fc.constantFrom(...partnerIds), is_partner: bool }, { requiredKeys: [] }),
        isPartner: bool,
        createdTimeFilter: range,
        modifiedTimeFilter: range,
        withSupport: bool,
        forHierarchies: fc.uniqueArray(anyId, { minLength: 1, maxLength: 3 }),
      },
      { requiredKeys: [] },
    )
    .chain((filters) =>
      fc.record({
        filters: fc.subarray(Object.keys(filters) as (keyof typeof filters)[], { maxLength: 3 }).map((keys) => {
          const f: Partial<Query> = {};
          for (const k of keys) (f as Record<string, unknown>)[k] = filters[k];
          // isPartner and partnership.is_partner must agree (disagreeing is BAD_USER_INPUT)
          if (f.isPartner !== undefined && f.partnership?.is_partner !== undefined) f.isPartner = f.partnership.is_partner;
          return f;
        }),
        orderBy: fc.constantFrom('Id', 'CreatedAt', 'UpdatedAt', 'Name') as fc.Arbitrary<Query['orderBy']>,
        orderDir: fc.constantFrom('asc', 'desc') as fc.Arbitrary<Query['orderDir']>,
        maxResults: fc.integer({ min: 1, max: 7 }),
      }),
    )
    .map(({ filters, ...rest }) => ({ ...filters, ...rest }));
}

interface Page {
  results: { id: string }[];
  cursorPos: string | null;
  count: number;
  hasMore: boolean;
  totalCount: number | null;
}

for (const engine of engines()) {
  describe(`tenants search property (${engine})`, () => {
    let t: TestApp;
    let model: ModelTenant[];
    let callers: Caller[];

    before(async () => {
      t = await startTestApp({ engine, clock: new ManualClock(new Date(minute(0))) });
      ({ model } = await buildDataset(t));
      // callers with roles in tenants of different reach (picked by the same fixed seed, among
      // active tenants: a disabled tenant's clients get no tokens)
      const subtreeSize = (of: ModelTenant) => model.filter((m) => m.lineage.includes(of.id)).length;
      const largest = (list: ModelTenant[]) => list.filter(active).sort((a, b) => subtreeSize(b) - subtreeSize(a) || Number(a.id) - Number(b.id))[0]!;
      const [[leaf, any]] = fc.sample(
        fc.tuple(
          fc.constantFrom(...model.filter((m) => active(m) && !m.isPartner)),
          fc.constantFrom(...model.filter((m) => active(m) && m.id !== '1')),
        ),
        { seed: SEED, numRuns: 1 },
      ) as [[ModelTenant, ModelTenant]];
      const topPartner = largest(model.filter((m) => m.isPartner && m.parent === '1'));
      const nestedPartner = largest(model.filter((m) => m.isPartner && m.parent !== '1' && m.parent !== null));
      const inSubtree = (of: ModelTenant) => (m: ModelTenant) => m.lineage.includes(of.id);
      callers = [{ label: 'root Administrator', token: await t.rootToken(), sees: () => true }];
      for (const [role, tenant] of [
        [ROLE_IDS.Administrator, topPartner],
        [ROLE_IDS.Analyst, nestedPartner],
        [ROLE_IDS.Auditor, any],
        [ROLE_IDS.Responder, leaf],
      ] as const) {
        const c = await clientWithRoles(t, tenant.id, [role]);
        callers.push({ label: `${role} in ${tenant.id}`, token: c.token, sees: inSubtree(tenant) });
      }
      const support = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
      // exactly the tenants with support access on (CONTRACT.md), not its home tenant 1
      callers.push({ label: 'Support', token: support.token, sees: (m) => supportOn(m) });
    });
    after(() => t?.close());

    // the callers who see most, more often: they make the longer walks
    const callerArb = () =>
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(callers[0]!) },
        { weight: 2, arbitrary: fc.constant(callers[1]!) },
        { weight: 3, arbitrary: fc.constantFrom(...callers.slice(2)) },
      );

    const search = async (caller: Caller, q: Record<string, unknown>): Promise<Page> => {
      const res = await tq(t, caller.token, SEARCH, { q });
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.tenants;
    };

    it('the dataset the service holds is the one the model describes', async () => {
      const res = await tq(
        t,
        await t.rootToken(),
        `query($q: TenantsQuery!) { tenants(tenantsQuery: $q) {
        results { id name name_normalized enabled created_at updated_at support_enabled labels { name } partnership { parent is_partner subscriptions { name } } environments { name enabled } } } }`,
        {
          q: { maxResults: 500 },
        },
      );
      assert.equal(res.body.errors, undefined, res.text);
      const got = res.body.data.tenants.results;
      assert.equal(got.length, TENANTS + 1);
      for (const r of got) {
        const m = model.find((x) => x.id === r.id)!;
        assert.deepEqual(
          {
            id: r.id,
            name: r.name,
            norm: r.name_normalized,
            active: r.enabled,
            created: Date.parse(r.created_at),
            updated: Date.parse(r.updated_at),
            support: r.support_enabled,
            labels: r.labels.map((l: { name: string }) => normalize(l.name)).sort(),
            parent: r.partnership.parent,
            isPartner: r.partnership.is_partner,
            subs: r.partnership.subscriptions.map((s: { name: string }) => normalize(s.name)).sort(),
            envs: Object.fromEntries(r.environments.map((e: { name: string; enabled: boolean }) => [e.name, e.enabled])),
          },
          {
            id: m.id,
            name: m.name,
            norm: m.norm,
            active: active(m),
            created: m.created,
            updated: m.updated,
            support: supportOn(m),
            labels: [...m.labels].sort(),
            parent: m.parent,
            isPartner: m.isPartner,
            subs: [...m.subs].sort(),
            envs: Object.fromEntries(m.envs),
          },
        );
      }
      // the data exercises what the property is about
      assert.ok(
        model.some((m) => m.support && !supportOn(m)),
        'some support access has ended',
      );
      assert.ok(
        model.some((m) => supportOn(m)),
        'some support access is on',
      );
      assert.ok(
        model.some((m) => !active(m)),
        'some tenant is disabled',
      );
      assert.ok(new Set(model.map((m) => m.created)).size < model.length, 'some created_at ties');
      assert.ok(new Set(model.map((m) => m.norm)).size < model.length, 'some name ties');
      assert.ok(
        model.some((m) => m.parent !== '1' && m.isPartner && m.parent !== null),
        'a nested partner',
      );
    });

    it('paging to the end yields exactly the model, in order, in cursor mode and in page mode', async () => {
      await fc.assert(
        fc.asyncProperty(callerArb(), queryArb(model), async (caller, q) => {
          const want = expected(model, caller, q);
          const k = q.maxResults;
          const ctx = (what: string) => `${what} for ${caller.label} ${JSON.stringify(q)}`;

          // page mode: pages 1.. and one past the end
          const pages = Math.max(1, Math.ceil(want.length / k));
          for (let p = 1; p <= pages + 1; p++) {
            const page = await search(caller, { ...q, pageNum: p });
            const slice = want.slice((p - 1) * k, p * k);
            assert.deepEqual(
              page.results.map((r) => r.id),
              slice,
              ctx(`page ${p}`),
            );
            assert.equal(page.count, slice.length, ctx(`count of page ${p}`));
            assert.equal(page.hasMore, p * k < want.length, ctx(`hasMore of page ${p}`));
            assert.equal(page.totalCount, want.length, ctx(`totalCount of page ${p}`));
          }

          // cursor mode: the first page, then cursor after cursor until hasMore is false
          const seen: string[] = [];
          let cursor: string | null = null;
          for (let i = 0; ; i++) {
            assert.ok(i <= want.length, ctx('cursor walk does not end'));
            const page: Page = await search(caller, { ...q, ...(cursor !== null ? { cursorPos: cursor } : {}) });
            const slice = want.slice(i * k, (i + 1) * k);
            assert.deepEqual(
              page.results.map((r) => r.id),
              slice,
              ctx(`cursor page ${i + 1}`),
            );
            assert.equal(page.count, slice.length, ctx(`count of cursor page ${i + 1}`));
            assert.equal(page.hasMore, (i + 1) * k < want.length, ctx(`hasMore of cursor page ${i + 1}`));
            if (cursor !== null) assert.equal(page.totalCount, null, ctx('totalCount in cursor mode'));
            seen.push(...page.results.map((r) => r.id));
            if (page.results.length > 0) cursor = page.cursorPos;
            if (!page.hasMore) break;
          }
          assert.deepEqual(seen, want, ctx('all cursor pages'));
          assert.equal(new Set(seen).size, seen.length, ctx('no tenant twice'));
          if (cursor !== null) {
            const end = await search(caller, { ...q, cursorPos: cursor });
            assert.deepEqual([end.results, end.count, end.hasMore, end.cursorPos], [[], 0, false, cursor], ctx('past the end'));
          }
        }),
        { seed: SEED, numRuns: NUM_RUNS },
      );
    });
  });
}
