// Text the database cannot store (NUL) and text that only differs in spacing get clear answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { CREATE_CLIENT, rowCounts } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

for (const engine of transportEngines()) {
  describe(`input hygiene (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    it('a NUL in GraphQL variables or in the document is BAD_USER_INPUT, not INTERNAL', async () => {
      const before = await rowCounts(t);
      // refused before running, like a variable of the wrong type: 200 as application/json, 400 as
      // application/graphql-response+json, never data
      for (const [accept, status] of [
        ['application/json', 200],
        ['application/graphql-response+json', 400],
      ] as const) {
        const headers = { accept };
        const inVariable = await t.gql(await t.rootToken(), CREATE_CLIENT, { name: 'nul\u0000name' }, { headers });
        assert.equal(inVariable.status, status, accept);
        assert.equal(inVariable.body.data, undefined);
        assert.equal(inVariable.body.errors[0].extensions.code, 'BAD_USER_INPUT');
        assert.match(inVariable.body.errors[0].message, /NUL/);
        const inDocument = await t.gql(await t.rootToken(), '{ tenants(tenantsQuery: {name: "a\\u0000b"}) { count } }', undefined, {
          path: '/public/query',
          headers,
        });
        assert.equal(inDocument.status, status, accept);
        assert.equal(inDocument.body.data, undefined);
        assert.equal(inDocument.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('variables nested thousands deep are BAD_USER_INPUT, never a 500 (POST and GET)', async () => {
      const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
      for (const n of [33, 5_000, 200_000]) {
        const body = `{"query":"query($a: [String]) { clients(clientIDs: $a) { id } }","variables":{"a":${deep(n)}}}`;
        const post = await t.request({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${await t.rootToken()}`, 'content-type': 'application/json' },
          payload: body,
        });
        assert.equal(post.status, 400, post.text.slice(0, 300));
        assert.equal(post.body.errors[0].extensions.code, 'BAD_USER_INPUT');
        assert.match(post.body.errors[0].message, /nested deeper than 32/);
      }
      const get = await t.request({
        method: 'GET',
        url: `/graphql?query=${encodeURIComponent('{ __typename }')}&variables=${encodeURIComponent(`{"x":${deep(5_000)}}`)}`,
        headers: { authorization: `Bearer ${await t.rootToken()}` },
      });
      assert.equal(get.status, 400, get.text.slice(0, 300));
      assert.equal(get.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      // the nesting the schema needs passes
      const ok = await t.gql(await t.rootToken(), 'query($a: [String]) { clients(clientIDs: $a) { id } }', { a: ['x'] });
      assert.equal(ok.body.errors, undefined, ok.text);
    });

    it('a NUL written as a variable-width escape in the document is BAD_USER_INPUT too', async () => {
      const res = await t.gql(await t.rootToken(), '{ clients(name: "a\\u{0}b") { id } }');
      assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      assert.match(res.body.errors[0].message, /NUL/);
    });

    it('the characters \\u0000 that do not decode to a NUL are ordinary text (a comment, an escaped backslash)', async () => {
      const id = await createTenant(t, '1', { name: 'back\\u0000slash' });
      const res = await tq(
        t,
        await t.rootToken(),
        `# a comment may mention \\u0000
        { tenants(tenantsQuery: {name: "back\\\\u0000slash"}) { results { id name } } }`,
      );
      assert.equal(res.body.errors, undefined, res.text);
      assert.deepEqual(res.body.data.tenants.results, [{ id, name: 'back\\u0000slash' }]);
    });

    it('a NUL in token-request credentials is invalid_request or invalid_client, never a 500', async () => {
      const body = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/token',
        headers: { 'content-type': 'application/json' },
        payload: { grant_type: 'client_credentials', client_id: 'root\u0000admin', client_secret: ROOT_CLIENT_SECRET },
      });
      assert.equal(body.status, 400);
      assert.equal(body.body.error, 'invalid_request');
      const basic = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/token',
        headers: {
          'content-type': 'application/json',
          authorization: 'Basic ' + Buffer.from(`root\u0000admin:${ROOT_CLIENT_SECRET}`).toString('base64'),
        },
        payload: { grant_type: 'client_credentials' },
      });
      assert.equal(basic.status, 401);
      assert.equal(basic.body.error, 'invalid_client');
      assert.ok(await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET));
    });

    it('name search collapses whitespace like stored names', async () => {
      const id = await createTenant(t, '1', { name: 'Spaced   Out  Tenant' });
      const res = await tq(t, await t.rootToken(), `{ tenants(tenantsQuery: {name: "  spaced out\\ttenant "}) { results { id name } } }`);
      assert.deepEqual(res.body.data.tenants.results, [{ id, name: 'Spaced Out Tenant' }]);
    });

    it('restricted cannot be switched on by updateTenantLabel', async () => {
      const tenant = await createTenant(t, '1');
      const created = await tq(
        t,
        await t.rootToken(),
        `mutation($t: ID!) { createTenantLabel(tenant_id: $t, label_input: {name: "plain"}) { id } }`,
        { t: tenant },
      );
      const id = created.body.data.createTenantLabel.id;
      const res = await tq(
        t,
        await t.rootToken(),
        `mutation($id: ID!) { updateTenantLabel(label_id: $id, label_input: {name: "plain", restricted: true}) { restricted } }`,
        { id },
      );
      assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      const after = await tq(
        t,
        await t.rootToken(),
        `mutation($id: ID!) { updateTenantLabel(label_id: $id, label_input: {name: "still-plain"}) { name restricted } }`,
        { id },
      );
      assert.deepEqual(after.body.data.updateTenantLabel, { name: 'still-plain', restricted: false });
    });

    it('id lists longer than 1000 are BAD_USER_INPUT, not a database error', async () => {
      const ids = Array.from({ length: 1001 }, (_, i) => String(i + 1));
      const tenants = await tq(t, await t.rootToken(), `query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids}) { count } }`, { ids });
      assert.equal(tenants.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      const clients = await t.gql(await t.rootToken(), `query($ids: [ID]) { clients(tenantIDs: $ids) { id } }`, { ids });
      assert.equal(clients.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      const ok = await tq(t, await t.rootToken(), `query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids}) { count } }`, { ids: ids.slice(0, 1000) });
      assert.equal(ok.body.errors, undefined);
    });

    it('enabling support that is already on in the same way changes nothing', async () => {
      const tenant = await createTenant(t, '1');
      const enable = `mutation($id: ID!) { enableTenantSupport(tenantID: $id, reason: "ticket 42") { updated_at support_enabled } }`;
      const first = await tq(t, await t.rootToken(), enable, { id: tenant });
      const audits = await rowCounts(t);
      t.clock.advance(60_000);
      const again = await tq(t, await t.rootToken(), enable, { id: tenant });
      assert.deepEqual(again.body.data.enableTenantSupport, first.body.data.enableTenantSupport);
      assert.deepEqual(await rowCounts(t), audits);
    });
  });
}
