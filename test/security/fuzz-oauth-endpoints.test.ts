// Fuzzing the OAuth endpoints (the token endpoint, device authorization, introspection,
// revocation) with generated requests: any content type, any body, any Authorization header, the
// real client's credentials now and then with a secret or a parameter gone wrong. Whatever comes
// in: never a 5xx, always an OAuth JSON answer; a refusal writes nothing but what a refusal
// records (the guessing throttle's counts, the audit event of a wrong secret); and no secret, ours
// or the one sent, reaches a response or a log line. fast-check prints the seed and the path of a
// failing case (replay with `{ seed, path }` in fc.assert's options).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { countRowWrites, rowWrites } from '../helpers/row-writes.js';

const PATHS = ['/auth/api/v2/auth/token', '/auth/api/v2/auth/device/code', '/auth/api/v2/auth/introspect', '/auth/api/v2/auth/revoke'];
/** the statuses an OAuth endpoint may answer with; anything else (a 5xx above all) is a fault */
const STATUSES = new Set([200, 400, 401, 405, 413, 415, 429]);
/** what a refusal may write: the guessing throttle's counts (not counted by rowWrites) and the
 *  audit events of wrong secrets and refusals */
const REFUSAL_WRITES = new Set(['audit_events', 'refused']);
const RUNS = 150;

const PARAMETERS = [
  'grant_type',
  'client_id',
  'client_secret',
  'scope',
  'resource',
  'audience',
  'device_code',
  'token',
  'token_type_hint',
  'code',
  'username',
  'password',
  '__proto__',
  'constructor',
];
const GRANTS = ['client_credentials', 'urn:ietf:params:oauth:grant-type:device_code', 'password', 'authorization_code', 'refresh_token', ''];

/** a string an attacker might send: printable, any Unicode, control characters, long, or a near-miss of a real value */
const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(...GRANTS, ROOT_CLIENT_ID, 'gatehouse-cli', 'Administrator', '%00', '%', '+', ':', '\u0000', 'null'),
  fc.string({ maxLength: 5 }).map((s) => `${ROOT_CLIENT_SECRET.slice(0, -4)}${s}`),
  fc.nat({ max: 20_000 }).map((n) => 'x'.repeat(n)),
);

const params = fc.dictionary(
  fc.oneof(fc.constantFrom(...PARAMETERS), fc.string({ maxLength: 12 })),
  fc.oneof(value, fc.array(value, { maxLength: 3 })),
  {
    maxKeys: 6,
  },
);

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const authorization = fc.oneof(
  fc.constant(undefined),
  fc.constant(basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET)),
  fc.tuple(value, value).map(([id, secret]) => basic(id, secret)),
  fc.string({ maxLength: 60 }).map((s) => `Basic ${s}`),
  fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
  fc.string({ maxLength: 60 }),
);

type Body = { kind: 'json' | 'form' | 'text' | 'none' | 'raw'; params: Record<string, unknown>; raw: string; contentType: string | undefined };
const body: fc.Arbitrary<Body> = fc.record({
  kind: fc.constantFrom('json', 'form', 'text', 'none', 'raw'),
  params,
  raw: fc.string({ maxLength: 200 }),
  contentType: fc.constantFrom(
    undefined,
    'application/json',
    'application/x-www-form-urlencoded',
    'text/plain',
    'multipart/form-data; boundary=x',
    'application/json; charset=utf-16',
    'application/x-www-form-urlencoded; charset=latin1',
  ),
});

function encode(b: Body): { payload: string | undefined; contentType: string | undefined } {
  if (b.kind === 'none') return { payload: undefined, contentType: b.contentType };
  if (b.kind === 'raw' || b.kind === 'text') return { payload: b.raw, contentType: b.kind === 'text' ? 'text/plain' : b.contentType };
  if (b.kind === 'json') return { payload: JSON.stringify(b.params), contentType: b.contentType ?? 'application/json' };
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(b.params)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, String(one));
  return { payload: form.toString(), contentType: b.contentType ?? 'application/x-www-form-urlencoded' };
}

/** the secrets a request carried, long enough that finding one elsewhere is no coincidence */
function sentSecrets(b: Body, auth: string | undefined): string[] {
  const out = [ROOT_CLIENT_SECRET];
  for (const key of ['client_secret', 'password']) {
    const v = b.params[key];
    for (const one of Array.isArray(v) ? v : [v]) if (typeof one === 'string' && one.length >= 16 && /[A-Za-z0-9]{16}/.test(one)) out.push(one);
  }
  if (auth?.startsWith('Basic ')) {
    const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8');
    const secret = decoded.slice(decoded.indexOf(':') + 1);
    if (secret.length >= 16 && /[A-Za-z0-9]{16}/.test(secret)) out.push(secret);
  }
  return out;
}

for (const engine of engines()) {
  describe(`fuzzing the OAuth endpoints (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
      await countRowWrites(t.db.kysely);
    });
    after(() => t.close());

    it(`${RUNS} generated requests per endpoint: never a 5xx, an OAuth answer, a refusal writes nothing, no secret echoed or logged`, async () => {
      for (const path of PATHS) {
        await fc.assert(
          fc.asyncProperty(body, authorization, fc.ipV4(), async (b, auth, address) => {
            const { payload, contentType } = encode(b);
            const logsBefore = t.logs.length;
            const before = await rowWrites(t.db.kysely);
            const res = await t.request({
              method: 'POST',
              url: path,
              headers: { ...(contentType ? { 'content-type': contentType } : {}), ...(auth !== undefined ? { authorization: auth } : {}) },
              ...(payload !== undefined ? { payload } : {}),
              remoteAddress: address,
            });
            assert.ok(STATUSES.has(res.status), `${path}: status ${res.status}: ${res.text.slice(0, 300)}`);
            assert.match(String(res.headers['content-type']), /^application\/json/, `${path}: a JSON answer`);
            if (res.status !== 200) {
              assert.equal(typeof res.body?.error, 'string', `${path}: an OAuth error: ${res.text.slice(0, 300)}`);
              const after = await rowWrites(t.db.kysely);
              for (const [table, n] of Object.entries(after)) {
                if (!REFUSAL_WRITES.has(table)) assert.equal(n, before[table], `${path}: a ${res.status} refusal wrote to ${table}`);
              }
            }
            const logged = t.logs.slice(logsBefore).join('\n');
            for (const secret of sentSecrets(b, auth)) {
              assert.ok(!res.text.includes(secret), `${path}: the answer holds a secret that was sent`);
              assert.ok(!logged.includes(secret), `${path}: a log line holds a secret that was sent`);
            }
            if (res.body?.access_token) assert.ok(!logged.includes(res.body.access_token), `${path}: the issued token was logged`);
          }),
          { numRuns: RUNS },
        );
      }
    });
  });
}
