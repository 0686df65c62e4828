import { generateSecret } from '../../src/credentials/secret.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { sql } from 'kysely';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, TEST_BASE_URL, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { createClient, rowCounts } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const TOKEN_PATH = '/auth/api/v2/auth/token';
const TTL = 36000;

/** application/x-www-form-urlencoded encoding of one value (RFC 6749 appendix B) */
const formEncode = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);
/** client_secret_basic as RFC 6749 section 2.3.1 defines it: each part form-encoded, then base64 */
const basic = (clientId: string, secret: string) => 'Basic ' + Buffer.from(`${formEncode(clientId)}:${formEncode(secret)}`).toString('base64');
const rawBasic = (userPass: string) => 'Basic ' + Buffer.from(userPass).toString('base64');
const decodePart = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

// Each test sends from its own address, so failed attempts in one test never reach the
// guessing throttle of another.
let addressSeq = 0;
const freshAddress = () => `10.20.${Math.floor(++addressSeq / 250)}.${(addressSeq % 250) + 1}`;

function tokenRequest(
  t: TestApp,
  opts: { headers?: Record<string, string>; payload?: string | object | Buffer; remoteAddress?: string; method?: string },
): Promise<Response> {
  return t.request({
    method: opts.method ?? 'POST',
    url: TOKEN_PATH,
    headers: opts.headers ?? {},
    ...(opts.payload !== undefined ? { payload: opts.payload } : {}),
    remoteAddress: opts.remoteAddress ?? freshAddress(),
  });
}

const json = (authorization: string | undefined, body: object, remoteAddress?: string) => ({
  headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
  payload: JSON.stringify(body),
  ...(remoteAddress ? { remoteAddress } : {}),
});
const form = (authorization: string | undefined, body: string, remoteAddress?: string) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
  payload: body,
  ...(remoteAddress ? { remoteAddress } : {}),
});

function assertNoStore(res: Response) {
  assert.equal(res.headers['cache-control'], 'no-store', res.text);
  assert.equal(res.headers.pragma, 'no-cache', res.text);
}

function assertOAuthError(res: Response, status: number, error: string) {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.body?.error, error, res.text);
  assert.equal(res.body.access_token, undefined);
  assertNoStore(res);
}

/** RFC 6749 section 5.2: 401 invalid_client with a Basic challenge, and a body that says nothing more */
function assertInvalidClient(res: Response, reference?: Response) {
  assertOAuthError(res, 401, 'invalid_client');
  assert.match(String(res.headers['www-authenticate']), /^Basic realm="[^"]+"$/);
  if (reference) {
    assert.deepEqual(res.body, reference.body);
    assert.equal(res.headers['www-authenticate'], reference.headers['www-authenticate']);
  }
}

