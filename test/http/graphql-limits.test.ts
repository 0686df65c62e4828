// The bounds on what one GraphQL document may ask for (src/graphql/limits.ts, docs/operations.md):
// each holds at its boundary, and documents built to make validation exponential or quadratic
// are refused quickly, over a real socket, while /healthz keeps answering.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GraphQLExecutor, MAX_TOKENS } from '../../src/graphql/executor.js';
import { tenantSchema } from '../../src/graphql/tenant/schema.js';
import { MAX_ALIASES, MAX_DEPTH, MAX_DIRECTIVES, MAX_FIELDS, MAX_FRAGMENTS, MAX_REPEATS } from '../../src/graphql/limits.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { rowCounts } from '../helpers/seed.js';
import { TENANT_PATH, tq } from '../helpers/tenants.js';

const rep = (n: number, f: (i: number) => string, sep = ' ') => Array.from({ length: n }, (_, i) => f(i)).join(sep);

/** The issue's document: each fragment spreads the previous one twice, so F22 expands to 2^23 fields. */
function fanOut(levels: number): string {
  return [
    'fragment F0 on Tenant { id name }',
    ...Array.from({ length: levels }, (_, i) => `fragment F${i + 1} on Tenant { ...F${i} ...F${i} }`),
    `query { tenants { results { ...F${levels} } } }`,
  ].join('\n');
}

/** `{ tenants { results { partnership { child_tenants { … id … } } } } }` with this field depth. */
function nested(depth: number): string {
  const k = (depth - 3) / 2; // tenants, results, k x (partnership, child_tenants), id
  if (!Number.isInteger(k)) throw new Error('odd depths only');
  return `{ tenants { results { ${'partnership { child_tenants { '.repeat(k)}id${' } }'.repeat(k)} } } }`;
}

/** The scalar fields of Tenant, and __typename: 18 response names. */
const TENANT_SCALARS = [
  '__typename',
  'id',
  'created_at',
  'updated_at',
  'name',
  'name_normalized',
  'enabled',
  'domain',
  'domain_normalized',
  'description',
  'allow_response_actions',
  'actions_approver',
  'expires_at',
  'support_enabled',
  'support_expires_at',
  'support_reason',
  'enabled_in_production',
  'enabled_in_pilot',
];

/**
 * A valid document selecting exactly `total` fields once fragments are expanded, no response name
 * more than MAX_REPEATS times in one selection: tenants, results, MAX_REPEATS spreads of every
 * scalar, then partnership { child_tenants { the rest } }.
 */
function documentWithFields(total: number): string {
  const all = `fragment All on Tenant { ${TENANT_SCALARS.join(' ')} }`;
  const rest = total - 2 - MAX_REPEATS * TENANT_SCALARS.length - 2;
  const whole = Math.floor(rest / TENANT_SCALARS.length);
  const some = TENANT_SCALARS.slice(0, rest % TENANT_SCALARS.length);
  assert.ok(rest >= 0 && whole < MAX_REPEATS, 'total out of the range this builder covers');
  return `{ tenants { results { ${'...All '.repeat(MAX_REPEATS)} partnership { child_tenants { ${'...All '.repeat(whole)} ${some.join(' ')} } } } } } ${all}`;
}

function assertRefused(res: Response, message: RegExp): void {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.data, undefined, res.text);
  assert.ok(res.body.errors.length > 0, res.text);
  for (const e of res.body.errors) assert.equal(e.extensions.code, 'BAD_USER_INPUT', res.text);
  assert.ok(
    res.body.errors.some((e: { message: string }) => message.test(e.message)),
    `${message}: ${res.text}`,
  );
}

