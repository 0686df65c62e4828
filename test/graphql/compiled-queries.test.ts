// A query document that comes back runs compiled by graphql-jit (src/graphql/executor.ts). What
// a caller gets must not change with it: each document below is sent three times (the first run
// on graphql-js, the second compiles, the third runs compiled), and the three answers must be the
// same, status and body, for results, resolver errors (FORBIDDEN, BAD_USER_INPUT), bad variables
// (the very words of graphql-js, hints as configured), null arguments, fragments, aliases,
// directives and operation names. The app's debug log shows which documents were compiled.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, seedTenant } from '../helpers/seed.js';

const CLIENT_FIELDS = `id name client_id roles role_assignments { id tenant_id role_id expires_at } tenant_id created_at updated_at
  created_by updated_by environment last_used_at secrets { id hint created_at expires_at }`;

interface Case {
  name: string;
  path?: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** the token to send: the root Administrator's, or an Auditor's of a child tenant */
  as?: 'root' | 'auditor';
  tenant?: string;
  /** whether the answer carries errors */
  errors: boolean;
}

const CASES: Case[] = [
  { name: 'every field of the clients', query: `{ clients { ${CLIENT_FIELDS} } }`, errors: false },
  {
    name: 'variables, a fragment, aliases, __typename and directives',
    query: `query List($page: Int, $per: Int, $withRoles: Boolean!, $noIds: Boolean!) {
      first: clients(page: $page, perPage: $per) { ...C __typename id @skip(if: $noIds) }
      again: clients(perPage: 1) { cid: client_id roles @include(if: $withRoles) }
    }
    fragment C on Client { name tenant_id created_at }`,
    variables: { page: 1, per: 2, withRoles: true, noIds: false },
    errors: false,
  },
  {
    name: 'a chosen operation among several',
    query: 'query A { me { kind tenant_id roles } } query B { clients { client_id } }',
    operationName: 'A',
    errors: false,
  },
  { name: 'a resolver refusing input', query: '{ clients(perPage: 0) { id } }', errors: true },
  { name: 'a resolver refusing input given by a variable', query: 'query($p: Int) { clients(page: $p) { id } }', variables: { p: -1 }, errors: true },
  { name: 'a variable of the wrong type', query: 'query($p: Int) { clients(page: $p) { id name } }', variables: { p: 'two' }, errors: true },
  { name: 'a missing required variable', query: 'query($id: ID!) { user(id: $id) { id } }', errors: true },
  { name: 'a null argument', query: '{ clients(clientIDs: null) { client_id } }', errors: false },
  { name: 'a role that may not', path: '/public/query', query: '{ ssoConnections { id } }', as: 'auditor', errors: true },
  {
    name: 'tenants search with filters and page mode',
    path: '/public/query',
    query: `query($q: TenantsQuery!) { tenants(tenantsQuery: $q) {
      results { id name name_normalized enabled created_at support_enabled labels { name } environments { name } partnership { is_partner } }
      count hasMore totalCount } }`,
    variables: { q: { maxResults: 5, pageNum: 1, orderBy: 'Name', orderDir: 'desc' } },
    errors: false,
  },
  {
    name: 'a Time variable that is no time, in words of the Time scalar',
    path: '/public/query',
    query: 'query($q: TenantsQuery!) { tenants(tenantsQuery: $q) { count } }',
    variables: { q: { createdTimeFilter: { startTime: 'yesterday' } } },
    errors: true,
  },
  {
    name: 'an enum value misspelt, with its hint',
    path: '/public/query',
    query: 'query($d: OrderDir) { tenants(tenantsQuery: { orderDir: $d }) { count } }',
    variables: { d: 'ascc' },
    errors: true,
  },
];

for (const engine of engines()) {
  describe(`compiled queries answer as graphql-js does (${engine})`, () => {
    let t: TestApp;
    let auditor: string;
    let child: string;
    before(async () => {
      t = await startTestApp({ engine });
      child = await seedTenant(t, '1', { name: 'compiled-child' });
      await clientWithRoles(t, '1', [ROLE_IDS.Analyst], 'compiled-analyst');
      auditor = (await clientWithRoles(t, child, [ROLE_IDS.Auditor], 'compiled-auditor')).token;
    });
    after(() => t.close());

    for (const c of CASES) {
      it(c.name, async () => {
        const token = c.as === 'auditor' ? auditor : await t.rootToken();
        const send = () =>
          t.request({
            method: 'POST',
            url: c.path ?? '/graphql',
            headers: {
              authorization: `Bearer ${token}`,
              'content-type': 'application/json',
              ...(c.as === 'auditor' ? { 'x-tenant-context': child } : {}),
            },
            payload: { query: c.query, variables: c.variables ?? {}, ...(c.operationName ? { operationName: c.operationName } : {}) },
          });
        const compiledBefore = t.logs.filter((l) => l.includes('query document compiled with graphql-jit')).length;
        const [first, second, third] = [await send(), await send(), await send()];
        assert.equal(first.status, 200, first.text);
        assert.equal(first.body.errors !== undefined, c.errors, first.text);
        assert.deepEqual([second.status, second.body], [first.status, first.body], 'the run that compiled');
        assert.deepEqual([third.status, third.body], [first.status, first.body], 'the compiled run');
        const compiled = t.logs.filter((l) => l.includes('query document compiled with graphql-jit')).length - compiledBefore;
        assert.equal(compiled, 1, 'compiled once, on its second run');
      });
    }

    it('a document sent once is not compiled, nor is a mutation however often it comes', async () => {
      const root = await t.rootToken();
      const before = t.logs.filter((l) => l.includes('query document compiled with graphql-jit')).length;
      assert.equal((await t.gql(root, '{ clients { id name } }')).body.errors, undefined);
      for (let i = 0; i < 3; i++) {
        const res = await t.gql(root, 'mutation($n: String!) { createClient(name: $n) { client { id } } }', { n: `compiled-m-${i}` });
        assert.equal(res.body.errors, undefined, res.text);
      }
      assert.equal(t.logs.filter((l) => l.includes('query document compiled with graphql-jit')).length, before);
    });
  });
}
