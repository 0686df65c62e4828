// The HTTP edge of the credential GraphQL interface and the operational endpoints: bad input
// gets a clear answer (status, code) and changes nothing; limits hold; internal errors are
// masked; request ids, health, readiness and metrics behave as CONTRACT.md says.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GraphQLError } from 'graphql';
import { AppError } from '../../src/errors.js';
import { formatGraphQLError } from '../../src/graphql/errors.js';
import { MAX_ALIASES, MAX_DEPTH } from '../../src/graphql/limits.js';
import { BODY_LIMIT } from '../../src/app.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { CREATE_CLIENT, rowCounts } from '../helpers/seed.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The GraphQL error shape of CONTRACT.md: errors[] with extensions.code, and error: [messages]. */
function assertGraphQLError(res: Response, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.ok(Array.isArray(res.body?.errors) && res.body.errors.length > 0, res.text);
  for (const e of res.body.errors) assert.equal(e.extensions?.code, code, res.text);
  assert.deepEqual(
    res.body.error,
    res.body.errors.map((e: { message: string }) => e.message),
  );
  assert.equal(res.body.data, undefined, 'a request rejected before running has no data entry');
}

/** `{ __type(name: "Client") { ofType { ofType … { name } } } }` with this selection depth. */
function nestedTypeQuery(depth: number): string {
  // __type (1) + ofType x k + name (1)
  const k = depth - 2;
  return `{ __type(name: "Client") ${'{ ofType '.repeat(k)}{ name }${' }'.repeat(k)} }`;
}

function aliasedQuery(n: number): string {
  return `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(' ')} }`;
}

