// The text rules (src/text.ts) as a caller meets them: every name refuses invisible and control
// characters, is stored in NFC with whitespace runs collapsed, and is unique case-insensitively;
// every text field has a bound, answered with BAD_USER_INPUT and no write.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { CREATE_CLIENT, rowCounts } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const CREATE_TENANT = `mutation($t: TenantCreateInput!) { createTenant(newTenant: $t) { id name name_normalized description domain actions_approver } }`;
const UPDATE_TENANT = `mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { id name description actions_approver } }`;
const CREATE_LABEL = `mutation($tid: ID!, $l: InputTenantLabel!) { createTenantLabel(tenant_id: $tid, label_input: $l) { id name value } }`;
const CREATE_SERVICE = `mutation($s: InputService!) { createService(service_input: $s) { id name description } }`;
const CREATE_SUBSCRIPTION = `mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { id name description } }`;
const ENABLE_SUPPORT = `mutation($id: ID!, $r: String) { enableTenantSupport(tenantID: $id, reason: $r) { id support_reason } }`;
const SEARCH = `query($q: TenantsQuery!) { tenants(tenantsQuery: $q) { results { id name } } }`;

const code = (res: Response): string | undefined => res.body?.errors?.[0]?.extensions?.code;
const x = (n: number, c = 'a') => c.repeat(n);

const INVISIBLE = {
  'zero-width space': '\u200b',
  'zero-width joiner': '\u200d',
  'word joiner': '\u2060',
  'soft hyphen': '\u00ad',
  'right-to-left override': '\u202e',
  'left-to-right isolate': '\u2066',
  'Arabic letter mark': '\u061c',
  'C1 control': '\u0085',
  bell: '\u0007',
  'byte-order mark': '\ufeff',
  'line separator': '\u2028',
  'combining grapheme joiner': '\u034f',
  'Hangul filler': '\u3164',
  'half-width Hangul filler': '\uffa0',
  'Mongolian variation selector': '\u180b',
  'variation selector 16': '\ufe0f',
  'variation selector 17': '\u{e0100}',
  'Khmer inherent vowel': '\u17b4',
  'braille blank': '\u2800',
};

