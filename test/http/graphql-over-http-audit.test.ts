// The GraphQL-over-HTTP specification's own audit (graphql-http's auditServer) against the real
// server on loopback, for every path of both interfaces. Every audit passes: the MUSTs and SHOULDs
// the issue demands, and the MAYs we chose (GET for queries, 400 for malformed parameters; see
// docs/graphql.md). The failure message names each failing audit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditServer, type AuditResult } from 'graphql-http';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';

const INTERFACES = [
  { path: '/graphql', headers: { 'x-tenant-context': '1' } },
  { path: '/public/query', headers: {} },
  { path: '/query', headers: {} },
  { path: '/public-test/query', headers: {} },
];

function describeFailure(result: AuditResult): string {
  if (result.status === 'ok') return `${result.id} ${result.name}`;
  return `${result.id} ${result.name}: ${result.reason} (HTTP ${result.response.status})`;
}

for (const engine of transportEngines()) {
  describe(`GraphQL over HTTP audit (${engine})`, () => {
    let t: TestApp;
    let base: string;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine });
      base = await listen(t);
      token = await t.rootToken();
    });
    after(() => t.close());

    for (const { path, headers } of INTERFACES) {
      it(`${path}: every audit passes (MUST, SHOULD and MAY)`, async () => {
        // the audit's requests carry no credentials: add a valid token (and the tenant header)
        const fetchFn: typeof fetch = (input, init = {}) => {
          const h = new Headers(init.headers);
          h.set('authorization', `Bearer ${token}`);
          for (const [name, value] of Object.entries(headers)) h.set(name, value);
          return fetch(input, { ...init, headers: h });
        };
        const results = await auditServer({ url: `${base}${path}`, fetchFn });
        assert.ok(results.some((r) => r.name.startsWith('MUST')) && results.some((r) => r.name.startsWith('SHOULD')), 'the audit ran');
        const failed = results.filter((r) => r.status !== 'ok');
        const order = ['MUST', 'SHOULD', 'MAY'];
        failed.sort((a, b) => order.indexOf(a.name.split(' ')[0]!) - order.indexOf(b.name.split(' ')[0]!));
        assert.deepEqual(failed.map(describeFailure), [], `failing GraphQL-over-HTTP audits on ${path}`);
      });
    }
  });
}
