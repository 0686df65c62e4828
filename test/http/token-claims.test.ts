// Tokens signed with the service's real key but holding claims it would never issue. Whoever can
// sign with that key is already us, yet such a token must still end as 401 invalid_token: never
// as a database error (500), and never with a lifetime longer than the service gives.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { JWTPayload } from 'jose';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';

const TTL = 36000;
const LIST_CLIENTS = '{ clients { id } }';
const decodePart = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
const MISSING = Symbol('missing claim');

/** GET /assets/version and POST /graphql with the token */
async function useToken(t: TestApp, token: string): Promise<Response[]> {
  const authorization = `Bearer ${token}`;
  return [
    await t.request({ method: 'GET', url: '/assets/version', headers: { authorization } }),
    await t.request({
      method: 'POST',
      url: '/graphql',
      headers: { authorization, 'content-type': 'application/json' },
      payload: { query: LIST_CLIENTS },
    }),
  ];
}

function assertInvalidToken(responses: Response[], what: string) {
  for (const res of responses) {
    assert.equal(res.status, 401, `${what}: ${res.text}`);
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/, what);
  }
}

for (const engine of transportEngines()) {
  describe(`token claims signed with the real key (${engine})`, () => {
    let t: TestApp;
    let genuine: JWTPayload;
    before(async () => {
      t = await startTestApp({ engine });
      genuine = decodePart((await t.rootToken()).split('.')[1]!);
    });
    after(() => t.close());

    const now = () => Math.floor(t.clock.now().getTime() / 1000);

    /** the root client's genuine claims, changed; a MISSING value removes the claim */
    async function sign(changes: Record<string, unknown>): Promise<string> {
      const { kid, signer } = await t.service.services.keys.signingKey();
      const payload: Record<string, unknown> = { ...genuine, iat: now(), exp: now() + TTL, jti: randomUUID() };
      for (const [claim, value] of Object.entries(changes)) {
        if (value === MISSING) delete payload[claim];
        else payload[claim] = value;
      }
      return signer.sign({ alg: 'ES256', kid, typ: 'at+jwt' }, payload);
    }

    it('accepts genuine claims, a full lifetime, and an iat within the clock skew (the controls)', async () => {
      for (const changes of [
        {},
        { iat: now(), exp: now() + TTL },
        { iat: now() + 5, exp: now() + 5 + TTL },
        { iat: now() - 100, exp: now() - 100 + TTL + 5 },
      ]) {
        for (const res of await useToken(t, await sign(changes))) assert.equal(res.status, 200, `${JSON.stringify(changes)}: ${res.text}`);
      }
    });

    it('refuses a lifetime longer than the configured one, and an iat in the future', async () => {
      const cases: Record<string, Record<string, unknown>> = {
        'exp ten years after iat': { exp: now() + 10 * 365 * 86400 },
        'exp a minute past the lifetime': { exp: now() + TTL + 60 },
        'iat long ago, exp still ahead': { iat: now() - 5 * 365 * 86400, exp: now() + 3600 },
        'iat an hour ahead': { iat: now() + 3600, exp: now() + 3600 + TTL },
        'iat a minute ahead, short lifetime': { iat: now() + 60, exp: now() + 120 },
        'iat 1e15': { iat: 1e15, exp: 1e15 + TTL },
      };
      for (const [what, changes] of Object.entries(cases)) assertInvalidToken(await useToken(t, await sign(changes)), what);
    });

    it('refuses subject, secret, tenant and token ids of any form it does not issue with 401, not 500', async () => {
      const cases: Record<string, Record<string, unknown>> = {
        'sub not a UUID': { sub: 'root-admin' },
        'sub a SQL fragment': { sub: "' OR 1=1--" },
        'sub a UUID with a NUL': { sub: `${genuine.sub}\u0000` },
        'sub a number': { sub: 42 },
        'sub an object': { sub: { id: genuine.sub } },
        'sub a list': { sub: [genuine.sub] },
        'secret_id not a UUID': { secret_id: 'x' },
        'secret_id empty': { secret_id: '' },
        'secret_id a number': { secret_id: 1 },
        'secret_id a list': { secret_id: [genuine.secret_id] },
        'tid not a tenant id': { tid: 'one' },
        'tid with a leading zero': { tid: '01' },
        'tid beyond bigint': { tid: '99999999999999999999' },
        'tid a number': { tid: 1 },
        'tid a list': { tid: ['1'] },
        'jti not a UUID': { jti: 'x' },
        'jti a number': { jti: 7 },
        'client_id a list': { client_id: ['root-admin'] },
        'client_id missing': { client_id: MISSING },
        'user token with a non-UUID sub': { pty: 'user', sub: 'admin@gatehouse.local' },
      };
      const errorsBefore = t.logs.filter((line) => JSON.parse(line).level >= 50).length;
      for (const [what, changes] of Object.entries(cases)) assertInvalidToken(await useToken(t, await sign(changes)), what);
      assert.equal(t.logs.filter((line) => JSON.parse(line).level >= 50).length, errorsBefore, 'nothing failed inside');
    });

    it('accepts a scope claim as issued and refuses any other form of it', async () => {
      for (const scope of ['Administrator', 'Administrator Auditor']) {
        for (const res of await useToken(t, await sign({ scope }))) assert.equal(res.status, 200, `${scope}: ${res.text}`);
      }
      const refused: Record<string, unknown> = {
        'not a role': 'admin',
        'lower case': 'administrator',
        empty: '',
        'two spaces': 'Administrator  Auditor',
        'not in the order issued': 'Auditor Administrator',
        'a name twice': 'Administrator Administrator',
        'a list': ['Administrator'],
        'a number': 1,
        'an object': { Administrator: true },
      };
      for (const [what, scope] of Object.entries(refused)) assertInvalidToken(await useToken(t, await sign({ scope })), `scope ${what}`);
    });

    it('never answers 5xx, whatever the claims hold (property)', async () => {
      const huge = 'x'.repeat(3000);
      const odd = fc.oneof(
        fc.string(),
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
        fc.constantFrom(huge, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e308, -1e308, 0, -1, '', ' ', '\u0000'),
        fc.uuid(),
        fc.stringMatching(/^[0-9]{1,24}$/),
        fc.constantFrom('client', 'user', 'us1', 'Administrator', 'Auditor Analyst', 'root-admin', '1'),
      );
      const names = ['iss', 'sub', 'aud', 'tid', 'region', 'iat', 'exp', 'nbf', 'jti', 'pty', 'client_id', 'secret_id', 'scope'];
      // a few claims changed per token, so that tokens get past the first check often enough
      const changes = fc
        .tuple(
          fc.subarray(names, { maxLength: 4 }),
          fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant(MISSING) }, { weight: 5, arbitrary: odd }), { minLength: 4, maxLength: 4 }),
        )
        .map(([changed, values]) => Object.fromEntries(changed.map((name, i) => [name, values[i]])));

      const seen = new Set<number>();
      await fc.assert(
        fc.asyncProperty(changes, async (change) => {
          for (const res of await useToken(t, await sign(change))) {
            seen.add(res.status);
            assert.ok(res.status < 500, `${res.status} for ${JSON.stringify(change).slice(0, 500)}: ${res.text}`);
            if (res.status === 401) assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
          }
        }),
        { numRuns: 300 },
      );
      // the generator reaches both outcomes, so the property is not vacuous
      assert.ok(seen.has(200) && seen.has(401), [...seen].join(','));
    });
  });
}
