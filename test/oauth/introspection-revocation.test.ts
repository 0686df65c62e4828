// Token introspection (RFC 7662) and revocation (RFC 7009), driven by a real OAuth client library
// (openid-client, panva) over HTTP, on both engines: what discovery advertises, which tokens are
// active (and which fields an active answer carries), who may ask about which tenant's tokens,
// and that a revoked token is refused by the service's own bearer authentication until the purge
// forgets it after its expiry.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import { ROLE_IDS } from '../../src/access/roles.js';
import { purgeExpired } from '../../src/maintenance/purge.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET as ROOT_SECRET, startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, createClient } from '../helpers/seed.js';
import { settleChanges } from '../helpers/statements.js';
import { createTenant, tq } from '../helpers/tenants.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      server.close(() => resolve(address.port));
    });
  });
}

for (const engine of engines()) {
  describe(`introspection and revocation through openid-client (${engine})`, () => {
    let t: TestApp;
    let issuer: string;
    let root: string;
    before(async () => {
      const port = await freePort();
      issuer = `http://127.0.0.1:${port}`;
      t = await startTestApp({ engine, env: { GATEHOUSE_BASE_URL: issuer } });
      await t.service.app.listen({ port, host: '127.0.0.1' });
      root = await t.token(ROOT_CLIENT_ID, ROOT_SECRET);
    });
    after(() => t.close());

    const discover = (clientId: string, secret?: string, auth?: client.ClientAuth) =>
      client.discovery(new URL(issuer), clientId, secret, auth, { algorithm: 'oauth2', execute: [client.allowInsecureRequests] });
    const introspect = async (clientId: string, secret: string, token: string) => client.tokenIntrospection(await discover(clientId, secret), token);
    const asRoot = (token: string) => introspect(ROOT_CLIENT_ID, ROOT_SECRET, token);
    const version = (token: string) => fetch(`${issuer}/assets/version`, { headers: { authorization: `Bearer ${token}` } });
    const basicAuth = (clientId: string, secret: string) =>
      `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    /** POST to an OAuth endpoint as it arrives: status, body text, and the headers but those of the moment (date, request id) */
    const raw = async (path: 'introspect' | 'revoke', form: Record<string, string>, authorization?: string) => {
      const res = await fetch(`${issuer}/auth/api/v2/auth/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
        body: new URLSearchParams(form),
      });
      const headers = Object.fromEntries([...res.headers].filter(([name]) => !['date', 'x-request-id', 'keep-alive', 'connection'].includes(name)));
      return { status: res.status, headers, body: await res.text() };
    };
    const rawRevoke = (clientId: string, secret: string, token: string) => raw('revoke', { token }, basicAuth(clientId, secret));

    it('discovery advertises both endpoints and how to authenticate at each', async () => {
      const metadata = (await discover(ROOT_CLIENT_ID, ROOT_SECRET)).serverMetadata();
      assert.equal(metadata.introspection_endpoint, `${issuer}/auth/api/v2/auth/introspect`);
      assert.equal(metadata.revocation_endpoint, `${issuer}/auth/api/v2/auth/revoke`);
      assert.deepEqual(metadata.introspection_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post']);
      assert.deepEqual(metadata.revocation_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
    });

    it('an active token: the RFC 7662 fields, and nothing secret', async () => {
      const c = await createClient(t, root, 'rs-active', { roles: [ROLE_IDS.Administrator, ROLE_IDS.Auditor] });
      const config = await discover(c.clientId, c.secret);
      const issued = await client.clientCredentialsGrant(config, { scope: 'Auditor' });
      for (const auth of [client.ClientSecretBasic(ROOT_SECRET), client.ClientSecretPost(ROOT_SECRET)]) {
        const answer = await client.tokenIntrospection(await discover(ROOT_CLIENT_ID, ROOT_SECRET, auth), issued.access_token);
        const now = Math.floor(t.clock.now().getTime() / 1000);
        assert.equal(answer.active, true);
        assert.equal(answer.client_id, c.clientId);
        assert.equal(answer.sub, c.id);
        assert.equal(answer.scope, 'Auditor');
        assert.equal(answer.token_type, 'Bearer');
        assert.equal(answer.iss, issuer);
        assert.equal(answer.aud, issuer);
        assert.equal(answer.iat, now);
        assert.equal(answer.exp, now + t.config.tokenTtlSeconds);
        assert.equal(answer.tid, '1');
        assert.equal(answer.region, t.config.region);
        assert.ok(!JSON.stringify(answer).includes(c.secret));
        assert.equal((answer as Record<string, unknown>).secret_id, undefined, 'which secret issued it stays inside');
      }
    });

    it('inactive: not a token, a token of another deployment, a deleted client, a replaced secret, a disabled user, a disabled tenant', async () => {
      assert.deepEqual(await asRoot('not-a-token'), { active: false });
      // another deployment (its own database, so its own signing key) in the same region
      const other = await startTestApp({ engine, env: { GATEHOUSE_BASE_URL: issuer } });
      try {
        assert.deepEqual(await asRoot(await other.rootToken()), { active: false });
      } finally {
        await other.close();
      }

      const deleted = await clientWithRoles(t, '1', [ROLE_IDS.Auditor]);
      assert.equal((await asRoot(deleted.token)).active, true);
      const del = await t.gql(root, 'mutation($id: ID!) { deleteClient(id: $id) { id } }', { id: deleted.id });
      assert.equal(del.body.errors, undefined, del.text);
      assert.deepEqual(await asRoot(deleted.token), { active: false });

      const rotated = await clientWithRoles(t, '1', [ROLE_IDS.Auditor]);
      const rot = await t.gql(root, 'mutation($id: ID!) { forceRotateClientSecret(id: $id) { client_secret } }', { id: rotated.id });
      assert.equal(rot.body.errors, undefined, rot.text);
      assert.deepEqual(await asRoot(rotated.token), { active: false });

      const made = await t.gql(root, 'mutation($e: String!) { createUser(email: $e) { user { id } } }', { e: 'introspected@example.com' });
      assert.equal(made.body.errors, undefined, made.text);
      const userId = made.body.data.createUser.user.id as string;
      const userToken = (await t.service.services.tokens.issue({ kind: 'user', id: userId, tenantId: '1' })).token;
      const live = await asRoot(userToken);
      assert.equal(live.active, true);
      assert.equal(live.sub, userId);
      assert.equal(live.principal_type, 'user');
      t.clock.advance(1000);
      assert.equal((await t.gql(root, 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: userId })).body.errors, undefined);
      assert.deepEqual(await asRoot(userToken), { active: false });

      const tenant = await createTenant(t, '1');
      const inTenant = await clientWithRoles(t, tenant, [ROLE_IDS.Responder]);
      assert.equal((await asRoot(inTenant.token)).active, true);
      t.clock.advance(1000);
      const off = await tq(t, root, 'mutation($id: ID!) { updateTenant(tenantID: $id, tenantUpdate: {disable: true}) { id } }', { id: tenant });
      assert.equal(off.body.errors, undefined, off.text);
      assert.deepEqual(await asRoot(inTenant.token), { active: false });
    });

    it("answers only about tenants the caller's roles reach; a client without the permission is refused in words", async () => {
      const partner = await createTenant(t, '1', { isPartner: true });
      const child = await createTenant(t, partner);
      const sibling = await createTenant(t, '1');
      const partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
      const childToken = (await clientWithRoles(t, child, [ROLE_IDS.Auditor])).token;
      const siblingToken = (await clientWithRoles(t, sibling, [ROLE_IDS.Auditor])).token;
      assert.equal((await introspect(partnerAdmin.clientId, partnerAdmin.secret, childToken)).active, true, 'a tenant below its partner');
      assert.deepEqual(await introspect(partnerAdmin.clientId, partnerAdmin.secret, siblingToken), { active: false }, 'never another branch');
      assert.deepEqual(await introspect(partnerAdmin.clientId, partnerAdmin.secret, root), { active: false }, 'never upwards');

      const operations = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
      assert.equal((await introspect(operations.clientId, operations.secret, siblingToken)).active, true, 'vendor Operations reach every tenant');

      const auditor = await clientWithRoles(t, partner, [ROLE_IDS.Auditor]);
      await assert.rejects(introspect(auditor.clientId, auditor.secret, childToken), (err: any) => {
        assert.equal(err.status, 403);
        assert.equal(err.error, 'unauthorized_client');
        assert.match(err.error_description, /may not introspect tokens: it needs the Administrator role/);
        return true;
      });
      // a wrong secret is invalid_client, counted by the token endpoint's guessing throttle
      const res = await fetch(`${issuer}/auth/api/v2/auth/introspect`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${ROOT_CLIENT_ID}:wrong`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token: childToken }),
      });
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as any).error, 'invalid_client');
      // no token parameter: a clear invalid_request
      const none = await fetch(`${issuer}/auth/api/v2/auth/introspect`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(ROOT_CLIENT_ID)}:${encodeURIComponent(ROOT_SECRET)}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: '',
      });
      assert.equal(none.status, 400);
    });

    it('a client revokes its own token: refused everywhere at once, inactive, kept until its expiry and then purged', async () => {
      const c = await clientWithRoles(t, '1', [ROLE_IDS.Administrator]);
      const other = await clientWithRoles(t, '1', [ROLE_IDS.Auditor]);
      const config = await discover(c.clientId, c.secret);
      // another client's token and garbage: 200 (RFC 7009 section 2.2), nothing revoked
      await client.tokenRevocation(config, other.token);
      await client.tokenRevocation(config, 'not-a-token', { token_type_hint: 'access_token' });
      assert.equal((await version(other.token)).status, 200, "another client's token is left alone");
      assert.equal((await t.gql(other.token, '{ clients { client_id } }')).status, 200);

      assert.equal((await version(c.token)).status, 200);
      await client.tokenRevocation(config, c.token);
      const refused = await version(c.token);
      assert.equal(refused.status, 401);
      assert.match(await refused.text(), /the token has been revoked by its client/);
      const gql = await t.gql(c.token, '{ clients { client_id } }');
      assert.equal(gql.status, 401);
      assert.match(gql.text, /the token has been revoked by its client/);
      assert.deepEqual(await asRoot(c.token), { active: false });
      // a new token of the same client works: only that token ended
      assert.equal((await version(await t.token(c.clientId, c.secret))).status, 200);
      // revoking twice is fine
      await client.tokenRevocation(config, c.token);

      const kept = () => t.db.kysely.selectFrom('revoked_tokens').select('jti').execute();
      assert.equal((await kept()).length, 1);
      t.clock.advance(t.config.tokenTtlSeconds * 1000 + 120_000);
      const purged = await purgeExpired(t.service.store, t.clock, {
        sessionIdleSeconds: t.config.sessionIdleSeconds,
        auditRetentionDays: t.config.auditRetentionDays,
      });
      assert.equal(purged.revokedTokens, 1);
      assert.equal((await kept()).length, 0);
      assert.equal((await version(c.token)).status, 401, 'and expired now');
    });

    it('revoking garbage, a forged signature, another deployment’s token or an expired token with valid client auth: 200 {}, as for a live token of its own', async () => {
      const c = await clientWithRoles(t, '1', [ROLE_IDS.Administrator]);
      const expiring = await t.token(c.clientId, c.secret);
      const other = await startTestApp({ engine, env: { GATEHOUSE_BASE_URL: issuer } });
      let foreign: string;
      try {
        foreign = await other.rootToken();
      } finally {
        await other.close();
      }
      const [h, p, sig] = c.token.split('.');
      const forged = `${h}.${p}.${sig!.startsWith('A') ? 'B' : 'A'}${sig!.slice(1)}`;
      const own = await rawRevoke(c.clientId, c.secret, c.token);
      assert.equal(own.status, 200, own.body);
      assert.equal(own.body, '{}', 'RFC 7009 section 2.2 asks for 200; the body is an empty object (docs/tokens.md)');
      assert.match(own.headers['content-type'] ?? '', /^application\/json/);
      assert.equal(own.headers['cache-control'], 'no-store');
      assert.equal((await version(c.token)).status, 401, 'the control: its own token was revoked');

      t.clock.advance((t.config.tokenTtlSeconds + 600) * 1000);
      assert.equal((await version(expiring)).status, 401, 'expired');
      for (const [what, token] of [
        ['garbage', 'not-a-token'],
        ['three dots of garbage', 'a.b.c'],
        ['its own token with a forged signature', forged],
        ['a token of another deployment', foreign],
        ['its own expired token', expiring],
      ] as const) {
        assert.deepEqual(await rawRevoke(c.clientId, c.secret, token), own, what);
      }
      // an expired token is inactive, and the answer says nothing more
      assert.deepEqual(await asRoot(expiring), { active: false });
      const introspected = await raw('introspect', { token: expiring }, basicAuth(ROOT_CLIENT_ID, ROOT_SECRET));
      assert.equal(introspected.status, 200);
      assert.equal(introspected.body, '{"active":false}');
    });

    it('a client of another tenant revokes a token: 200 and the very answer garbage gets; the token still works', async () => {
      const a = await clientWithRoles(t, await createTenant(t, '1'), [ROLE_IDS.Administrator]);
      const b = await clientWithRoles(t, await createTenant(t, '1'), [ROLE_IDS.Auditor]);
      const garbage = await rawRevoke(a.clientId, a.secret, 'not-a-token');
      assert.equal(garbage.status, 200, garbage.body);
      assert.deepEqual(await rawRevoke(a.clientId, a.secret, b.token), garbage);
      // nor may a client above it: revocation is of one's own tokens only
      assert.deepEqual(await rawRevoke(ROOT_CLIENT_ID, ROOT_SECRET, b.token), garbage);
      assert.equal((await version(b.token)).status, 200, "B's token is left alone");
      assert.equal((await t.gql(b.token, '{ clients { client_id } }')).status, 200);
      assert.equal((await asRoot(b.token)).active, true);
      // the control: B itself can revoke it, with the same answer
      assert.deepEqual(await rawRevoke(b.clientId, b.secret, b.token), garbage);
      assert.equal((await version(b.token)).status, 401);
    });

    it('introspection without any client authentication is 401 invalid_client, and says nothing of the token', async () => {
      const c = await clientWithRoles(t, '1', [ROLE_IDS.Auditor]);
      const wrong = await raw('introspect', { token: c.token }, basicAuth(ROOT_CLIENT_ID, 'wrong'));
      assert.equal(wrong.status, 401);
      const forms: Record<string, string>[] = [{ token: c.token }, { token: c.token, client_id: ROOT_CLIENT_ID }, { token: 'not-a-token' }];
      for (const form of forms) {
        const res = await raw('introspect', form);
        assert.equal(res.status, 401, res.body);
        assert.equal(JSON.parse(res.body).error, 'invalid_client');
        assert.equal(res.body, wrong.body, 'the same words as for a wrong secret');
        assert.equal(res.headers['www-authenticate'], wrong.headers['www-authenticate']);
        assert.doesNotMatch(res.body, /active/);
      }
    });

    it('the device flow public client (gatehouse-cli) revokes a user token with its client_id alone', async () => {
      const made = await t.gql(await t.token(ROOT_CLIENT_ID, ROOT_SECRET), 'mutation($e: String!) { createUser(email: $e) { user { id } } }', {
        e: 'cli-user@example.com',
      });
      assert.equal(made.body.errors, undefined, made.text);
      const userToken = (await t.service.services.tokens.issue({ kind: 'user', id: made.body.data.createUser.user.id, tenantId: '1' })).token;
      assert.equal((await version(userToken)).status, 200);
      const cli = await discover('gatehouse-cli', undefined, client.None());
      await client.tokenRevocation(cli, userToken);
      assert.equal((await version(userToken)).status, 401);

      // a public client that is not this service's: invalid_client, in words
      const res = await fetch(`${issuer}/auth/api/v2/auth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'someone-else', token: userToken }),
      });
      assert.equal(res.status, 401);
      assert.match(((await res.json()) as any).error_description, /public client of this service/);
    });

    it('a token revoked again writes nothing: every write makes each process drop its caches', async () => {
      const c = await clientWithRoles(t, '1', [ROLE_IDS.Auditor]);
      const config = await discover(c.clientId, c.secret);
      await client.tokenRevocation(config, c.token);
      // on PostgreSQL the first revocation's notification arrives a few milliseconds later
      await settleChanges(t.db);
      const once = t.db.changes.generation;
      for (let i = 0; i < 3; i++) await client.tokenRevocation(config, c.token);
      await settleChanges(t.db);
      assert.equal(t.db.changes.generation, once + (t.db.listenForChanges ? 1 : 0), 'only the settling notification moved it');
      assert.equal((await version(c.token)).status, 401);
    });

    // last in this describe: every token signed so far is refused after it
    it('inactive once the key that signed it is retired (an emergency); the next token is signed by another key and active', async () => {
      const c = await clientWithRoles(t, '1', [ROLE_IDS.Auditor]);
      assert.equal((await asRoot(c.token)).active, true);
      const kid = decodeProtectedHeader(c.token).kid!;
      await t.service.services.signingKeys.retire({ kind: 'operator', id: 'test' }, kid);
      assert.deepEqual(await asRoot(c.token), { active: false });
      assert.equal((await version(c.token)).status, 401, 'and refused by the server itself');
      const next = await t.token(c.clientId, c.secret);
      assert.notEqual(decodeProtectedHeader(next).kid, kid);
      const answer = await asRoot(next);
      assert.equal(answer.active, true);
      assert.equal(answer.client_id, c.clientId);
    });
  });
}