/** a successful token response; `scope` is what the client holds (the bootstrap client: Administrator) */
function assertTokenResponse(t: TestApp, res: Response, scope = 'Administrator') {
  assert.equal(res.status, 200, res.text);
  assertNoStore(res);
  assert.deepEqual(Object.keys(res.body).sort(), ['access_token', 'expires_in', 'expiry', 'scope', 'token_type']);
  assert.equal(res.body.scope, scope);
  assert.equal(res.body.token_type, 'Bearer');
  assert.equal(res.body.expires_in, TTL);
  assert.equal(res.body.expiry, new Date(t.clock.now().getTime() + TTL * 1000).toISOString());
  assert.equal(res.body.refresh_token, undefined);
  assert.match(res.body.access_token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
}

async function versionWith(t: TestApp, token: string) {
  return t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${token}` } });
}

for (const engine of transportEngines()) {
  describe(`token endpoint (${engine})`, () => {
    let t: TestApp;
    let wrongSecret: Response;
    before(async () => {
      t = await startTestApp({ engine });
      wrongSecret = await tokenRequest(t, json(basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET + 'x'), { grant_type: 'client_credentials' }));
    });
    after(() => t.close());

    describe('success', () => {
      it('issues a token for HTTP Basic and a JSON body', async () => {
        const res = await tokenRequest(t, json(basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), { grant_type: 'client_credentials' }));
        assertTokenResponse(t, res);
        assert.equal((await versionWith(t, res.body.access_token)).status, 200);
      });

      it('issues a token for HTTP Basic and a form body', async () => {
        const res = await tokenRequest(t, form(basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), 'grant_type=client_credentials'));
        assertTokenResponse(t, res);
        assert.equal((await versionWith(t, res.body.access_token)).status, 200);
      });

      it('accepts a form body with a charset parameter in the content type', async () => {
        const res = await tokenRequest(t, {
          headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8', authorization: basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET) },
          payload: 'grant_type=client_credentials',
        });
        assertTokenResponse(t, res);
      });

      it('issues a token for client_secret_post in a JSON body', async () => {
        const res = await tokenRequest(
          t,
          json(undefined, { grant_type: 'client_credentials', client_id: ROOT_CLIENT_ID, client_secret: ROOT_CLIENT_SECRET }),
        );
        assertTokenResponse(t, res);
        assert.equal((await versionWith(t, res.body.access_token)).status, 200);
      });

      it('issues a token for client_secret_post in a form body', async () => {
        const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: ROOT_CLIENT_ID, client_secret: ROOT_CLIENT_SECRET });
        const res = await tokenRequest(t, form(undefined, body.toString()));
        assertTokenResponse(t, res);
        assert.equal((await versionWith(t, res.body.access_token)).status, 200);
      });

      it('issues an ES256 at+jwt whose claims name the client, its tenant and region, verifiable with the published JWKS', async () => {
        const list = await t.gql(await t.rootToken(), `{ clients(clientIDs: ["${ROOT_CLIENT_ID}"]) { id } }`);
        const rootUuid = list.body.data.clients[0].id;
        const now = t.clock.now();
        const res = await tokenRequest(t, json(basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), { grant_type: 'client_credentials' }));
        assertTokenResponse(t, res);
        const token: string = res.body.access_token;
        const [h, p] = token.split('.');
        const header = decodePart(h!);
        const claims = decodePart(p!);

        assert.equal(header.alg, 'ES256');
        assert.equal(header.typ, 'at+jwt');
        assert.equal(typeof header.kid, 'string');
        // exactly these header fields and claims: no jku, jwk or x5u, nothing left out or added
        assert.deepEqual(Object.keys(header).sort(), ['alg', 'kid', 'typ']);
        assert.deepEqual(Object.keys(claims).sort(), ['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'pty', 'region', 'secret_id', 'sub', 'tid']);

        const iat = Math.floor(now.getTime() / 1000);
        assert.equal(claims.iss, TEST_BASE_URL);
        assert.equal(claims.sub, rootUuid);
        assert.equal(claims.aud, TEST_BASE_URL);
        assert.equal(claims.tid, '1');
        assert.equal(claims.region, 'us1');
        assert.equal(claims.iat, iat);
        assert.equal(claims.exp, iat + TTL);
        assert.equal(new Date(claims.exp * 1000).toISOString(), res.body.expiry);
        assert.match(claims.jti, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        assert.equal(claims.pty, 'client');
        assert.equal(claims.client_id, ROOT_CLIENT_ID);
        // nothing secret travels in the token
        assert.ok(!Buffer.from(p!, 'base64url').toString().includes(ROOT_CLIENT_SECRET));

        const jwksRes = await t.request({ method: 'GET', url: '/.well-known/jwks.json' });
        assert.equal(jwksRes.status, 200);
        const published = jwksRes.body.keys.find((k: { kid: string }) => k.kid === header.kid);
        assert.ok(published, 'the signing key is published in the JWKS');
        assert.equal(published.d, undefined, 'the JWKS carries no private key material');
        const { payload } = await jwtVerify(token, createLocalJWKSet(jwksRes.body), {
          issuer: TEST_BASE_URL,
          audience: TEST_BASE_URL,
          typ: 'at+jwt',
          algorithms: ['ES256'],
          currentDate: t.clock.now(),
        });
        assert.equal(payload.sub, rootUuid);
      });

      it('gives every token its own jti', async () => {
        const a = await t.tokenResponse(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const b = await t.tokenResponse(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        assert.notEqual(decodePart(a.body.access_token.split('.')[1]).jti, decodePart(b.body.access_token.split('.')[1]).jti);
      });
    });

    describe('client authentication failures', () => {
      it('answers a wrong secret with 401 invalid_client and a Basic challenge', () => {
        assertInvalidClient(wrongSecret);
        assert.ok(!wrongSecret.text.includes(ROOT_CLIENT_ID));
      });

      it('answers an unknown client_id exactly like a wrong secret', async () => {
        const res = await tokenRequest(t, json(basic('no-such-client', ROOT_CLIENT_SECRET), { grant_type: 'client_credentials' }));
        assertInvalidClient(res, wrongSecret);
        const post = await tokenRequest(
          t,
          json(undefined, { grant_type: 'client_credentials', client_id: 'no-such-client', client_secret: ROOT_CLIENT_SECRET }),
        );
        assertInvalidClient(post, wrongSecret);
      });

      it('answers a malformed Basic header like a wrong secret', async () => {
        const headers = [
          rawBasic('root-admin'), // no colon
          rawBasic(''),
          'Basic !!!not-base64!!!',
          'Basic',
          'Basic ',
          'Basic ' + Buffer.from(`${ROOT_CLIENT_ID}:${ROOT_CLIENT_SECRET}`).toString('base64') + '=====',
          rawBasic('root-admin:%zz'), // a broken percent-escape
          'Bearer abc', // another scheme
        ];
        for (const authorization of headers) {
          const res = await tokenRequest(t, json(authorization, { grant_type: 'client_credentials' }));
          assertInvalidClient(res, wrongSecret);
        }
      });

      it('answers no client authentication at all with 401 invalid_client', async () => {
        const res = await tokenRequest(t, json(undefined, { grant_type: 'client_credentials' }));
        assertInvalidClient(res, wrongSecret);
        const idOnly = await tokenRequest(t, json(undefined, { grant_type: 'client_credentials', client_id: ROOT_CLIENT_ID }));
        assertInvalidClient(idOnly, wrongSecret);
      });

      it('rejects a secret with our prefix and a broken checksum', async () => {
        const c = await createClient(t, await t.rootToken(), 'checksum-target');
        assert.equal((await t.tokenResponse(c.clientId, c.secret)).status, 200);
        const last = c.secret.at(-1)!;
        const brokenChecksum = c.secret.slice(0, -1) + (last === 'A' ? 'B' : 'A');
        const middle = 20;
        const brokenBody = c.secret.slice(0, middle) + (c.secret[middle] === 'A' ? 'B' : 'A') + c.secret.slice(middle + 1);
        for (const secret of [brokenChecksum, brokenBody, c.secret + 'A', c.secret.slice(0, -1)]) {
          assertInvalidClient(await tokenRequest(t, json(basic(c.clientId, secret), { grant_type: 'client_credentials' })), wrongSecret);
        }
      });

      it('answers an empty or an oversized secret with 401 (a 100 KB body with 413), not 500', async () => {
        const huge = 'x'.repeat(100 * 1024);
        // in the header: 100 KB; in the body: as much as the 16 KiB body limit lets through
        for (const [header, body] of [
          ['', ''],
          [huge, 'x'.repeat(15 * 1024)],
        ] as const) {
          assertInvalidClient(await tokenRequest(t, json(basic(ROOT_CLIENT_ID, header), { grant_type: 'client_credentials' })), wrongSecret);
          assertInvalidClient(
            await tokenRequest(t, json(undefined, { grant_type: 'client_credentials', client_id: ROOT_CLIENT_ID, client_secret: body })),
            wrongSecret,
          );
        }
        const hugeBody = await tokenRequest(t, json(undefined, { grant_type: 'client_credentials', client_id: ROOT_CLIENT_ID, client_secret: huge }));
        assertOAuthError(hugeBody, 413, 'invalid_request');
        const hugeId = await tokenRequest(t, json(basic(huge, ROOT_CLIENT_SECRET), { grant_type: 'client_credentials' }));
        assertInvalidClient(hugeId, wrongSecret);
      });

      it('answers a deleted client with 401 invalid_client', async () => {
        const token = await t.rootToken();
        const c = await createClient(t, token, 'to-be-deleted');
        assert.equal((await t.tokenResponse(c.clientId, c.secret)).status, 200);
        const del = await t.gql(token, `mutation($id: ID!) { deleteClient(id: $id) { id revoked_at } }`, { id: c.clientId });
        assert.equal(del.status, 200, del.text);
        assert.equal(del.body.data.deleteClient.id, c.id);
        assert.ok(del.body.data.deleteClient.revoked_at);
        assertInvalidClient(await tokenRequest(t, json(basic(c.clientId, c.secret), { grant_type: 'client_credentials' })), wrongSecret);
        assertInvalidClient(
          await tokenRequest(t, json(undefined, { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.secret })),
          wrongSecret,
        );
      });
    });

    describe('malformed requests', () => {
      it('rejects credentials sent both in the Basic header and in the body with 400 invalid_request', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const both = await tokenRequest(
          t,
          json(auth, { grant_type: 'client_credentials', client_id: ROOT_CLIENT_ID, client_secret: ROOT_CLIENT_SECRET }),
        );
        assertOAuthError(both, 400, 'invalid_request');
        const bothForm = await tokenRequest(
          t,
          form(auth, new URLSearchParams({ grant_type: 'client_credentials', client_secret: ROOT_CLIENT_SECRET }).toString()),
        );
        assertOAuthError(bothForm, 400, 'invalid_request');
        // a body client_id that contradicts the Basic header is not silently ignored
        const otherId = await tokenRequest(t, json(auth, { grant_type: 'client_credentials', client_id: 'someone-else' }));
        assertOAuthError(otherId, 400, 'invalid_request');
      });

      it('rejects a repeated parameter with 400 invalid_request', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        assertOAuthError(await tokenRequest(t, form(auth, 'grant_type=client_credentials&grant_type=client_credentials')), 400, 'invalid_request');
        assertOAuthError(await tokenRequest(t, form(auth, 'grant_type=client_credentials&scope=&scope=')), 400, 'invalid_request');
        const post = `grant_type=client_credentials&client_id=${ROOT_CLIENT_ID}&client_id=${ROOT_CLIENT_ID}&client_secret=${ROOT_CLIENT_SECRET}`;
        assertOAuthError(await tokenRequest(t, form(undefined, post)), 400, 'invalid_request');
        // the JSON form of a repeat: a list where one value belongs
        assertOAuthError(await tokenRequest(t, json(auth, { grant_type: ['client_credentials', 'client_credentials'] })), 400, 'invalid_request');
        // a key repeated in the JSON text (JSON.parse would keep the last one)
        const repeatedJson = {
          headers: { 'content-type': 'application/json', authorization: auth },
          payload: '{"grant_type":"password", "grant_type" : "client_credentials"}',
        };
        assertOAuthError(await tokenRequest(t, repeatedJson), 400, 'invalid_request');
        // a value that merely contains a key-like text is not a repeat
        const lookalike = { ...repeatedJson, payload: '{"grant_type":"client_credentials","note":"x"}' };
        assert.equal((await tokenRequest(t, lookalike)).status, 200);
        // names that Object.prototype also has are parameters like any other, not repeats
        assert.equal((await tokenRequest(t, form(auth, 'grant_type=client_credentials&toString=1&constructor=2&__proto__=3'))).status, 200);
        const protoJson = { ...repeatedJson, payload: '{"grant_type":"client_credentials","toString":"1","__proto__":"3"}' };
        assert.equal((await tokenRequest(t, protoJson)).status, 200);
      });

      it('rejects a parameter repeated under an escaped spelling of its name with 400 invalid_request', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const raw = (payload: string, authorization?: string) => ({
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          payload,
        });
        const id = JSON.stringify(ROOT_CLIENT_ID);
        const secret = JSON.stringify(ROOT_CLIENT_SECRET);
        const bodies = [
          // client_secret_post: which client_id would win is up to the parser; none may
          `{"grant_type":"client_credentials","client_id":${id},"\\u0063lient_id":"someone-else","client_secret":${secret}}`,
          `{"grant_type":"client_credentials","\\u0063lient_id":"someone-else","client_id":${id},"client_secret":${secret}}`,
          `{"grant_type":"client_credentials","client_id":${id},"client_secret":"wrong","client\\u005fsecret":${secret}}`,
          `{"grant_type":"client_credentials","client_id":${id},"\\u0063\\u006C\\u0069ent_secret":"wrong","client_secret":${secret}}`,
        ];
        for (const payload of bodies) assertOAuthError(await tokenRequest(t, raw(payload)), 400, 'invalid_request');
        for (const payload of [
          '{"grant_type":"password","gr\\u0061nt_type":"client_credentials"}',
          '{"grant_type":"client_credentials","\\u0067rant\\u005Ftype":"client_credentials"}',
          '{"grant_type":"client_credentials","scope":"Auditor","sc\\u006fpe":"Administrator"}',
          '{"grant_type":"client_credentials","resource":"http://gatehouse.test","\\u0072esource":"http://gatehouse.test"}',
          // escapes other than \\u: a solidus may be written \\/
          '{"grant_type":"client_credentials","scope":"Auditor", "scope\\/":"x", "\\u0073cope" : "Auditor"}',
        ]) {
          assertOAuthError(await tokenRequest(t, raw(payload, auth)), 400, 'invalid_request');
        }
      });

      it('accepts escapes inside values and a single escaped spelling of a name', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const escapedSecret = [...ROOT_CLIENT_SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
        const bodies: [string, string | undefined][] = [
          // the secret written entirely in \\u escapes
          [`{"grant_type":"client_credentials","client_id":"${ROOT_CLIENT_ID}","client_secret":"${escapedSecret}"}`, undefined],
          // a value that holds what looks like a repeated key, and other escapes
          ['{"grant_type":"client_credentials","note":"\\"grant_type\\":\\"password\\", \\\\ \\/ \\ud83d\\ude00"}', auth],
          // a name written with an escape, once
          ['{"gr\\u0061nt_type":"client_\\u0063redentials"}', auth],
        ];
        for (const [payload, authorization] of bodies) {
          const res = await tokenRequest(t, {
            headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
            payload,
          });
          assert.equal(res.status, 200, `${payload}: ${res.text}`);
          assert.equal((await versionWith(t, res.body.access_token)).status, 200);
        }
      });

      it('writes nothing for a refused request but the audit event of a wrong secret: no other rows, no last-used time', async () => {
        const before = await rowCounts(t);
        const lastUsed = async () =>
          (await t.db.kysely.selectFrom('client_secrets').select('last_used_at').execute()).map((r) => r.last_used_at?.toISOString() ?? null);
        await t.service.lastUsed.flush();
        const usedBefore = await lastUsed();
        // a secret of the right form that is not the client's (an old one, say), and a mangled one
        assertInvalidClient(await tokenRequest(t, json(basic(ROOT_CLIENT_ID, generateSecret()), { grant_type: 'client_credentials' })));
        assertInvalidClient(
          await tokenRequest(t, json(basic(ROOT_CLIENT_ID, `${generateSecret().slice(0, -2)}zz`), { grant_type: 'client_credentials' })),
        );
        assertInvalidClient(await tokenRequest(t, json(basic('no-such-client', ROOT_CLIENT_SECRET), { grant_type: 'client_credentials' })));
        assertOAuthError(
          await tokenRequest(t, { headers: { 'content-type': 'application/json' }, payload: '{"grant_type":' }),
          400,
          'invalid_request',
        );
        await t.service.lastUsed.flush();
        await t.service.services.credentials.settled();
        assert.deepEqual(await lastUsed(), usedBefore);
        // the wrong secret of an existing client is one event (client.credentials_refused); a
        // mangled secret (its checksum fails), an unknown client and a malformed body write none
        assert.deepEqual(await rowCounts(t), { ...before, audit_events: before.audit_events! + 1 });
        const refused = await t.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', 'client.credentials_refused').execute();
        assert.ok(refused.length > 0);
        assert.ok(refused.every((e) => e.outcome === 'failure'));
        assert.ok(!JSON.stringify(refused).includes(ROOT_CLIENT_SECRET), 'not the secret tried');
      });

      it('rejects a missing grant_type with 400 invalid_request', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        assertOAuthError(await tokenRequest(t, json(auth, {})), 400, 'invalid_request');
        assertOAuthError(await tokenRequest(t, json(auth, { grant_type: '' })), 400, 'invalid_request');
        assertOAuthError(await tokenRequest(t, form(auth, '')), 400, 'invalid_request');
        assertOAuthError(await tokenRequest(t, form(auth, 'scope=')), 400, 'invalid_request');
      });

      it('rejects grant_type=password and other unsupported grants with 400 unsupported_grant_type', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const res = await tokenRequest(t, form(auth, 'grant_type=password&username=admin%40gatehouse.local&password=test-admin-password-1'));
        assertOAuthError(res, 400, 'unsupported_grant_type');
        for (const grant of ['authorization_code', 'refresh_token', 'implicit', 'CLIENT_CREDENTIALS', 'client_credentials ']) {
          assertOAuthError(await tokenRequest(t, json(auth, { grant_type: grant })), 400, 'unsupported_grant_type');
        }
      });

      it('rejects a scope that names no role with 400 invalid_scope and mints no token (more in scope.test.ts)', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        assertOAuthError(await tokenRequest(t, json(auth, { grant_type: 'client_credentials', scope: 'admin' })), 400, 'invalid_scope');
        assertOAuthError(await tokenRequest(t, form(auth, 'grant_type=client_credentials&scope=admin')), 400, 'invalid_scope');
      });

      it('rejects a resource or audience other than this server with 400 invalid_target and mints no token; this server itself is accepted', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const elsewhere = [
          'https://elsewhere.example',
          // a look-alike that begins with this server's address, a path or a query under it, another scheme
          `${TEST_BASE_URL}.evil.example`,
          `${TEST_BASE_URL}/tenants/2`,
          `${TEST_BASE_URL}/?tenant=2`,
          TEST_BASE_URL.replace(/^http:/, 'https:'),
          '',
        ];
        for (const key of ['resource', 'audience']) {
          for (const value of elsewhere) {
            const inJson = await tokenRequest(t, json(auth, { grant_type: 'client_credentials', [key]: value }));
            assertOAuthError(inJson, 400, 'invalid_target');
            assert.match(inJson.body.error_description, new RegExp(`^${key} must be ${TEST_BASE_URL} or omitted$`));
            const inForm = await tokenRequest(t, form(auth, new URLSearchParams({ grant_type: 'client_credentials', [key]: value }).toString()));
            assertOAuthError(inForm, 400, 'invalid_target');
          }
          for (const value of [TEST_BASE_URL, `${TEST_BASE_URL}/`]) {
            const res = await tokenRequest(t, json(auth, { grant_type: 'client_credentials', [key]: value }));
            assertTokenResponse(t, res);
            assert.equal(decodePart(res.body.access_token.split('.')[1]).aud, TEST_BASE_URL);
            assert.equal((await versionWith(t, res.body.access_token)).status, 200);
          }
        }
        // both named, one of them elsewhere: refused
        const mixed = await tokenRequest(
          t,
          json(auth, { grant_type: 'client_credentials', resource: TEST_BASE_URL, audience: 'https://elsewhere.example' }),
        );
        assertOAuthError(mixed, 400, 'invalid_target');
        const both = await tokenRequest(t, json(auth, { grant_type: 'client_credentials', resource: TEST_BASE_URL, audience: TEST_BASE_URL }));
        assertTokenResponse(t, both);
      });

      it('does not move a token to the tenant a tenant or tenant_id parameter names: it is for the client’s own tenant', async () => {
        const own = await createTenant(t, '1');
        const target = await createTenant(t, '1');
        const c = await createClient(t, await t.rootToken(), 'tenant-param', { tenant: own });
        for (const key of ['tenant', 'tenant_id', 'tenantID']) {
          const res = await tokenRequest(t, json(basic(c.clientId, c.secret), { grant_type: 'client_credentials', [key]: target }));
          assert.equal(res.status, 200, res.text);
          assert.equal(decodePart(res.body.access_token.split('.')[1]).tid, own, key);
        }
      });

      it('rejects GET with 405 and Allow: POST', async () => {
        const res = await tokenRequest(t, {
          method: 'GET',
          headers: { authorization: basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET) },
        });
        assert.equal(res.status, 405, res.text);
        assert.equal(res.headers.allow, 'POST');
        assert.equal(res.body.error, 'invalid_request');
        assert.equal(res.body.access_token, undefined);
        assertNoStore(res);
        const withQuery = await t.request({
          method: 'GET',
          url: `${TOKEN_PATH}?grant_type=client_credentials&client_id=${ROOT_CLIENT_ID}&client_secret=${ROOT_CLIENT_SECRET}`,
        });
        assert.equal(withQuery.status, 405);
        assert.equal(withQuery.body.access_token, undefined);
      });

      it('rejects text/plain and other content types with 400 invalid_request', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        for (const [type, payload] of [
          ['text/plain', 'grant_type=client_credentials'],
          ['text/plain', '{"grant_type":"client_credentials"}'],
          ['application/xml', '<grant_type>client_credentials</grant_type>'],
          ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nclient_credentials\r\n--x--\r\n'],
        ] as const) {
          const res = await tokenRequest(t, { headers: { 'content-type': type, authorization: auth }, payload });
          assertOAuthError(res, 400, 'invalid_request');
        }
        const none = await tokenRequest(t, { headers: { authorization: auth }, payload: 'grant_type=client_credentials' });
        assertOAuthError(none, 400, 'invalid_request');
      });

      it('rejects malformed JSON and non-object JSON with 400 invalid_request', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        for (const payload of ['{"grant_type":', '{grant_type: "client_credentials"}', '', '"client_credentials"', '[]', 'null', '42']) {
          const res = await tokenRequest(t, { headers: { 'content-type': 'application/json', authorization: auth }, payload });
          assertOAuthError(res, 400, 'invalid_request');
        }
        const res = await tokenRequest(t, json(auth, { grant_type: 'client_credentials', client_id: 42 }));
        assertOAuthError(res, 400, 'invalid_request');
      });

      it('rejects a body over 16 KiB with 413 and says the limit; 16 KiB itself is read', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const head = 'grant_type=client_credentials&pad=';
        const atLimit = await tokenRequest(t, form(auth, head + 'x'.repeat(16 * 1024 - head.length)));
        assert.equal(atLimit.status, 200, atLimit.text);
        const pad = 'x'.repeat(16 * 1024);
        const big = await tokenRequest(t, json(auth, { grant_type: 'client_credentials', pad }));
        assertOAuthError(big, 413, 'invalid_request');
        assert.equal(big.body.error_description, 'the request body is larger than 16 KiB');
        const bigForm = await tokenRequest(t, form(auth, `grant_type=client_credentials&pad=${pad}`));
        assertOAuthError(bigForm, 413, 'invalid_request');
        const device = await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/device/code',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `client_id=gatehouse-cli&login_hint=a%40example.com&pad=${pad}`,
        });
        assert.equal(device.status, 413, device.text);
        assert.deepEqual(device.body, { error: 'invalid_request', error_description: 'the request body is larger than 16 KiB' });
      });

      it('refuses other media types unread, whatever their size: text/plain of 1 MiB is not a 413', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        for (const [type, size] of [
          ['text/plain', 20 * 1024],
          ['text/plain', 1024 * 1024 + 1],
          ['application/xml', 20 * 1024],
        ] as const) {
          const res = await tokenRequest(t, { headers: { 'content-type': type, authorization: auth }, payload: 'x'.repeat(size) });
          assertOAuthError(res, 400, 'invalid_request');
          assert.equal(res.body.error_description, 'send application/x-www-form-urlencoded or application/json', `${type} ${size}`);
        }
      });

      it('names at most five repeated parameters, and how many more there were', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        const names = Array.from({ length: 8 }, (_, i) => `p${i}`);
        const body = ['grant_type=client_credentials', ...names.flatMap((n) => [`${n}=1`, `${n}=2`])].join('&');
        const res = await tokenRequest(t, form(auth, body));
        assertOAuthError(res, 400, 'invalid_request');
        assert.equal(res.body.error_description, 'parameter sent more than once: "p0", "p1", "p2", "p3", "p4" and 3 more');
      });

      it('refuses a NUL character in a form parameter name or value', async () => {
        const auth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        for (const body of ['grant_type=client_credentials&scope=a%00b', 'grant_type=client_credentials&sc%00ope=a']) {
          const res = await tokenRequest(t, form(auth, body));
          assertOAuthError(res, 400, 'invalid_request');
          assert.equal(res.body.error_description, 'parameters must not contain NUL characters', body);
        }
      });
    });

    describe('RFC 6749 section 2.3.1 encoding of Basic credentials', () => {
      const clientId = 'svc.boot~strap_-1';
      const secret = 'p+a%s:s w0rd+%2B:%41-0123456789abcdefghijKLMNOP';
      let special: TestApp;
      before(async () => {
        special = await startTestApp({
          engine,
          env: { GATEHOUSE_BOOTSTRAP_CLIENT_ID: clientId, GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: secret },
        });
      });
      after(() => special.close());

      it('form-urldecodes the id and the secret after base64-decoding', async () => {
        assert.ok(secret.length >= 32);
        // form encoding: space as "+", "+" as %2B, "%" as %25, ":" as %3A
        const res = await tokenRequest(special, json(basic(clientId, secret), { grant_type: 'client_credentials' }));
        assertTokenResponse(special, res);
        assert.equal(decodePart(res.body.access_token.split('.')[1]).client_id, clientId);
        assert.equal((await versionWith(special, res.body.access_token)).status, 200);
        // percent-encoding of a space (%20) decodes the same
        const pct = 'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');
        assertTokenResponse(special, await tokenRequest(special, json(pct, { grant_type: 'client_credentials' })));
        // an id sent without encoding (it needs none) works too
        const plainId = 'Basic ' + Buffer.from(`${clientId}:${formEncode(secret)}`).toString('base64');
        assertTokenResponse(special, await tokenRequest(special, form(plainId, 'grant_type=client_credentials')));
      });

      it('splits at the first colon only, and reads an unencoded "+" as a space', async () => {
        // a literal ":" in the secret part stays part of the secret
        const literalColon = 'Basic ' + Buffer.from(`${clientId}:${formEncode(secret).replace(/%3A/g, ':')}`).toString('base64');
        assertTokenResponse(special, await tokenRequest(special, json(literalColon, { grant_type: 'client_credentials' })));
        // a "+" that was not encoded means a space, so the secret no longer matches
        const plus = 'Basic ' + Buffer.from(`${clientId}:${formEncode(secret).replace(/%2B/g, '+')}`).toString('base64');
        assertInvalidClient(await tokenRequest(special, json(plus, { grant_type: 'client_credentials' })));
      });

      it('takes client_secret_post values as they are (JSON) or form-decoded (form)', async () => {
        const viaJson = await tokenRequest(
          special,
          json(undefined, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
        );
        assertTokenResponse(special, viaJson);
        const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }).toString();
        assertTokenResponse(special, await tokenRequest(special, form(undefined, body)));
      });
    });

    describe('guessing throttle', () => {
      it('a refused secret whose audit event cannot be written is still a plain refusal, and the pair is not stuck: the right secret works next', {
        timeout: 20_000,
      }, async () => {
        const c = await createClient(t, await t.rootToken(), 'audit-unwritable');
        const from = '192.0.2.77';
        const body = (secret: string) => json(basic(c.clientId, secret), { grant_type: 'client_credentials' });
        // the audit table out of reach, as in an outage of that one write
        await sql`alter table audit_events rename to audit_events_away`.execute(t.db.kysely);
        try {
          // a secret of the right form (a mangled one writes no event at all)
          assertInvalidClient(await tokenRequest(t, { ...body(generateSecret()), remoteAddress: from }), wrongSecret);
          await t.service.services.credentials.settled();
          assert.ok(t.logs.some((l) => l.includes('the audit event of a refused client secret was not written')));
        } finally {
          await sql`alter table audit_events_away rename to audit_events`.execute(t.db.kysely);
        }
        // the throttle settled that attempt: the pair's next attempt is not left waiting on it
        assertTokenResponse(t, await tokenRequest(t, { ...body(c.secret), remoteAddress: from }), 'Analyst');
      });

      it('after 10 wrong secrets from one address answers 429 with Retry-After there, but not elsewhere, until the window ends', async () => {
        const c = await createClient(t, await t.rootToken(), 'throttled');
        const attacker = '203.0.113.7';
        const elsewhere = '198.51.100.9';
        const good = json(basic(c.clientId, c.secret), { grant_type: 'client_credentials' });
        const bad = json(basic(c.clientId, c.secret.slice(0, -6) + 'AAAAAA'), { grant_type: 'client_credentials' });
        for (let i = 0; i < 10; i++) {
          assertInvalidClient(await tokenRequest(t, { ...bad, remoteAddress: attacker }), wrongSecret);
        }
        // the 11th attempt from that address is refused even with the right secret
        const limited = await tokenRequest(t, { ...good, remoteAddress: attacker });
        assert.equal(limited.status, 429, limited.text);
        assert.equal(limited.headers['retry-after'], '300');
        assert.equal(limited.body.access_token, undefined);
        assertNoStore(limited);
        // the real client, calling from elsewhere, is not locked out
        assertTokenResponse(t, await tokenRequest(t, { ...good, remoteAddress: elsewhere }), 'Analyst');
        // other clients from the attacker's address are not affected either
        assertTokenResponse(
          t,
          await tokenRequest(t, {
            ...json(basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), { grant_type: 'client_credentials' }),
            remoteAddress: attacker,
          }),
        );
        // still limited one second before the window ends
        t.clock.advance(5 * 60_000 - 1000);
        const almost = await tokenRequest(t, { ...good, remoteAddress: attacker });
        assert.equal(almost.status, 429);
        assert.equal(almost.headers['retry-after'], '1');
        // after the window the address may try again
        t.clock.advance(1000);
        assertTokenResponse(t, await tokenRequest(t, { ...good, remoteAddress: attacker }), 'Analyst');
      });
    });
  });
}