for (const engine of engines()) {
  describe(`GraphQL over HTTP: bad input (${engine})`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine });
      token = await t.rootToken();
    });
    after(() => t.close());

    const post = (payload: string | Buffer | object, headers: Record<string, string> = {}) =>
      t.request({
        method: 'POST',
        url: '/graphql',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
        payload,
      });

    it('answers a malformed JSON body with 400 and writes nothing', async () => {
      const before = await rowCounts(t);
      const res = await post('{"query": "mutation { createClient(name: \\"x\\") { client_secret } }"');
      assertGraphQLError(res, 400, 'BAD_USER_INPUT');
      assert.match(res.body.errors[0].message, /malformed/i);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers JSON that is not {query: string} with 400 BAD_USER_INPUT', async () => {
      const before = await rowCounts(t);
      for (const payload of [
        '[]',
        '"mutation { createClient(name: \\"x\\") { client_secret } }"',
        '42',
        'null',
        '{}',
        '{"query": 5}',
        '{"query": {"text": "{ clients { id } }"}}',
        JSON.stringify([{ query: `mutation { createClient(name: "batched") { client_secret } }` }]),
        JSON.stringify({ query: '{ clients { id } }', variables: 'x' }),
        JSON.stringify({ query: '{ clients { id } }', variables: [1] }),
        JSON.stringify({ query: '{ clients { id } }', operationName: 7 }),
      ]) {
        const res = await post(payload);
        assertGraphQLError(res, 400, 'BAD_USER_INPUT');
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers a GraphQL syntax error with 400 BAD_USER_INPUT', async () => {
      const before = await rowCounts(t);
      const res = await t.gql(token, 'mutation { createClient(name: "syntax" { client_secret } }');
      assertGraphQLError(res, 400, 'BAD_USER_INPUT');
      assert.match(res.body.errors[0].message, /^Syntax Error/);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('rejects unknown fields, arguments and types with 400 and no "Did you mean" hint', async () => {
      const before = await rowCounts(t);
      for (const query of [
        '{ clinets { id } }',
        '{ clients { id naem } }',
        '{ clients(nme: "x") { id } }',
        'query($n: Strin) { clients(name: $n) { id } }',
        'mutation { createClinet(name: "typo") { client_secret } }',
      ]) {
        const res = await t.gql(token, query);
        assertGraphQLError(res, 400, 'BAD_USER_INPUT');
        assert.doesNotMatch(res.text, /did you mean/i, query);
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('rejects variables of the wrong type with 400 BAD_USER_INPUT and no data', async () => {
      const before = await rowCounts(t);
      for (const variables of [
        { name: 5 },
        { name: null },
        {},
        { name: ['a'] },
        { name: 'typed', roles: true },
        { name: 'typed', roles: { id: 'x' } },
        { name: 'typed', roles: [null] },
      ]) {
        const res = await t.gql(token, CREATE_CLIENT, variables);
        assertGraphQLError(res, 400, 'BAD_USER_INPUT');
        assert.match(res.body.errors[0].message, /^Variable "\$(name|roles)"/, JSON.stringify(variables));
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('coerces roles: "x" to ["x"] as the GraphQL spec requires, and then refuses the unknown role', async () => {
      // Input coercion wraps a single value in a list (GraphQL spec, List input coercion), so this
      // is not a type error; the resolver still answers clearly and writes nothing.
      const before = await rowCounts(t);
      const res = await t.gql(token, CREATE_CLIENT, { name: 'single-role', roles: 'x' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.createClient, null);
      assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers GET /graphql with 405 and Allow: POST, without executing anything', async () => {
      const before = await rowCounts(t);
      const res = await t.request({
        method: 'GET',
        url: `/graphql?query=${encodeURIComponent('mutation { createClient(name: "via-get") { client_secret } }')}`,
        headers: { authorization: `Bearer ${token}` },
      });
      assertGraphQLError(res, 405, 'BAD_USER_INPUT');
      assert.equal(res.headers.allow, 'POST');
      assert.deepEqual(await rowCounts(t), before);
    });

    it('does not execute a mutation sent as text/plain, form or multipart (CSRF-safe content types)', async () => {
      const before = await rowCounts(t);
      const query = 'mutation { createClient(name: "csrf") { client_secret } }';
      const cases: [string, string][] = [
        ['text/plain', JSON.stringify({ query })],
        ['text/plain;charset=UTF-8', JSON.stringify({ query })],
        ['application/x-www-form-urlencoded', `query=${encodeURIComponent(query)}`],
        ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n${query}\r\n--x--\r\n`],
      ];
      for (const [contentType, payload] of cases) {
        const res = await post(payload, { 'content-type': contentType });
        assert.ok(res.status === 400 || res.status === 415, `${contentType}: ${res.status} ${res.text}`);
        assert.equal(res.body?.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', `${contentType}: ${res.text}`);
        assert.equal(res.body.data, undefined);
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers a body over 1 MiB with 413 and writes nothing', async () => {
      const before = await rowCounts(t);
      const padding = 'x'.repeat(BODY_LIMIT + 1);
      const res = await post(JSON.stringify({ query: `mutation { createClient(name: "huge") { client_secret } } # ${padding}` }));
      assert.equal(res.status, 413, res.text);
      assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      assert.deepEqual(await rowCounts(t), before);
    });

    it('rejects introspection by default', async () => {
      for (const query of ['{ __schema { types { name } } }', '{ __type(name: "Client") { name fields { name } } }']) {
        const res = await t.gql(token, query);
        assertGraphQLError(res, 400, 'BAD_USER_INPUT');
        assert.match(res.body.errors[0].message, /introspection/i);
        assert.doesNotMatch(res.text, /client_secret/);
      }
      // __typename is not introspection of the schema and stays available
      const typename = await t.gql(token, '{ __typename }');
      assert.equal(typename.status, 200);
      assert.deepEqual(typename.body.data, { __typename: 'Query' });
    });

    it(`rejects a document with more than ${MAX_ALIASES} aliases with 400, and runs one with exactly ${MAX_ALIASES}`, async () => {
      const over = await t.gql(token, aliasedQuery(MAX_ALIASES + 1));
      assertGraphQLError(over, 400, 'BAD_USER_INPUT');
      assert.match(over.body.errors[0].message, /aliases/);
      const at = await t.gql(token, aliasedQuery(MAX_ALIASES));
      assert.equal(at.status, 200, at.text);
      assert.equal(Object.keys(at.body.data).length, MAX_ALIASES);
    });

    it('rejects aliased mutations over the limit before running any of them', async () => {
      const before = await rowCounts(t);
      const doc = `mutation { ${Array.from({ length: MAX_ALIASES + 1 }, (_, i) => `c${i}: createClient(name: "alias-flood-${i}") { client_secret }`).join(' ')} }`;
      const res = await t.gql(token, doc);
      assertGraphQLError(res, 400, 'BAD_USER_INPUT');
      assert.deepEqual(await rowCounts(t), before);
    });

    it('rejects a document nested deeper than the limit with 400', async () => {
      // The credential schema is shallow; __Type.ofType recurses. Introspection is off here, so the
      // document is refused for that too, but the depth limit must be among the reasons (the
      // introspection-enabled app below shows the limit alone refuses it).
      const res = await t.gql(token, nestedTypeQuery(MAX_DEPTH + 1));
      assertGraphQLError(res, 400, 'BAD_USER_INPUT');
      assert.ok(
        res.body.errors.some((e: { message: string }) => /nested deeper than/.test(e.message)),
        res.text,
      );
    });
  });

  describe(`GraphQL over HTTP: introspection enabled (${engine})`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_GRAPHQL_INTROSPECTION: 'true' } });
      token = await t.rootToken();
    });
    after(() => t.close());

    it('answers __schema when GATEHOUSE_GRAPHQL_INTROSPECTION=true', async () => {
      const res = await t.gql(token, '{ __schema { queryType { name } mutationType { name } types { name } } }');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.errors, undefined);
      assert.equal(res.body.data.__schema.queryType.name, 'Query');
      assert.ok(res.body.data.__schema.types.some((ty: { name: string }) => ty.name === 'ClientWithSecret'));
    });

    it(`still enforces the depth limit (${MAX_DEPTH}) on an otherwise valid document`, async () => {
      const at = await t.gql(token, nestedTypeQuery(MAX_DEPTH));
      assert.equal(at.status, 200, at.text);
      assert.equal(at.body.errors, undefined);
      const over = await t.gql(token, nestedTypeQuery(MAX_DEPTH + 1));
      assertGraphQLError(over, 400, 'BAD_USER_INPUT');
      assert.equal(over.body.errors.length, 1, over.text);
      assert.match(over.body.errors[0].message, new RegExp(`nested deeper than ${MAX_DEPTH}`));
    });

    it('counts depth through fragment spreads', async () => {
      const k = MAX_DEPTH - 1; // __type + k x ofType + name = MAX_DEPTH + 1
      const frags = Array.from({ length: k }, (_, i) => `fragment F${i} on __Type { ofType { ${i + 1 < k ? `...F${i + 1}` : 'name'} } }`).join('\n');
      const res = await t.gql(token, `{ __type(name: "Client") { ...F0 } }\n${frags}`);
      assertGraphQLError(res, 400, 'BAD_USER_INPUT');
      assert.match(res.body.errors[0].message, /nested deeper than/);
    });
  });

  describe(`HTTP edge: request ids, health, readiness, metrics (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    it('puts an x-request-id on every response', async () => {
      const token = await t.rootToken();
      const responses = [
        await t.request({ method: 'GET', url: '/healthz' }),
        await t.request({ method: 'GET', url: '/no/such/route' }),
        await t.request({ method: 'GET', url: '/graphql' }),
        await t.request({ method: 'POST', url: '/graphql', headers: { 'content-type': 'application/json' }, payload: '{' }),
        await t.gql(undefined, '{ clients { id } }'),
        await t.gql(token, '{ clients { id } }'),
        await t.tokenResponse(ROOT_CLIENT_ID, 'wrong-secret-wrong-secret-wrong-secret'),
        await t.request({
          method: 'POST',
          url: '/graphql',
          headers: { 'content-type': 'application/json' },
          payload: 'x'.repeat(BODY_LIMIT + 10),
        }),
      ];
      const ids = new Set<string>();
      for (const res of responses) {
        const id = res.headers['x-request-id'];
        assert.equal(typeof id, 'string', `${res.status} ${res.text.slice(0, 200)}`);
        assert.match(id as string, UUID);
        ids.add(id as string);
      }
      assert.equal(ids.size, responses.length, 'each request gets its own id');
    });

    it('echoes a sane incoming X-Request-Id and replaces an insane one', async () => {
      for (const sane of ['abc-123', 'trace:4bf92f3577b34da6.a3ce929d0e0e4736', 'x'.repeat(64), 'A_b.c']) {
        const res = await t.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': sane } });
        assert.equal(res.headers['x-request-id'], sane);
      }
      for (const insane of ['has spaces in it', 'x'.repeat(200), 'x'.repeat(65), 'semi;colon', '<script>', 'line\tbreak', '']) {
        const res = await t.request({ method: 'GET', url: '/healthz', headers: { 'x-request-id': insane } });
        assert.match(res.headers['x-request-id'] as string, UUID, JSON.stringify(insane));
      }
    });

    it('GET /healthz answers 200 {status: "ok"}', async () => {
      const res = await t.request({ method: 'GET', url: '/healthz' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'ok' });
    });

    it('GET /readyz answers 200 with the engine', async () => {
      const res = await t.request({ method: 'GET', url: '/readyz' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'ready', database: engine });
    });

    it('GET /metrics is Prometheus text and counts issued tokens', async () => {
      const counter = (text: string) => {
        const m = /^gatehouse_tokens_issued_total\{grant_type="client_credentials"\} (\d+)$/m.exec(text);
        return m ? Number(m[1]) : 0;
      };
      const first = await t.request({ method: 'GET', url: '/metrics' });
      assert.equal(first.status, 200);
      assert.match(String(first.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const issued = counter(first.text);
      await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      const res = await t.request({ method: 'GET', url: '/metrics' });
      assert.match(res.text, /^# TYPE gatehouse_tokens_issued_total counter$/m);
      assert.equal(counter(res.text), issued + 1);
      assert.match(res.text, /^gatehouse_http_request_duration_seconds_count\{/m);
      // a rejected token request does not count as issued
      await t.tokenResponse(ROOT_CLIENT_ID, 'wrong-secret-wrong-secret-wrong-secret');
      assert.equal(counter((await t.request({ method: 'GET', url: '/metrics' })).text), issued + 1);
    });

    it('answers an unknown route with 404 JSON', async () => {
      const res = await t.request({ method: 'GET', url: '/no/such/route?client_secret=hidden' });
      assert.equal(res.status, 404);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.body.error, 'NOT_FOUND');
      assert.doesNotMatch(res.text, /hidden/, 'the query string is not echoed');
      const post = await t.request({ method: 'POST', url: '/nope', headers: { 'content-type': 'application/json' }, payload: {} });
      assert.equal(post.status, 404);
      assert.equal(post.body.error, 'NOT_FOUND');
    });
  });

  describe(`HTTP edge: the database goes away (${engine})`, () => {
    it('GET /readyz answers 503 once the database is closed, and other requests fail masked', async () => {
      const t = await startTestApp({ engine });
      let dbClosed = false;
      try {
        const token = await t.rootToken();
        assert.equal((await t.request({ method: 'GET', url: '/readyz' })).status, 200);
        // close the database only; the app keeps serving
        await t.db.close();
        dbClosed = true;
        const res = await t.request({ method: 'GET', url: '/readyz' });
        assert.equal(res.status, 503, res.text);
        assert.deepEqual(res.body, { status: 'unavailable', database: engine });
        assert.equal(res.headers['retry-after'], '5');
        // liveness is not readiness
        assert.equal((await t.request({ method: 'GET', url: '/healthz' })).status, 200);
        // a request that needs the database gets a masked internal error, never the driver's message
        const gql = await t.gql(token, '{ clients { id name } }');
        assert.equal(gql.status, 500, gql.text);
        assert.equal(gql.body.errors[0].extensions.code, 'INTERNAL');
        assert.equal(gql.body.errors[0].message, 'Internal server error');
        assert.deepEqual(gql.body.error, ['Internal server error']);
        assert.doesNotMatch(gql.text, /select|pglite|pool|closed|stack|\.ts|\.js/i);
        // the detail is in the log, joined to the request id
        const id = gql.headers['x-request-id'] as string;
        assert.ok(
          t.logs.some((l) => l.includes(id) && /"level":50/.test(l)),
          'the failure is logged at error level with the request id',
        );
        const tok = await t.tokenResponse(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
        assert.equal(tok.status, 500, tok.text);
        assert.deepEqual(tok.body, { error: 'server_error', error_description: 'internal error' });
      } finally {
        if (dbClosed) {
          // close the rest carefully: the database is closed already
          await t.service.app.close();
          await t.service.lastUsed.stop();
        } else {
          await t.close();
        }
      }
    });
  });
}

describe('formatGraphQLError (unit)', () => {
  it('masks a plain Error as INTERNAL and reports it to onInternal', () => {
    const original = new Error('relation "clients" does not exist at /srv/app/src/store/credentials.ts:42');
    const err = new GraphQLError(original.message, { originalError: original, path: ['clients'] });
    const seen: unknown[] = [];
    const out = formatGraphQLError(err, (e) => seen.push(e));
    assert.deepEqual(out, { message: 'Internal server error', path: ['clients'], extensions: { code: 'INTERNAL' } });
    assert.deepEqual(seen, [original]);
  });

  it('masks a TypeError (a bug in a resolver) the same way', () => {
    const original = new TypeError("Cannot read properties of undefined (reading 'id')");
    const err = new GraphQLError('x', { originalError: original });
    let calls = 0;
    const out = formatGraphQLError(err, () => calls++);
    assert.equal(out.message, 'Internal server error');
    assert.equal(out.extensions.code, 'INTERNAL');
    assert.equal(calls, 1);
    assert.equal(JSON.stringify(out).includes('reading'), false);
  });

  it('passes an AppError through with its code, message and public details', () => {
    const original = new AppError('RATE_LIMITED', 'Too many clients created', { retryAfter: 12 });
    const err = new GraphQLError(original.message, { originalError: original, path: ['createClient'] });
    let calls = 0;
    const out = formatGraphQLError(err, () => calls++);
    assert.deepEqual(out, {
      message: 'Too many clients created',
      path: ['createClient'],
      extensions: { code: 'RATE_LIMITED', retryAfter: 12 },
    });
    assert.equal(calls, 0);
  });

  it("gives graphql-js's own errors BAD_USER_INPUT and strips suggestions", () => {
    let calls = 0;
    const out = formatGraphQLError(new GraphQLError('Cannot query field "clinets" on type "Query". Did you mean "clients"?'), () => calls++);
    assert.deepEqual(out, { message: 'Cannot query field "clinets" on type "Query".', extensions: { code: 'BAD_USER_INPUT' } });
    const multi = formatGraphQLError(
      new GraphQLError('Unknown argument "nme" on field "Query.clients". Did you mean "name", "perPage", or\n"page"?'),
      () => calls++,
    );
    assert.equal(multi.message, 'Unknown argument "nme" on field "Query.clients".');
    assert.equal(calls, 0);
  });

  it('keeps an explicit extensions.code of a GraphQLError (e.g. from a scalar)', () => {
    const out = formatGraphQLError(new GraphQLError('bad time', { extensions: { code: 'BAD_USER_INPUT' } }), () => {});
    assert.equal(out.extensions.code, 'BAD_USER_INPUT');
  });
});