for (const engine of transportEngines()) {
  describe(`GraphQL limits at their boundaries (${engine})`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine });
      token = await t.rootToken();
    });
    after(() => t.close());

    const aliased = (n: number) => `{ ${rep(n, (i) => `a${i}: __typename`)} }`;

    it(`runs ${MAX_ALIASES} aliases and refuses ${MAX_ALIASES + 1}`, async () => {
      const at = await t.gql(token, aliased(MAX_ALIASES));
      assert.equal(at.body.errors, undefined, at.text);
      assert.equal(Object.keys(at.body.data).length, MAX_ALIASES);
      assertRefused(await t.gql(token, aliased(MAX_ALIASES + 1)), /more than 30 aliases/);
    });

    it(`runs ${MAX_DIRECTIVES} directives and refuses ${MAX_DIRECTIVES + 1}, counted anywhere in the document`, async () => {
      // twenty aliased fields with two directives each, then the rest on one unaliased field repeated
      // (within the aliases' and repeats' limits)
      const directed = (n: number) =>
        `query($yes: Boolean = true) { ${rep(20, (i) => `d${i}: __typename @include(if: $yes) @skip(if: false)`)} ${rep(n - 40, () => '__typename @include(if: $yes)')} }`;
      const at = await t.gql(token, directed(MAX_DIRECTIVES));
      assert.equal(at.body.errors, undefined, at.text);
      assert.equal(Object.keys(at.body.data).length, 21);
      assertRefused(await t.gql(token, directed(MAX_DIRECTIVES + 1)), /more than 50 directives/);
      // unknown directives, on a fragment and the operation, count too (graphql-js would walk them all first)
      const unknown = `query Q @a @b { ...F } fragment F on Query @c { __typename ${rep(MAX_DIRECTIVES - 2, () => '@x')} }`;
      assertRefused(await t.gql(token, unknown), /more than 50 directives/);
    });

    it('a document over a limit is answered 400 without data under application/graphql-response+json', async () => {
      for (const document of [
        aliased(MAX_ALIASES + 1),
        `{ tenants { results { ${'partnership { child_tenants { '.repeat(MAX_DEPTH)} id ${'} } '.repeat(MAX_DEPTH)} } } }`,
      ]) {
        const res = await t.gql(token, document, undefined, { headers: { accept: 'application/graphql-response+json' } });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.data, undefined, res.text);
        assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT', res.text);
      }
    });

    it('refuses aliased mutations over the limit before running any of them', async () => {
      const before = await rowCounts(t);
      const doc = `mutation { ${rep(MAX_ALIASES + 1, (i) => `c${i}: createClient(name: "alias-flood-${i}") { client_secret }`)} }`;
      assertRefused(await t.gql(token, doc), /aliases/);
      assert.deepEqual(await rowCounts(t), before);
    });

    it(`runs a selection ${MAX_DEPTH} fields deep and refuses one deeper, also when fragments carry the depth`, async () => {
      assert.equal(MAX_DEPTH % 2, 0, 'nested() builds odd depths');
      const at = await tq(t, token, nested(MAX_DEPTH - 1).replace('id', 'partnership { parent }'));
      assert.equal(at.body.errors, undefined, at.text);
      assertRefused(await tq(t, token, nested(MAX_DEPTH + 1)), new RegExp(`nested deeper than ${MAX_DEPTH} levels`));
      // tenants, results, then (partnership, child_tenants) in fragments that spread each other
      const k = (MAX_DEPTH - 2) / 2;
      const frags = rep(k, (i) => `fragment N${i} on Tenant { partnership { child_tenants { ${i + 1 < k ? `...N${i + 1}` : 'id'} } } }`);
      assertRefused(await tq(t, token, `{ tenants { results { ...N0 } } } ${frags}`), /nested deeper than/);
    });

    it(`runs a document selecting ${MAX_FIELDS} fields once fragments are expanded, and refuses ${MAX_FIELDS + 1}`, async () => {
      const at = await tq(t, token, documentWithFields(MAX_FIELDS));
      assert.equal(at.body.errors, undefined, at.text);
      assert.ok(Array.isArray(at.body.data.tenants.results));
      assertRefused(await tq(t, token, documentWithFields(MAX_FIELDS + 1)), new RegExp(`more than ${MAX_FIELDS} fields`));
    });

    it(`runs one field ${MAX_REPEATS} times in one selection and refuses ${MAX_REPEATS + 1}, counting fragments`, async () => {
      const at = await tq(t, token, `{ tenants { results { ${'id '.repeat(MAX_REPEATS)} } } }`);
      assert.equal(at.body.errors, undefined, at.text);
      assertRefused(await tq(t, token, `{ tenants { results { ${'id '.repeat(MAX_REPEATS + 1)} } } }`), /more than 25 times/);
      const viaFragments = `{ tenants { results { id ...A ... on Tenant { ...A } } } } fragment A on Tenant { ${'id '.repeat(MAX_REPEATS - 1)} }`;
      assertRefused(await tq(t, token, viaFragments), /more than 25 times/);
    });

    it(`runs a document with ${MAX_FRAGMENTS} fragments and refuses ${MAX_FRAGMENTS + 1}`, async () => {
      const chain = (n: number) =>
        `{ tenants { results { ...C${n - 1} } } } fragment C0 on Tenant { id } ${rep(n - 1, (i) => `fragment C${i + 1} on Tenant { ...C${i} }`)}`;
      const at = await tq(t, token, chain(MAX_FRAGMENTS));
      assert.equal(at.body.errors, undefined, at.text);
      assertRefused(await tq(t, token, chain(MAX_FRAGMENTS + 1)), new RegExp(`more than ${MAX_FRAGMENTS} fragments`));
    });

    it(`refuses a document of more than ${MAX_TOKENS} tokens`, async () => {
      assertRefused(await tq(t, token, `{ ${rep(MAX_TOKENS, () => '__typename')} }`), /more that 10000 tokens/);
    });

    it('stays safe on fragment cycles and unknown fragments: graphql-js names them, nothing hangs', async () => {
      assertRefused(
        await tq(t, token, '{ tenants { results { ...A } } } fragment A on Tenant { id ...B } fragment B on Tenant { ...A }'),
        /Cannot spread fragment "A" within itself/,
      );
      assertRefused(await tq(t, token, '{ tenants { results { ...Missing ...Missing } } }'), /Unknown fragment "Missing"/);
    });

    it('refuses a fragment defined twice before measuring either (a small first one must not hide a large second one)', async () => {
      const big = Array.from({ length: 600 }, (_, i) => `f${i}: id`).join(' ');
      assertRefused(
        await tq(t, token, `{ tenants { results { ...A } } } fragment A on Tenant { id } fragment A on Tenant { ${big} }`),
        /defines fragment "A" more than once/,
      );
    });
  });

  describe(`GraphQL documents built to be expensive (${engine})`, () => {
    let t: TestApp;
    let base: string;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine });
      base = await listen(t);
      token = await t.rootToken();
    });
    after(() => t.close());

    // Each attack made unique per request: the prepared-document cache must not do the work.
    let seq = 0;
    const post = (query: string, signal?: AbortSignal) =>
      fetch(`${base}${TENANT_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `${query}\n# ${++seq}` }),
        // before the fix one of these took seconds: fail within seconds rather than hang the suite
        signal: signal ?? AbortSignal.timeout(5000),
      });

    const ATTACKS: [string, string, RegExp][] = [
      ["the issue's fan-out (22 fragments, each spreading the previous twice)", fanOut(22), /more than 500 fields/],
      ['a longer fan-out (200 fragments)', fanOut(200), /more than 50 fragments/],
      ['a fan-out within the fragment limit (49 fragments)', fanOut(48), /more than 500 fields/],
      ['wide aliases (3000)', `{ tenants { results { ${rep(3000, (i) => `a${i}: id`)} } } }`, /aliases/],
      ['conflicting aliases (3000)', `{ tenants { results { ${rep(3000, (i) => `a: ${i % 2 ? 'id' : 'name'}`)} } } }`, /aliases/],
      ['one field 4900 times', `{ tenants { results { ${rep(4900, () => 'id')} } } }`, /fields/],
      [
        'one field with arguments 250 times',
        `{ ${rep(250, () => 'tenants(tenantsQuery: {name: "x", ids: ["1", "2"]}) { count }')} }`,
        /more than 25 times/,
      ],
      ['deep nesting (301 levels)', nested(301), /nested deeper than 12 levels/],
      ['very deep nesting (3001 levels)', nested(3001), /nested/],
      [
        'deeply nested lists in an argument',
        `{ tenants(tenantsQuery: {ids: ${'['.repeat(3000)}${']'.repeat(3000)}}) { count } }`,
        /nested too deeply|ID cannot represent/,
      ],
      ['many operations in one document (1900)', rep(1900, (i) => `query Q${i} { __typename }`), /more than 500 fields/],
      [
        'many fragments spread side by side (1200)',
        `{ tenants { results { ${rep(1200, (i) => `...A${i}`)} } } } ${rep(1200, (i) => `fragment A${i} on Tenant { id }`)}`,
        /tokens|fragments/,
      ],
      [
        'many fragments, each spreading all before it (40)',
        `{ tenants { results { ...D39 } } } fragment D0 on Tenant { id } ${rep(39, (i) => `fragment D${i + 1} on Tenant { ${rep(i + 1, (j) => `...D${j}`)} }`)}`,
        /more than 500 fields/,
      ],
      ['the same subtree 300 times', `{ ${rep(300, () => 'tenants { results { partnership { child_tenants { id } } } }')} }`, /fields/],
    ];

    it("refuses each one with BAD_USER_INPUT in under 50 ms of the server's work", async () => {
      // What a document costs the server is what parsing and validating it costs (refused
      // documents run nothing): measured as CPU time of the executor's prepare step, which the
      // other test files sharing the two cores cannot inflate the way they inflate a round trip.
      // The fastest of three fresh copies (the prepared-document cache must not do the work).
      // Before the fix the issue's fan-out took seconds of CPU.
      const executor = new GraphQLExecutor(tenantSchema(), { introspection: true });
      const cpuMs = (fn: () => void) => {
        const before = process.cpuUsage();
        fn();
        const used = process.cpuUsage(before);
        return (used.user + used.system) / 1000;
      };
      // Warm up first: the first large documents of a process pay once for compiling the parser
      // (tens of ms), which is not what a document costs.
      for (let i = 0; i < 5; i++) executor.prepare(`{ tenants { results { ${rep(3000, (j) => `w${j}: id`)} } } }\n# warm ${i}`);
      for (const [what, query, message] of ATTACKS) {
        const times: number[] = [];
        for (let i = 0; i < 3; i++) {
          let errors: readonly { message: string }[] | undefined;
          times.push(cpuMs(() => (errors = executor.prepare(`${query}\n# ${++seq}`).errors)));
          assert.ok(
            errors?.some((e) => message.test(e.message)),
            `${what}: ${JSON.stringify(errors?.map((e) => e.message)).slice(0, 300)}`,
          );
        }
        assert.ok(Math.min(...times) < 50, `${what}: prepared in ${times.map((ms) => ms.toFixed(1)).join(', ')} ms of CPU`);
        // and over HTTP, with authentication, the answer is BAD_USER_INPUT within a second (before
        // the fix: seconds, while the event loop served no one else)
        const started = performance.now();
        const res = await post(query);
        const body = (await res.json()) as Response['body'];
        assertRefused({ status: res.status, headers: {}, body, text: JSON.stringify(body).slice(0, 500) }, message);
        assert.ok(performance.now() - started < 1000, `${what}: answered in ${(performance.now() - started).toFixed(0)} ms`);
      }
    });

    it('keeps /healthz answering during a burst of them', async () => {
      const health: number[] = [];
      const attacks: Promise<globalThis.Response>[] = [];
      const probes: Promise<void>[] = [];
      for (let wave = 0; wave < 8; wave++) {
        for (let i = 0; i < 4; i++) attacks.push(post(fanOut(22)));
        const sent = performance.now();
        probes.push(
          fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) }).then(async (res) => {
            assert.equal(res.status, 200);
            await res.text();
            health.push(performance.now() - sent);
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const answers = await Promise.all(attacks);
      await Promise.all(probes);
      for (const res of answers) assertRefused({ status: res.status, headers: {}, body: await res.json(), text: '' }, /more than 500 fields/);
      assert.equal(health.length, 8);
      // a liveness probe gives up after one second by default (Kubernetes timeoutSeconds)
      assert.ok(Math.max(...health) < 1000, `/healthz took up to ${Math.max(...health).toFixed(0)} ms during the burst`);
    });
  });
}