for (const engine of transportEngines()) {
  describe(`text rules (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let tenant: string;
    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_CLIENT_CREATE_LIMIT: '100000' } });
      root = await t.rootToken();
      tenant = await createTenant(t, '1');
    });
    after(() => t.close());

    /** The request is BAD_USER_INPUT naming the field, and writes nothing. */
    async function refused(send: () => Promise<Response>, field: string | RegExp) {
      const before = await rowCounts(t);
      const res = await send();
      assert.equal(code(res), 'BAD_USER_INPUT', res.text);
      assert.match(res.body.errors[0].message, typeof field === 'string' ? new RegExp(field.replace(/[.]/g, '\\.')) : field);
      assert.deepEqual(await rowCounts(t), before, 'a refused request writes nothing');
    }

    it('names with invisible or control characters are refused, in every kind of name', async () => {
      for (const [what, ch] of Object.entries(INVISIBLE)) {
        const name = `pay${ch}roll`;
        await refused(() => t.gql(root, CREATE_CLIENT, { name }), 'name');
        await refused(() => tq(t, root, CREATE_TENANT, { t: { name, partnerTenantID: '1' } }), 'name');
        await refused(() => tq(t, root, CREATE_LABEL, { tid: tenant, l: { name } }), 'name');
        await refused(() => tq(t, root, CREATE_SERVICE, { s: { name } }), 'name');
        await refused(() => tq(t, root, UPDATE_TENANT, { id: tenant, u: { name } }), 'name');
        // the same in a search: a name that cannot exist is an input error, not an empty page
        await refused(() => tq(t, root, SEARCH, { q: { name } }), 'name');
        assert.ok(what);
      }
    });

    it('a lone surrogate (not storable as UTF-8) is BAD_USER_INPUT, never INTERNAL', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${root}`, 'content-type': 'application/json' },
        payload: `{"query":${JSON.stringify('mutation($name: String!) { createClient(name: $name) { client_secret } }')},"variables":{"name":"bad\\ud800name"}}`,
      });
      assert.equal(code(res), 'BAD_USER_INPUT', res.text);
      assert.match(res.body.errors[0].message, /Unicode/);
    });

    it('names are stored in NFC with whitespace collapsed, and unique whatever their case or width', async () => {
      const created = await t.gql(root, CREATE_CLIENT, { name: '  Caf\u0065\u0301   Pipeline ' });
      assert.equal(created.body.errors, undefined, created.text);
      const stored = await t.db.kysely
        .selectFrom('clients')
        .select(['name'])
        .where('id', '=', created.body.data.createClient.client.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.name, 'Caf\u00e9 Pipeline');
      for (const twin of ['café pipeline', 'CAFÉ PIPELINE', 'Café\tPipeline', 'Café\u3000Pipeline', 'ｃａｆé ｐｉｐｅｌｉｎｅ']) {
        const dup = await t.gql(root, CREATE_CLIENT, { name: twin });
        assert.equal(code(dup), 'CONFLICT', `${twin}: ${dup.text}`);
        assert.deepEqual(dup.body.error, ['Existing client in tenant']);
      }
      // the clients filter compares the same way
      const found = await t.gql(root, `query($n: String) { clients(name: $n) { name } }`, { n: 'CAFÉ   pipeline' });
      assert.deepEqual(found.body.data.clients, [{ name: 'Café Pipeline' }]);

      // case is folded, not only lowered: ß and SS are one name
      const street = await t.gql(root, CREATE_CLIENT, { name: 'Hauptstraße Sync' });
      assert.equal(street.body.errors, undefined, street.text);
      assert.equal(code(await t.gql(root, CREATE_CLIENT, { name: 'HAUPTSTRASSE SYNC' })), 'CONFLICT');

      const service = await tq(t, root, CREATE_SERVICE, { s: { name: 'Managed  Detection' } });
      assert.equal(service.body.data.createService.name, 'Managed Detection');
      assert.equal(code(await tq(t, root, CREATE_SERVICE, { s: { name: 'managed detection' } })), 'CONFLICT');
      const sub = await tq(t, root, CREATE_SUBSCRIPTION, { s: { service_id: service.body.data.createService.id, name: 'Gold  Plan' } });
      assert.equal(sub.body.data.createPartnerSubscription.name, 'Gold Plan');
      assert.equal(
        code(await tq(t, root, CREATE_SUBSCRIPTION, { s: { service_id: service.body.data.createService.id, name: 'GOLD plan' } })),
        'CONFLICT',
      );
    });

    it('a label with whitespace runs is found by either spelling, and its case-twin conflicts', async () => {
      const on = await createTenant(t, '1');
      const label = await tq(t, root, CREATE_LABEL, { tid: on, l: { name: 'team   blue', value: '  gold ' } });
      assert.deepEqual(
        { name: label.body.data.createTenantLabel.name, value: label.body.data.createTenantLabel.value },
        { name: 'team blue', value: 'gold' },
      );
      for (const spelling of ['team   blue', 'team blue', 'TEAM BLUE', 'team%blue']) {
        const res = await tq(t, root, SEARCH, { q: { labelFilter: { label_name: spelling }, ids: [on] } });
        assert.deepEqual(
          res.body.data.tenants.results.map((r: { id: string }) => r.id),
          [on],
          spelling,
        );
      }
      assert.equal(code(await tq(t, root, CREATE_LABEL, { tid: on, l: { name: 'Team Blue' } })), 'CONFLICT');
    });

    it('a search text of only spaces is refused like an empty one', async () => {
      for (const name of ['', '   ', '\t \n']) await refused(() => tq(t, root, SEARCH, { q: { name } }), 'name');
      await refused(() => tq(t, root, SEARCH, { q: { labelFilter: { label_name: '  ' } } }), 'label_name');
      await refused(() => tq(t, root, SEARCH, { q: { withPartnerSubscription: ' ' } }), 'withPartnerSubscription');
      await refused(() => t.gql(root, `query($n: String) { clients(name: $n) { id } }`, { n: ' ' }), 'name');
    });

    it('every text field has a bound: the bound is accepted, one more character is refused', async () => {
      // tenant name, description, actions_approver at creation
      const atBound = await tq(t, root, CREATE_TENANT, {
        t: { name: x(200), partnerTenantID: '1', description: x(2000), actions_approver: x(254), domain: `${x(63)}.${x(63)}.${x(63)}.${x(57)}.io` },
      });
      assert.equal(atBound.body.errors, undefined, atBound.text);
      await refused(() => tq(t, root, CREATE_TENANT, { t: { name: x(201), partnerTenantID: '1' } }), /name must be 1 to 200 characters/);
      await refused(
        () => tq(t, root, CREATE_TENANT, { t: { name: 'ok', partnerTenantID: '1', description: x(2001) } }),
        /description must be at most 2000/,
      );
      await refused(() => tq(t, root, CREATE_TENANT, { t: { name: 'ok', partnerTenantID: '1', description: x(100_000) } }), /description/);
      await refused(() => tq(t, root, CREATE_TENANT, { t: { name: 'ok', partnerTenantID: '1', actions_approver: x(255) } }), /actions_approver/);
      await refused(() => tq(t, root, CREATE_TENANT, { t: { name: 'ok', partnerTenantID: '1', domain: `${x(250)}.io` } }), /domain/);
      // and on update
      await refused(() => tq(t, root, UPDATE_TENANT, { id: tenant, u: { description: x(2001) } }), /description/);
      await refused(() => tq(t, root, UPDATE_TENANT, { id: tenant, u: { actions_approver: x(255) } }), /actions_approver/);
      // labels
      const label = await tq(t, root, CREATE_LABEL, { tid: tenant, l: { name: x(100, 'l'), value: x(1000) } });
      assert.equal(label.body.errors, undefined, label.text);
      await refused(() => tq(t, root, CREATE_LABEL, { tid: tenant, l: { name: x(101, 'm') } }), /name must be 1 to 100/);
      await refused(() => tq(t, root, CREATE_LABEL, { tid: tenant, l: { name: 'v', value: x(1001) } }), /value must be at most 1000/);
      // services and subscriptions
      const service = await tq(t, root, CREATE_SERVICE, { s: { name: x(200, 's'), description: x(2000) } });
      assert.equal(service.body.errors, undefined, service.text);
      await refused(() => tq(t, root, CREATE_SERVICE, { s: { name: x(201, 't') } }), /name/);
      await refused(() => tq(t, root, CREATE_SERVICE, { s: { name: 'svc', description: x(2001) } }), /description/);
      await refused(
        () => tq(t, root, CREATE_SUBSCRIPTION, { s: { service_id: service.body.data.createService.id, name: 'sub', description: x(2001) } }),
        /description/,
      );
      // support reason
      await refused(() => tq(t, root, ENABLE_SUPPORT, { id: tenant, r: x(501) }), /reason must be at most 500/);
      const reason = await tq(t, root, ENABLE_SUPPORT, { id: tenant, r: x(500) });
      assert.equal(reason.body.errors, undefined, reason.text);
      // client names
      const client = await t.gql(root, CREATE_CLIENT, { name: x(200, 'c') });
      assert.equal(client.body.errors, undefined, client.text);
      await refused(() => t.gql(root, CREATE_CLIENT, { name: x(201, 'd') }), /name must be 1 to 200/);
      // search texts and cursors
      await refused(() => tq(t, root, SEARCH, { q: { name: x(201) } }), /name must be 1 to 200/);
      await refused(() => tq(t, root, SEARCH, { q: { cursorPos: x(2049) } }), /cursorPos/);
    });

    it('lengths count characters, not UTF-16 units: 200 emoji make a valid name', async () => {
      const name = '🛡'.repeat(200);
      const res = await tq(t, root, CREATE_TENANT, { t: { name, partnerTenantID: '1' } });
      assert.equal(res.body.errors, undefined, res.text);
      assert.equal(res.body.data.createTenant.name, name);
      await refused(() => tq(t, root, CREATE_TENANT, { t: { name: name + '🛡', partnerTenantID: '1' } }), /name/);
    });

    it('descriptions keep line breaks and script joiners but refuse bidi controls', async () => {
      const text = 'line one\nline two\twith a tab, Persian می\u200cخواهم, and an emoji ❤\ufe0f';
      const res = await tq(t, root, UPDATE_TENANT, { id: tenant, u: { description: text } });
      assert.equal(res.body.data.updateTenant.description, text);
      await refused(() => tq(t, root, UPDATE_TENANT, { id: tenant, u: { description: 'safe \u202eexe.txt' } }), /description/);
      await refused(() => tq(t, root, UPDATE_TENANT, { id: tenant, u: { description: 'bell \u0007' } }), /description/);
    });

    it('an unknown value is echoed shortened in the error, not in full', async () => {
      const res = await tq(t, root, CREATE_TENANT, { t: { name: 'ok', partnerTenantID: '1', environments: [x(5000)] } });
      assert.equal(code(res), 'BAD_USER_INPUT');
      assert.ok(res.body.errors[0].message.length < 300, res.body.errors[0].message.slice(0, 100));
    });
  });
}
