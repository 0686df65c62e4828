// test-runner: own process (it replaces globalThis.fetch for one test)
import assert from 'node:assert/strict';
import { createPublicKey, randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { ROLE_IDS } from '../../src/access/roles.js';
import type { Es256Header } from '../../src/keys/compact-jws.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, TEST_BASE_URL, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { clientWithRoles, CREATE_CLIENT, createClient, rowCounts, seedTenant } from '../helpers/seed.js';

const VERSION_PATHS = ['/assets/version', '/auth/version', '/public/version'];
const LIST_CLIENTS = `{ clients { id client_id tenant_id } }`;
const PACKAGE_VERSION = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version as string;

const decodePart = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
const encodePart = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Stops a second app that shares the first one's database, leaving the database open. */
async function stopSharing(app: TestApp | undefined) {
  if (!app) return;
  await app.service.app.close();
  await app.service.lastUsed.stop();
}

function assertChallenge(res: Response, what: string) {
  assert.equal(res.status, 401, `${what}: ${res.text}`);
  assert.match(String(res.headers['www-authenticate']), /^Bearer realm="[^"]+", error="invalid_token"$/, what);
}

/** The token is refused on every kind of authenticated endpoint, with RFC 6750's invalid_token. */
async function assertRejected(t: TestApp, authorization: string, what: string) {
  const gql = await t.request({
    method: 'POST',
    url: '/graphql',
    headers: { authorization, 'content-type': 'application/json' },
    payload: { query: LIST_CLIENTS },
  });
  assertChallenge(gql, `${what} (graphql)`);
  assert.equal(gql.body.errors[0].extensions.code, 'UNAUTHENTICATED', what);
  assert.equal(gql.body.data, undefined, what);
  assert.deepEqual(gql.body.error, [gql.body.errors[0].message]);
  for (const url of VERSION_PATHS) {
    const res = await t.request({ method: 'GET', url, headers: { authorization } });
    assertChallenge(res, `${what} (${url})`);
    assert.equal(res.body.tag, undefined);
  }
  // a mutation sent with the rejected credentials writes nothing
  const before = await rowCounts(t);
  const mutation = await t.request({
    method: 'POST',
    url: '/graphql',
    headers: { authorization, 'content-type': 'application/json' },
    payload: { query: CREATE_CLIENT, variables: { name: `must-not-exist-${what}` } },
  });
  assertChallenge(mutation, `${what} (mutation)`);
  assert.deepEqual(await rowCounts(t), before, `${what}: nothing written`);
}

const errorLogs = (t: TestApp) => t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);

