// A document's string values are data, never code. graphql-jit 0.8.9 (tried for speed, see
// docs/benchmarks.md) writes string literals into the JavaScript it generates and turns any
// "__MAGIC_DATE__<uuid>…" string into `new Date(…)` unescaped, so a caller could run code in the
// server by sending such a document twice. Gatehouse executes with graphql-js; this test sends
// that document, by literal and by variable, on both interfaces, as often as a compiler would
// need to see it, and requires a plain answer and no effect.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';

const PAYLOAD = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d(globalThis.gatehouseInjected = 1, 0)';
const injected = () => (globalThis as { gatehouseInjected?: unknown }).gatehouseInjected;

describe('documents cannot carry code', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ engine: 'pglite' });
  });
  after(() => t.close());

  const cases = [
    { name: 'a credential query with the string as a literal', path: '/graphql', query: `{ clients(name: ${JSON.stringify(PAYLOAD)}) { id } }` },
    {
      name: 'a credential query with the string as a variable',
      path: '/graphql',
      query: 'query($n: String) { clients(name: $n) { id } }',
      variables: { n: PAYLOAD },
    },
    {
      name: 'a tenants search with the string as a literal',
      path: '/public/query',
      query: `{ tenants(tenantsQuery: { name: ${JSON.stringify(PAYLOAD)} }) { results { id } } }`,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: answered as data, ten times, and nothing ran`, async () => {
      const token = await t.rootToken();
      for (let i = 0; i < 10; i++) {
        const res = await t.gql(token, c.query, c.variables ?? {}, { path: c.path });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.errors, undefined, res.text);
      }
      assert.equal(injected(), undefined);
    });
  }
});
