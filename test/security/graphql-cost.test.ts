// The cost of GraphQL documents (security list items 98 and 106; docs/graphql.md "Cost and
// budgets"): an estimate of the objects a document can return, refused over MAX_COST before it
// runs; one answer lists at most MAX_CHILD_TENANTS child tenants however deeply it nests them;
// and each request's cost is drawn from its caller's and its home tenant's budgets, 429 when
// either is spent, while other tenants are answered as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getOperationAST, parse } from 'graphql';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { credentialSchema } from '../../src/graphql/credential/schema.js';
import { estimateCost, LIST_SIZE_GUESS, MAX_COST, MUTATION_COST } from '../../src/graphql/cost.js';
import { tenantSchema } from '../../src/graphql/tenant/schema.js';
import { MAX_CHILD_TENANTS, TOO_MANY_CHILDREN } from '../../src/tenants/loaders.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines, transportEngines } from '../helpers/engines.js';
import { clientWithRoles, CREATE_CLIENT, rowCounts } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const tenantCost = (doc: string, variables?: Record<string, unknown>) => {
  const document = parse(doc);
  return estimateCost(tenantSchema(), document, getOperationAST(document)!, variables);
};

describe('the estimate of what a document costs', () => {
  it('counts the objects a page can return: its size from the arguments, defaults included', () => {
    // tenants: 10 x (the page object + 1 x (a tenant))
    assert.equal(tenantCost('{ tenants { results { id name } } }'), 10 * (1 + 1));
    assert.equal(tenantCost('query($n: Int) { tenants(tenantsQuery: {maxResults: $n}) { results { id } } }', { n: 500 }), 500 * 2);
    // a size the service refuses (over 500) is counted as 500; scalars cost nothing
    assert.equal(tenantCost('{ tenants(tenantsQuery: {maxResults: 99999999}) { count totalCount results { id } } }'), 500 * 2);
    // lists the schema does not bound are guessed; environments are three at most
    assert.equal(tenantCost('{ tenants { results { labels { name } environments { name } } } }'), 10 * (1 + (1 + LIST_SIZE_GUESS + 3)));
    // fragments count where they are spread
    assert.equal(tenantCost('{ tenants { results { ...L ...L } } } fragment L on Tenant { labels { name } }'), 10 * (1 + 1 + 2 * LIST_SIZE_GUESS));
  });

  it('counts child tenants once, however deeply they nest: one answer lists at most MAX_CHILD_TENANTS', () => {
    const deep = `{ tenants { results { partnership { child_tenants { id partnership { child_tenants { id partnership { child_tenants { labels { name } } } } } } } } } }`;
    // the page: 10 x (page + tenant + partnership); then MAX_CHILD_TENANTS x the dearest child
    // (one with labels: itself + its labels)
    assert.equal(tenantCost(deep), 10 * 3 + MAX_CHILD_TENANTS * (1 + LIST_SIZE_GUESS));
  });

  it('adds the cost of each root mutation field', () => {
    const document = parse(`mutation { a: createClient(name: "a") { client { id } } b: createClient(name: "b") { client_secret } }`);
    // a: the answer object and its client; b: the answer object
    assert.equal(estimateCost(credentialSchema(), document, getOperationAST(document)!, undefined), 2 + 1 + 2 * MUTATION_COST);
  });

  it('gives no estimate when the variables do not fit (execution refuses them)', () => {
    assert.equal(tenantCost('query($n: Int!) { tenants(tenantsQuery: {maxResults: $n}) { count } }', { n: 'many' }), undefined);
  });
});