for (const engine of transportEngines()) {
  describe(`bearer authentication (${engine})`, () => {
    let t: TestApp;
    /** the same database behind another issuer address */
    let otherIssuer: TestApp;
    /** the same database serving region eu1 */
    let eu: TestApp;
    /** claims of a genuine token of the root client, as a base for crafted ones */
    let genuine: JWTPayload;

    before(async () => {
      t = await startTestApp({ engine });
      otherIssuer = await startTestApp({ engine, db: t.db, clock: t.clock, env: { GATEHOUSE_BASE_URL: 'http://other-gatehouse.test' } });
      eu = await startTestApp({ engine, db: t.db, clock: t.clock, env: { GATEHOUSE_REGION: 'eu1' } });
      const root = await t.rootToken();
      genuine = decodePart(root.split('.')[1]!);
    });
    after(async () => {
      await stopSharing(otherIssuer);
      await stopSharing(eu);
      await t.close();
    });

    /** a token signed with the service's own key, with claims changed */
    async function signWithOurKey(claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
      const { kid, signer } = await t.service.services.keys.signingKey();
      const now = Math.floor(t.clock.now().getTime() / 1000);
      const payload = { ...genuine, iat: now, exp: now + 3600, jti: randomUUID(), ...claims };
      const protectedHeader: Record<string, unknown> = { alg: 'ES256', kid, typ: 'at+jwt', ...header };
      // an undefined value leaves the claim or header field out
      for (const fields of [payload, protectedHeader] as Record<string, unknown>[]) {
        for (const [k, v] of Object.entries(fields)) if (v === undefined) delete fields[k];
      }
      return signer.sign(protectedHeader as unknown as Es256Header, payload);
    }

    it('a token crafted with our own key and genuine claims is accepted (the control for the cases below)', async () => {
      const token = await signWithOurKey({});
      const res = await t.gql(token, LIST_CLIENTS);
      assert.equal(res.status, 200, res.text);
      assert.equal((await t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${token}` } })).status, 200);
      // the scheme name is case-insensitive (RFC 7235)
      const lower = await t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `bearer ${token}` } });
      assert.equal(lower.status, 200);
    });

    it('without Authorization answers 401 with a Bearer challenge and no error code', async () => {
      const res = await t.gql(undefined, LIST_CLIENTS);
      assert.equal(res.status, 401);
      const challenge = String(res.headers['www-authenticate']);
      assert.match(challenge, /^Bearer\b/);
      assert.doesNotMatch(challenge, /error=/);
      assert.equal(res.body.data, undefined);
      assert.equal(res.body.errors.length, 1);
      assert.equal(res.body.errors[0].extensions.code, 'UNAUTHENTICATED');
      assert.ok(Array.isArray(res.body.error));
      assert.deepEqual(res.body.error, [res.body.errors[0].message]);
      for (const url of VERSION_PATHS) {
        const v = await t.request({ method: 'GET', url });
        assert.equal(v.status, 401, url);
        assert.match(String(v.headers['www-authenticate']), /^Bearer\b/);
        assert.doesNotMatch(String(v.headers['www-authenticate']), /error=/);
        assert.equal(v.body.tag, undefined);
      }
      // a token in the query string is not a credential (RFC 6750 section 2.3 is not offered)
      const root = await t.rootToken();
      const query = await t.request({ method: 'GET', url: `/assets/version?access_token=${root}` });
      assert.equal(query.status, 401);
      assert.doesNotMatch(String(query.headers['www-authenticate']), /error=/);
    });

    it('answers a malformed Authorization header with 401 invalid_token', async () => {
      const root = await t.rootToken();
      for (const header of [
        'Basic x',
        'Basic ' + Buffer.from(`${ROOT_CLIENT_ID}:${ROOT_CLIENT_SECRET}`).toString('base64'),
        'Bearer',
        'Bearer ',
        'garbage',
        `Token ${root}`,
        `Bearer ${root} ${root}`,
        `Bearer "${root}"`,
        `Bearer${root}`,
        'Bearer x',
        'Bearer a.b.c',
        'Bearer ' + 'a'.repeat(9000),
      ]) {
        await assertRejected(t, header, JSON.stringify(header.slice(0, 40)));
      }
    });

    it('says in words what is wrong with a malformed token and what to do, never a library error code', async () => {
      const root = await t.rootToken();
      const [h, p, s] = root.split('.') as [string, string, string];
      const header = decodePart(h);
      const now = Math.floor(t.clock.now().getTime() / 1000);
      const fresh = await generateKeyPair('ES256');
      const signFresh = (hdr: Record<string, unknown>) =>
        new SignJWT({ ...genuine, iat: now, exp: now + 3600 }).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...hdr }).sign(fresh.privateKey);
      const flip = (part: string, at: number) => part.slice(0, at) + (part[at] === 'A' ? 'B' : 'A') + part.slice(at + 1);
      const cases: [string, string, RegExp][] = [
        [
          'one part',
          'x',
          /the token is not a JWT: an access token is three base64url parts joined by dots \(header\.payload\.signature\), and this one has 1\b/,
        ],
        ['two parts', `${h}.${p}`, /is not a JWT: .* this one has 2\b/],
        ['four parts', `${h}.${p}.${s}.${s}`, /is not a JWT: .* this one has 4\b/],
        ['empty header', `.${p}.${s}`, /the token's header \(part 1 of 3\) is empty/],
        ['no signature', `${h}.${p}.`, /the token's signature \(part 3 of 3\) is empty/],
        ['base64 padding on the signature', `${h}.${p}.${s}==`, /the token's signature \(part 3 of 3\) is not base64url/],
        ['standard base64 in the payload', `${h}.${p.slice(0, -1)}+.${s}`, /the token's payload \(part 2 of 3\) is not base64url/],
        ['an impossible base64url length', `${h}.${p}.${s.slice(0, -1)}`, /the token's signature \(part 3 of 3\) is not base64url/],
        ['header not JSON', `abc.${p}.${s}`, /the token's header is not a JSON object/],
        ['header a JSON array', `${encodePart([header])}.${p}.${s}`, /the token's header is not a JSON object/],
        ['header JSON null', `${encodePart(null)}.${p}.${s}`, /the token's header is not a JSON object/],
        ['alg none', `${encodePart({ ...header, alg: 'none' })}.${p}.`, /is empty/],
        ['alg none, signature kept', `${encodePart({ ...header, alg: 'none' })}.${p}.${s}`, /not signed with ES256, the only algorithm/],
        ['alg HS256', `${encodePart({ ...header, alg: 'HS256' })}.${p}.${s}`, /not signed with ES256/],
        ['alg missing', `${encodePart({ ...header, alg: undefined })}.${p}.${s}`, /not signed with ES256/],
        ['no kid', await signFresh({}), /the token's header names no signing key \(kid\)/],
        ['kid not a string', `${encodePart({ ...header, kid: 7 })}.${p}.${s}`, /names no signing key \(kid\)/],
        ['unknown kid', await signFresh({ kid: 'unknown-kid' }), /signed with a key this server does not have \(kid\)/],
        ['over-long kid', await signFresh({ kid: 'k'.repeat(500) }), /signed with a key this server does not have/],
        ['payload not JSON', `${h}.${Buffer.from('not json').toString('base64url')}.${s}`, /the token's payload is not a JSON object/],
        ['payload a JSON string', `${h}.${encodePart('claims')}.${s}`, /the token's payload is not a JSON object/],
        ['tampered signature', `${h}.${p}.${flip(s, 10)}`, /signature does not verify: the token was altered, or it was not signed by this server/],
        ['another key under our kid', await signFresh({ kid: header.kid }), /signature does not verify/],
        ['typ JWT', await signWithOurKey({}, { typ: 'JWT' }), /not an access token: its header's typ is not at\+jwt/],
        ['another issuer', await signWithOurKey({ iss: 'http://evil.test' }), /issued by another server \(iss\)/],
        ['another audience', await signWithOurKey({ aud: 'http://other.test' }), /meant for another audience \(aud\)/],
        ['no jti', await signWithOurKey({ jti: undefined }), /the token has no jti claim/],
        ['exp not a number', await signWithOurKey({ exp: 'tomorrow' }), /the token's exp claim is not valid/],
        ['expired', await signWithOurKey({ iat: now - 7200, exp: now - 3600 }), /the token has expired/],
        ['not yet valid', await signWithOurKey({ nbf: now + 86400 }), /not valid yet \(nbf\)/],
        ['another region', await signWithOurKey({ region: 'eu1' }), /the token was issued in region eu1 and this server is region us1/],
        ['too long', 'a'.repeat(9000), /longer than 8192 characters/],
      ];
      const remedy =
        /Obtain a new access token from the token endpoint \(POST \/auth\/api\/v2\/auth\/token\) and send it as "Authorization: Bearer <token>"\.$/;
      for (const [what, token, reason] of cases) {
        const gql = await t.gql(token, LIST_CLIENTS);
        assertChallenge(gql, what);
        const version = await t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${token}` } });
        assertChallenge(version, what);
        for (const message of [gql.body.errors[0].message as string, version.body.message as string]) {
          assert.match(message, /^Invalid access token: /, what);
          assert.match(message, reason, `${what}: ${message}`);
          assert.match(message, remedy, `${what}: ${message}`);
          assert.doesNotMatch(message, /ERR_|JWS|JOSE|Compact|\(undefined\)/, `${what}: ${message}`);
        }
      }
      // a header that is not "Bearer <token>" says what to send
      const notBearer = await t.gql(undefined, LIST_CLIENTS, undefined, { headers: { authorization: `Bearer "${root}"` } });
      assertChallenge(notBearer, 'quoted token');
      assert.match(notBearer.body.errors[0].message, /not of the form "Bearer <token>": send the word Bearer, a space and one access token/);
      assert.match(notBearer.body.errors[0].message, remedy);
    });

    it('rejects forged and tampered tokens without a database error and without fetching anything', async () => {
      const root = await t.rootToken();
      const [h, p, s] = root.split('.') as [string, string, string];
      const header = decodePart(h);
      const realKid: string = header.kid;
      const now = Math.floor(t.clock.now().getTime() / 1000);
      const claims = { ...genuine, iat: now, exp: now + 3600 };

      const fresh = await generateKeyPair('ES256', { extractable: true });
      const freshJwk = await exportJWK(fresh.publicKey);
      const signFresh = (hdr: Record<string, unknown>) =>
        new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...hdr }).sign(fresh.privateKey);

      const jwks = (await t.request({ method: 'GET', url: '/.well-known/jwks.json' })).body;
      const publicJwk = jwks.keys.find((k: { kid: string }) => k.kid === realKid);
      const publicPem = createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;
      const hs256 = (secret: string) =>
        new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: realKid, typ: 'at+jwt' }).sign(new TextEncoder().encode(secret));

      const flip = (part: string, at: number) => part.slice(0, at) + (part[at] === 'A' ? 'B' : 'A') + part.slice(at + 1);
      const forged: Record<string, string> = {
        'tampered signature': `${h}.${p}.${flip(s, Math.floor(s.length / 2))}`,
        'truncated signature': `${h}.${p}.${s.slice(0, -4)}`,
        'no signature': `${h}.${p}.`,
        'payload swapped, signature kept': `${h}.${encodePart({ ...decodePart(p), tid: '2' })}.${s}`,
        'alg none': `${encodePart({ alg: 'none', typ: 'at+jwt', kid: realKid })}.${p}.`,
        'alg none, signature kept': `${encodePart({ alg: 'none', typ: 'at+jwt', kid: realKid })}.${p}.${s}`,
        'alg NONE': `${encodePart({ alg: 'NONE', typ: 'at+jwt' })}.${p}.`,
        'HS256 keyed with our public key (PEM)': await hs256(publicPem),
        'HS256 keyed with our public key (JWK JSON)': await hs256(JSON.stringify(publicJwk)),
        'another key under our kid': await signFresh({ kid: realKid }),
        'unknown kid': await signFresh({ kid: 'unknown-kid' }),
        'no kid': await signFresh({}),
        'kid path traversal': await signFresh({ kid: '../../x' }),
        'kid SQL injection': await signFresh({ kid: "' OR 1=1--" }),
        'kid LDAP injection': await signFresh({ kid: '*)(uid=*))(|(uid=*' }),
        'kid over-long': await signFresh({ kid: 'k'.repeat(5000) }),
        'embedded jwk': await signFresh({ jwk: freshJwk }),
        'jku to an attacker': await signFresh({ kid: 'attacker', jku: 'http://127.0.0.1:9/jwks.json' }),
        'x5u to an attacker': await signFresh({ kid: 'attacker', x5u: 'http://127.0.0.1:9/cert.pem' }),
        'not a JWT': 'abc.def.ghi',
        'two segments': `${h}.${p}`,
      };

      const fetches: unknown[] = [];
      const realFetch = globalThis.fetch;
      globalThis.fetch = (async (...args: unknown[]) => {
        fetches.push(args[0]);
        throw new Error('no outbound requests expected');
      }) as typeof fetch;
      // below fetch: any socket this process opens (net.connect, node:http, undici's own), and any
      // request undici begins, while the tokens are sent (the app is injected: it needs no socket)
      const outbound: string[] = [];
      const watched = ['net.client.socket', 'undici:request:create', 'http.client.request.start'];
      const onOutbound = (_message: unknown, name: string | symbol) => outbound.push(String(name));
      for (const name of watched) diagnostics.subscribe(name, onOutbound);
      const errorsBefore = errorLogs(t).length;
      try {
        for (const [what, token] of Object.entries(forged)) await assertRejected(t, `Bearer ${token}`, what);
      } finally {
        globalThis.fetch = realFetch;
        for (const name of watched) diagnostics.unsubscribe(name, onOutbound);
      }
      assert.deepEqual(fetches, []);
      assert.deepEqual(outbound, [], 'no outbound connection or request (jku, x5u, an embedded jwk are never followed)');
      assert.deepEqual(errorLogs(t).slice(errorsBefore), [], 'no request failed with an internal error');
    });

    it('rejects tokens signed with our key whose claims are wrong', async () => {
      const now = Math.floor(t.clock.now().getTime() / 1000);
      const cases: Record<string, string> = {
        'another issuer': await signWithOurKey({ iss: 'http://evil.test' }),
        'issuer with a trailing slash': await signWithOurKey({ iss: `${TEST_BASE_URL}/` }),
        'no issuer': await signWithOurKey({ iss: undefined }),
        'no audience': await signWithOurKey({ aud: undefined }),
        'another audience': await signWithOurKey({ aud: 'http://other-api.test' }),
        'typ JWT': await signWithOurKey({}, { typ: 'JWT' }),
        'no typ': await signWithOurKey({}, { typ: undefined }),
        'another region': await signWithOurKey({ region: 'eu1' }),
        'no region': await signWithOurKey({ region: undefined }),
        'no principal type': await signWithOurKey({ pty: undefined }),
        'client posing as a user': await signWithOurKey({ pty: 'user' }),
        'another tenant': await signWithOurKey({ tid: '2' }),
        'no secret id': await signWithOurKey({ secret_id: undefined }),
        'unknown secret id': await signWithOurKey({ secret_id: randomUUID() }),
        'unknown subject': await signWithOurKey({ sub: randomUUID() }),
        'no jti': await signWithOurKey({ jti: undefined }),
        'expired an hour ago': await signWithOurKey({ iat: now - 7200, exp: now - 3600 }),
        'not valid before tomorrow': await signWithOurKey({ nbf: now + 86400 }),
      };
      for (const [what, token] of Object.entries(cases)) await assertRejected(t, `Bearer ${token}`, what);
    });

    it('rejects a token once it has expired (36000 s), with invalid_token', async () => {
      const start = t.clock.now();
      try {
        const token = await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        t.clock.advance(35_999_000);
        assert.equal((await t.gql(token, LIST_CLIENTS)).status, 200);
        t.clock.advance(7_000); // past expiry and any leeway
        await assertRejected(t, `Bearer ${token}`, 'expired');
        // a new token from the same credentials works
        assert.equal((await t.gql(await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), LIST_CLIENTS)).status, 200);
      } finally {
        t.clock.set(start);
      }
    });

    it('rejects a token issued under another issuer address, though signed with the same keys', async () => {
      const foreign = await otherIssuer.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      // it is a good token where it was issued
      assert.equal(decodePart(foreign.split('.')[1]!).iss, 'http://other-gatehouse.test');
      assert.equal(
        (await otherIssuer.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${foreign}` } })).status,
        200,
      );
      await assertRejected(t, `Bearer ${foreign}`, 'other issuer');
      await assertRejected(otherIssuer, `Bearer ${await t.rootToken()}`, 'this issuer, presented elsewhere');
    });

    it('rejects a token of another region', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'eu-client', { roles: [ROLE_IDS.Administrator], tenant });
      // credentials are bound to one region: make this one an eu1 credential
      await t.db.kysely.updateTable('clients').set({ environment: 'eu1' }).where('id', '=', c.id).execute();
      assert.equal((await t.tokenResponse(c.clientId, c.secret)).status, 401, 'an eu1 credential gets no us1 token');
      const euToken = await eu.token(c.clientId, c.secret);
      assert.equal(decodePart(euToken.split('.')[1]!).region, 'eu1');
      assert.equal((await eu.gql(euToken, LIST_CLIENTS)).status, 200, 'the token works in its own region');
      await assertRejected(t, `Bearer ${euToken}`, 'eu1 token at us1');
      await assertRejected(eu, `Bearer ${await t.rootToken()}`, 'us1 token at eu1');
    });

    it("rejects a deleted client's token at once", async () => {
      const tenant = await seedTenant(t, '1');
      const victim = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
      assert.equal((await t.gql(victim.token, LIST_CLIENTS)).status, 200);
      const del = await t.gql(await t.rootToken(), `mutation($id: ID!) { deleteClient(id: $id) { id revoked_at } }`, { id: victim.id }, { tenant });
      assert.ok(del.body.data.deleteClient.revoked_at, del.text);
      await assertRejected(t, `Bearer ${victim.token}`, 'deleted client');
    });

    it("rejects a force-rotated client's old token at once, and accepts the new secret's", async () => {
      const tenant = await seedTenant(t, '1');
      const victim = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      assert.equal((await t.gql(victim.token, LIST_CLIENTS)).status, 200);
      const rotated = await t.gql(
        await t.rootToken(),
        `mutation($id: ID!) { forceRotateClientSecret(id: $id) { client { id } client_secret } }`,
        { id: victim.id },
        { tenant },
      );
      const newSecret = rotated.body.data.forceRotateClientSecret.client_secret;
      assert.ok(newSecret, rotated.text);
      await assertRejected(t, `Bearer ${victim.token}`, 'force-rotated client');
      assert.equal((await t.tokenResponse(victim.clientId, victim.secret)).status, 401, 'the old secret is dead too');
      assert.equal((await t.gql(await t.token(victim.clientId, newSecret), LIST_CLIENTS)).status, 200);
    });

    describe('X-Tenant-Context', () => {
      let partner: string;
      let child: string;
      let sibling: string;
      let otherPartner: string;
      let otherChild: string;
      let partnerAdmin: Awaited<ReturnType<typeof clientWithRoles>>;
      let childAdmin: Awaited<ReturnType<typeof clientWithRoles>>;

      before(async () => {
        partner = await seedTenant(t, '1', { isPartner: true });
        child = await seedTenant(t, partner);
        sibling = await seedTenant(t, partner);
        otherPartner = await seedTenant(t, '1', { isPartner: true });
        otherChild = await seedTenant(t, otherPartner);
        partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
        childAdmin = await clientWithRoles(t, child, [ROLE_IDS.Administrator]);
      });

      const forbiddenIn = async (token: string, tenant: string) => {
        const res = await t.gql(token, LIST_CLIENTS, undefined, { tenant });
        assert.equal(res.status, 403, `tenant ${tenant}: ${res.text}`);
        assert.equal(res.body.errors[0].extensions.code, 'FORBIDDEN');
        assert.equal(res.body.data, undefined);
        assert.deepEqual(res.body.error, [res.body.errors[0].message]);
        return res;
      };

      it('acts in the home tenant without the header, and in it with the header', async () => {
        for (const tenant of [undefined, child]) {
          const res = await t.gql(childAdmin.token, LIST_CLIENTS, undefined, tenant ? { tenant } : {});
          assert.equal(res.status, 200, res.text);
          assert.ok(res.body.data.clients.some((c: { id: string }) => c.id === childAdmin.id));
          assert.ok(res.body.data.clients.every((c: { tenant_id: string }) => c.tenant_id === child));
        }
      });

      it('lets a partner Administrator act in its child tenant', async () => {
        const res = await t.gql(partnerAdmin.token, LIST_CLIENTS, undefined, { tenant: child });
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.data.clients.some((c: { id: string }) => c.id === childAdmin.id));
        assert.ok(res.body.data.clients.every((c: { tenant_id: string }) => c.tenant_id === child));
      });

      it("refuses a child's client in its parent, a sibling, another partner's child and the vendor tenant with 403", async () => {
        for (const tenant of [partner, sibling, otherPartner, otherChild, '1']) await forbiddenIn(childAdmin.token, tenant);
        for (const tenant of [otherPartner, otherChild, '1']) await forbiddenIn(partnerAdmin.token, tenant);
      });

      it('answers a tenant the roles do not reach exactly like a tenant that does not exist', async () => {
        const missing = '987654321987';
        const exists = await forbiddenIn(childAdmin.token, sibling);
        const absent = await forbiddenIn(childAdmin.token, missing);
        // the only differences allowed: the request id, the date, and the caller's own header value echoed back
        const normalize = (res: Response, id: string) => {
          const headers = { ...res.headers };
          for (const h of ['x-request-id', 'date', 'content-length']) delete headers[h];
          return { status: res.status, headers, text: res.text.split(id).join('<tenant>') };
        };
        assert.deepEqual(normalize(exists, sibling), normalize(absent, missing));
      });

      it('answers a malformed value with 400 BAD_USER_INPUT', async () => {
        for (const value of [
          'abc',
          ' 5',
          '5 ',
          '05',
          '0',
          '-5',
          '+5',
          '1,2',
          '1, 2',
          '5.0',
          '0x5',
          '1e3',
          '\u0661',
          '１',
          '5\t',
          '1234567890123456789012',
        ]) {
          const res = await t.gql(partnerAdmin.token, LIST_CLIENTS, undefined, { headers: { 'x-tenant-context': value } });
          assert.equal(res.status, 400, `${JSON.stringify(value)}: ${res.text}`);
          assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT', JSON.stringify(value));
          assert.equal(res.body.data, undefined);
        }
        // the same tenant sent twice is still a repeated header, never silently picked
        for (const value of [
          [child, child],
          [child, sibling],
        ]) {
          const res = await t.service.app.inject({
            method: 'POST',
            url: '/graphql',
            headers: { authorization: `Bearer ${partnerAdmin.token}`, 'content-type': 'application/json', 'x-tenant-context': value },
            payload: { query: LIST_CLIENTS },
          });
          assert.equal(res.statusCode, 400, res.body);
          assert.equal(JSON.parse(res.body).errors[0].extensions.code, 'BAD_USER_INPUT');
        }
      });
    });

    describe('version endpoints', () => {
      it('require a token', async () => {
        for (const url of VERSION_PATHS) {
          const res = await t.request({ method: 'GET', url });
          assert.equal(res.status, 401, url);
          assert.match(String(res.headers['www-authenticate']), /^Bearer\b/);
          assert.equal(res.body.error, 'UNAUTHENTICATED');
        }
      });

      it('report {tag, revision, timestamp} to any valid token', async () => {
        const tenant = await seedTenant(t, '1');
        const auditor = await clientWithRoles(t, tenant, [ROLE_IDS.Auditor]);
        for (const token of [await t.rootToken(), auditor.token]) {
          for (const url of VERSION_PATHS) {
            const res = await t.request({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
            assert.equal(res.status, 200, `${url}: ${res.text}`);
            assert.match(String(res.headers['content-type']), /^application\/json/);
            assert.deepEqual(Object.keys(res.body).sort(), ['revision', 'tag', 'timestamp']);
            assert.equal(res.body.tag, PACKAGE_VERSION);
            assert.equal(typeof res.body.revision, 'string');
            assert.ok(res.body.revision.length > 0);
            assert.match(res.body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/);
            assert.equal(new Date(res.body.timestamp).toISOString().slice(0, 19), res.body.timestamp.slice(0, 19));
          }
        }
      });
    });
  });
}
