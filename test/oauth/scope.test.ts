// `scope` at the token endpoint (CONTRACT.md): role names the client holds, narrowing the token to
// them on every request; the response's scope names what was granted.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { CREATE_CLIENT, createClient, rowCounts, seedTenant, type SeededClient } from '../helpers/seed.js';

const TOKEN_PATH = '/auth/api/v2/auth/token';
const LIST_CLIENTS = '{ clients { id } }';
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
const basic = (c: SeededClient) => 'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64');

let addressSeq = 0;

/** a token request with scope (omitted when undefined), as JSON or as a form */
function requestToken(t: TestApp, c: SeededClient, scope: string | undefined, format: 'json' | 'form' = 'json'): Promise<Response> {
  const params = { grant_type: 'client_credentials', ...(scope !== undefined ? { scope } : {}) };
  return t.request({
    method: 'POST',
    url: TOKEN_PATH,
    headers: { authorization: basic(c), 'content-type': format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded' },
    payload: format === 'json' ? JSON.stringify(params) : new URLSearchParams(params).toString(),
    // the invalid_scope cases are successful authentications, but keep each request apart anyway
    remoteAddress: `10.30.0.${(++addressSeq % 250) + 1}`,
  });
}

async function tokenWith(t: TestApp, c: SeededClient, scope?: string): Promise<string> {
  const res = await requestToken(t, c, scope);
  assert.equal(res.status, 200, res.text);
  return res.body.access_token;
}

for (const engine of transportEngines()) {
  describe(`token scope (${engine})`, () => {
    let t: TestApp;
    let tenant: string;
    /** an Administrator that also holds Auditor */
    let adminAuditor: SeededClient;

    before(async () => {
      t = await startTestApp({ engine });
      tenant = await seedTenant(t, '1');
      adminAuditor = await createClient(t, await t.rootToken(), 'admin-auditor', { roles: [ROLE_IDS.Administrator, ROLE_IDS.Auditor], tenant });
    });
    after(() => t.close());

    const create = (token: string) => t.gql(token, CREATE_CLIENT, { name: `c-${randomUUID().slice(0, 8)}` }, { tenant });

    /** FORBIDDEN, and nothing answered (a refused query is HTTP 403; a refused mutation field is null) */
    function assertForbidden(res: Response) {
      assert.equal(res.body.errors?.[0]?.extensions?.code, 'FORBIDDEN', res.text);
      // RFC 6750 section 3.1, readable without parsing GraphQL
      assert.match(String(res.headers['www-authenticate']), /^Bearer realm="gatehouse", error="insufficient_scope", error_description="[^"]+"$/);
      assert.ok(
        Object.values(res.body.data ?? {}).every((v) => v === null),
        res.text,
      );
    }

    it('narrows the token: an Administrator client that asks for Auditor cannot create clients, but may read them', async () => {
      // the control: the same client unscoped, and scoped to Administrator, creates clients
      assert.equal((await create(await tokenWith(t, adminAuditor))).body.errors, undefined);
      assert.equal((await create(await tokenWith(t, adminAuditor, 'Administrator'))).body.errors, undefined);

      const auditor = await tokenWith(t, adminAuditor, 'Auditor');
      const victim = await createClient(t, await t.rootToken(), 'scope-victim', { tenant });
      const before = await rowCounts(t);
      assertForbidden(await create(auditor));
      assertForbidden(await t.gql(auditor, 'mutation($id: ID!) { deleteClient(id: $id) { id } }', { id: victim.id }, { tenant }));
      assertForbidden(
        await t.gql(auditor, 'mutation($id: ID!) { forceRotateClientSecret(id: $id) { client_secret } }', { id: victim.id }, { tenant }),
      );
      assert.deepEqual(await rowCounts(t), before, 'the refused mutations wrote nothing');
      // what Auditor may do, it still does
      const list = await t.gql(auditor, LIST_CLIENTS, undefined, { tenant });
      assert.equal(list.status, 200, list.text);
      assert.equal(list.headers['www-authenticate'], undefined, 'no challenge when nothing was refused');
      assert.ok(list.body.data.clients.some((c: { id: string }) => c.id === victim.id));
      assert.equal((await t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${auditor}` } })).status, 200);
    });

    it('names what was granted in the response and in the token', async () => {
      const cases: [string | undefined, string, string | undefined][] = [
        // [requested, response scope, token claim]
        [undefined, 'Administrator Auditor', undefined],
        ['', 'Administrator Auditor', undefined],
        ['   ', 'Administrator Auditor', undefined],
        ['Auditor', 'Auditor', 'Auditor'],
        ['Auditor Auditor', 'Auditor', 'Auditor'],
        ['  Auditor   Administrator ', 'Administrator Auditor', 'Administrator Auditor'],
        ['Administrator', 'Administrator', 'Administrator'],
      ];
      for (const format of ['json', 'form'] as const) {
        for (const [requested, scope, claim] of cases) {
          const res = await requestToken(t, adminAuditor, requested, format);
          assert.equal(res.status, 200, `${format} ${JSON.stringify(requested)}: ${res.text}`);
          assert.equal(res.body.scope, scope, `${format} ${JSON.stringify(requested)}`);
          assert.equal(claimsOf(res.body.access_token).scope, claim, `${format} ${JSON.stringify(requested)}`);
        }
      }
      // a client created with the default role holds Analyst only
      const analyst = await createClient(t, await t.rootToken(), 'default-analyst', { tenant });
      assert.equal((await requestToken(t, analyst, undefined)).body.scope, 'Analyst');
      // one that holds no role (its assignments removed) gets no scope at all: RFC 6749 has no empty scope
      const bare = await createClient(t, await t.rootToken(), 'no-roles', { tenant });
      await t.db.kysely.deleteFrom('role_assignments').where('principal_id', '=', bare.id).execute();
      const none = await requestToken(t, bare, undefined);
      assert.equal(none.status, 200, none.text);
      assert.equal('scope' in none.body, false, none.text);
    });

    it('answers invalid_scope, and mints no token, for unknown names, other spellings and roles not held', async () => {
      const refused = [
        'admin',
        'auditor',
        'ADMINISTRATOR',
        'Administrator,Auditor',
        'Administrator\tAuditor',
        'Administrator+Auditor',
        'Responder',
        'Auditor Responder',
        'Operations',
        'Support',
        'Administrator Analyst',
        ROLE_IDS.Auditor,
        'x'.repeat(10_000),
      ];
      for (const format of ['json', 'form'] as const) {
        for (const scope of refused) {
          const res = await requestToken(t, adminAuditor, scope, format);
          assert.equal(res.status, 400, `${format} ${JSON.stringify(scope.slice(0, 40))}: ${res.text}`);
          assert.equal(res.body.error, 'invalid_scope', scope.slice(0, 40));
          assert.equal(res.body.access_token, undefined);
          assert.equal(res.headers['cache-control'], 'no-store');
          assert.ok(res.text.length < 1000, 'the description does not echo a long scope');
        }
      }
    });

    it('lets role changes made later only reduce a scoped token, never widen it', async () => {
      const auditorOnly = await createClient(t, await t.rootToken(), 'auditor-only', { roles: [ROLE_IDS.Auditor], tenant });
      const scoped = await tokenWith(t, auditorOnly, 'Auditor');
      const unscoped = await tokenWith(t, auditorOnly);
      assertForbidden(await create(scoped));

      // Administrator is assigned later (no interface assigns roles yet: written directly)
      const now = t.clock.now();
      await t.db.kysely
        .insertInto('role_assignments')
        .values({
          id: randomUUID(),
          tenant_id: tenant,
          principal_kind: 'client',
          principal_id: auditorOnly.id,
          role_id: ROLE_IDS.Administrator,
          expires_at: null,
          created_at: now,
        })
        .execute();
      assertForbidden(await create(scoped));
      // an unscoped token acts with the roles held at each request, as before
      assert.equal((await create(unscoped)).body.errors, undefined);

      // Auditor is taken away: the scoped token keeps nothing
      await t.db.kysely.deleteFrom('role_assignments').where('principal_id', '=', auditorOnly.id).where('role_id', '=', ROLE_IDS.Auditor).execute();
      assertForbidden(await t.gql(scoped, LIST_CLIENTS, undefined, { tenant }));
      assertForbidden(await create(scoped));
    });

    it('publishes the role names as scopes_supported', async () => {
      const res = await t.request({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
      assert.deepEqual(res.body.scopes_supported, ['Administrator', 'Analyst', 'Responder', 'Auditor', 'Operations', 'Support']);
    });
  });
}