for (const engine of transportEngines()) {
  describe(`documents over the cost limit (${engine})`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine });
      token = await t.rootToken();
    });
    after(() => t.close());

    // a full page of tenants with their lists: 500 x (page + tenant + 10 labels + 3 environments
    // + partnership + 10 subscriptions) = 13,000 per alias
    const page = (alias: string) =>
      `${alias}: tenants(tenantsQuery: {maxResults: 500}) { results { id labels { name } environments { name } partnership { subscriptions { id } } } }`;
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => page(`p${i}`)).join(' ')} }`;

    it(`runs a document of ${7 * 13_000} and refuses one of more than ${MAX_COST} before running it`, async () => {
      assert.equal(tenantCost(aliases(7)), 7 * 13_000);
      const runs = await tq(t, token, aliases(7));
      assert.equal(runs.status, 200, runs.text);
      assert.equal(runs.body.errors, undefined, runs.text);
      assert.ok(runs.body.data.p6.results.length > 0);

      const refused = await t.gql(token, aliases(8), undefined, { path: '/public/query', headers: { accept: 'application/graphql-response+json' } });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.data, undefined, 'nothing ran');
      assert.equal(refused.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      assert.match(refused.body.errors[0].message, /could return more than 100000 objects .*smaller pages \(maxResults, perPage, first\)/);
    });
  });
}

for (const engine of engines()) {
  describe(`one answer lists at most ${MAX_CHILD_TENANTS} child tenants (${engine})`, () => {
    let t: TestApp;
    let token: string;
    let x: string;
    let p1: string;
    let p2: string;
    let p3: string;

    /** `n` children under `parent`, written in one statement (the closure trigger fills in the rest). */
    async function bulkChildren(parent: string, n: number, prefix: string) {
      const at = await t.db.kysely.selectFrom('tenants').select(['path', 'depth']).where('id', '=', parent).executeTakeFirstOrThrow();
      const now = t.clock.now();
      await t.db.kysely
        .insertInto('tenants')
        .values(
          Array.from({ length: n }, (_, i) => ({
            parent_id: parent,
            path: '',
            depth: at.depth + 1,
            name: `${prefix}-${i}`,
            name_normalized: `${prefix}-${i}`,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
      await sql`update tenants set path = ${at.path} || id::text || '.' where path = ''`.execute(t.db.kysely);
    }

    before(async () => {
      t = await startTestApp({ engine });
      token = await t.rootToken();
      x = await createTenant(t, '1', { isPartner: true });
      p1 = await createTenant(t, x, { isPartner: true });
      p2 = await createTenant(t, x, { isPartner: true });
      // x: p1 (600 children), p2 (399); p3, under the vendor: 2. p1's, p2's and p3's are 1001
      p3 = await createTenant(t, '1', { isPartner: true });
      await bulkChildren(p1, 600, 'p1-child');
      await bulkChildren(p2, MAX_CHILD_TENANTS - 600 - 1, 'p2-child');
      await bulkChildren(p3, 2, 'p3-child');
    });
    after(() => t.close());

    const children = (ids: string[], inner = 'id') =>
      tq(t, token, `query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids}) { results { id partnership { child_tenants { ${inner} } } } } }`, {
        ids,
      });
    const refusedChildren = (res: Response) => {
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.errors.map((e: { message: string; extensions: { code: string } }) => [e.extensions.code, e.message]),
        res.body.errors.map(() => ['BAD_USER_INPUT', TOO_MANY_CHILDREN]),
      );
    };

    it(`lists ${MAX_CHILD_TENANTS} and refuses one more, over every child_tenants field of the answer`, async () => {
      const one = await children([p1]);
      assert.equal(one.body.errors, undefined, one.text);
      assert.equal(one.body.data.tenants.results[0].partnership.child_tenants.length, 600);
      const two = await children([p1, p2]);
      assert.equal(two.body.errors, undefined, two.text);
      assert.equal(
        two.body.data.tenants.results.flatMap((r: { partnership: { child_tenants: unknown[] } }) => r.partnership.child_tenants).length,
        999,
      );
      // the three partners' children come in one read of 1001: over the limit, the three lists are
      // refused, and the rest of the answer stands
      const three = await children([p1, p2, p3]);
      refusedChildren(three);
      assert.deepEqual(
        three.body.data.tenants.results.map((r: { id: string; partnership: { child_tenants: unknown } }) => [r.id, r.partnership.child_tenants]),
        [p1, p2, p3].sort((a, b) => Number(a) - Number(b)).map((id) => [id, null]),
      );
    });

    it('counts child tenants at every depth together', async () => {
      // x's two children, then their 999: 1001 in all, refused at the second level, the first answered
      const res = await children([x], 'id partnership { child_tenants { id } }');
      refusedChildren(res);
      const level1 = res.body.data.tenants.results[0].partnership.child_tenants;
      assert.deepEqual(level1.map((c: { id: string }) => c.id).sort(), [p1, p2].sort());
      assert.deepEqual(
        level1.map((c: { partnership: { child_tenants: unknown } }) => c.partnership.child_tenants),
        [null, null],
      );
    });

    it('counts the child tenants of sibling fields together', async () => {
      const res = await tq(
        t,
        token,
        `query($a: [ID!], $b: [ID!]) {
          a: tenants(tenantsQuery: {ids: $a}) { results { partnership { child_tenants { id } } } }
          b: tenants(tenantsQuery: {ids: $b}) { results { partnership { child_tenants { id } } } } }`,
        { a: [p1, p2], b: [p3] },
      );
      refusedChildren(res);
      const lists = [...res.body.data.a.results, ...res.body.data.b.results].map(
        (r: { partnership: { child_tenants: unknown[] | null } }) => r.partnership.child_tenants,
      );
      assert.ok(
        lists.some((l) => l === null),
        'one of them is refused',
      );
      assert.ok(lists.flatMap((l) => l ?? []).length <= MAX_CHILD_TENANTS);
    });

    it('the refusal names the way through, and that way lists every child a page at a time', async () => {
      const page = await tq(
        t,
        token,
        `query($p: ID!, $after: ID) { tenants(tenantsQuery: {partnership: {parent: $p}, maxResults: 500, cursorPos: $after}) { count cursorPos results { id } } }`,
        { p: p1 },
      );
      assert.equal(page.body.errors, undefined, page.text);
      assert.equal(page.body.data.tenants.count, 500);
      const rest = await tq(
        t,
        token,
        `query($p: ID!, $after: ID) { tenants(tenantsQuery: {partnership: {parent: $p}, maxResults: 500, cursorPos: $after}) { count } }`,
        { p: p1, after: page.body.data.tenants.cursorPos },
      );
      assert.equal(rest.body.data.tenants.count, 600 - 500);
      assert.match(TOO_MANY_CHILDREN, /tenants\(tenantsQuery: \{partnership: \{parent:/);
    });
  });
}

for (const engine of transportEngines()) {
  describe(`cost budgets per caller and per account (${engine})`, () => {
    let t: TestApp;
    // each costs 20: 10 x (page + tenant)
    const QUERY = '{ tenants { results { id } } }';
    const CALLER_BUDGET = 600;
    const TENANT_BUDGET = 1000;
    let a: string;
    let b: string;
    let c: string;
    let d: string;
    let e: string;
    let t1: string;
    before(async () => {
      t = await startTestApp({
        engine,
        env: { GATEHOUSE_GRAPHQL_COST_PER_MINUTE: String(CALLER_BUDGET), GATEHOUSE_GRAPHQL_TENANT_COST_PER_MINUTE: String(TENANT_BUDGET) },
      });
      // t1 (a partner) and its child t1c are one account; t2 and t3 are others
      t1 = await createTenant(t, '1', { isPartner: true });
      const t1c = await createTenant(t, t1);
      const t2 = await createTenant(t, '1');
      const t3 = await createTenant(t, '1', { labels: Array.from({ length: 100 }, (_, i) => ({ name: `label-${i}` })) });
      a = (await clientWithRoles(t, t1, [ROLE_IDS.Administrator])).token;
      b = (await clientWithRoles(t, t1, [ROLE_IDS.Administrator])).token;
      c = (await clientWithRoles(t, t2, [ROLE_IDS.Administrator])).token;
      d = (await clientWithRoles(t, t1c, [ROLE_IDS.Administrator])).token;
      e = (await clientWithRoles(t, t3, [ROLE_IDS.Administrator])).token;
    });
    after(() => t.close());

    const statuses = async (token: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await tq(t, token, QUERY)).status);
      return out;
    };
    const assertLimited = (res: Response, whose: RegExp) => {
      assert.equal(res.status, 429, res.text);
      assert.equal(res.body.data, undefined);
      assert.equal(res.body.errors[0].extensions.code, 'RATE_LIMITED');
      assert.match(res.body.errors[0].message, whose);
      assert.ok(Number(res.headers['retry-after']) >= 1, res.text);
      assert.equal(res.body.errors[0].extensions.retryAfter, Number(res.headers['retry-after']));
    };

    it("a caller that spends its budget gets 429 on both interfaces, its account's other callers share the account's, another account is answered", async () => {
      assert.equal(tenantCost(QUERY), 20);
      assert.deepEqual(await statuses(a, CALLER_BUDGET / 20), Array(CALLER_BUDGET / 20).fill(200));
      const limited = await tq(t, a, QUERY);
      assertLimited(limited, /This API client has spent its GraphQL budget \(600 a minute; this request's cost is 20\): try again in 2 s/);
      assert.equal(limited.headers['retry-after'], '2', 'the 20 it needs come back at 600 a minute');
      assertLimited(await t.gql(a, '{ clients { id } }'), /This API client has spent its GraphQL budget/);

      // a refused request draws from neither budget: the tenant still has what a's spent requests left
      assert.deepEqual(await statuses(a, 10), Array(10).fill(429));
      const left = (TENANT_BUDGET - CALLER_BUDGET) / 20;
      assert.deepEqual(await statuses(b, left), Array(left).fill(200), "b spends the rest of the tenant's budget");
      const accountSpent = new RegExp(
        `The API clients and users of tenant ${t1} and of the tenants below it have spent their GraphQL budget together \\(1000 a minute`,
      );
      assertLimited(await tq(t, b, QUERY), accountSpent);
      // a client of a child tenant is in its partner's account: making child tenants makes no budget
      assertLimited(await tq(t, d, QUERY), accountSpent);

      // the neighbour in another tenant is answered all the while
      assert.deepEqual(await statuses(c, 25), Array(25).fill(200));
    });

    it('an answer that holds more than its estimate pays the rest after it has run', async () => {
      // estimated 1 x (page + tenant + 10 labels) = 12; it holds the page, the tenant and its 100 labels
      const LABELS = '{ tenants(tenantsQuery: {maxResults: 1}) { results { labels { name } } } }';
      assert.equal(tenantCost(LABELS), 12);
      const out: number[] = [];
      for (let i = 0; i < 8; i++) out.push((await tq(t, e, LABELS)).status);
      // each drew 12, then 90 more once answered: 600 - 102 k >= 12 lets six through, not fifty
      assert.deepEqual(out, [200, 200, 200, 200, 200, 200, 429, 429]);
    });

    it('a mutation refused for the budget writes nothing; the budget refills with time', async () => {
      const before = await rowCounts(t);
      const refused = await t.gql(a, CREATE_CLIENT, { name: 'over-budget' });
      assertLimited(refused, /spent its GraphQL budget/);
      assert.deepEqual(await rowCounts(t), before);

      t.clock.advance(60_000);
      const made = await t.gql(a, CREATE_CLIENT, { name: 'in-budget' });
      assert.equal(made.status, 200, made.text);
      assert.equal(made.body.errors, undefined, made.text);
      assert.equal((await tq(t, b, QUERY)).status, 200);
    });
  });
}
