// The HTTP edge of the GraphQL interfaces and the operational endpoints: bad input gets a clear
// answer (status, code) and changes nothing; media types, methods and statuses follow GraphQL over
// HTTP (docs/graphql.md); no response is cached; internal errors are masked; request ids,
// health, readiness and metrics behave as CONTRACT.md says.
import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { GraphQLError } from 'graphql';
import { ROLE_IDS } from '../../src/access/roles.js';
import { AppError } from '../../src/errors.js';
import { formatGraphQLError } from '../../src/graphql/errors.js';
import { BODY_LIMIT } from '../../src/app.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { signedInUser } from '../helpers/pages.js';
import { CREATE_CLIENT, createClient, rowCounts } from '../helpers/seed.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';

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

/**
 * A document or its variables refused before running, as each media type answers it (GraphQL over
 * HTTP): application/json with 200, application/graphql-response+json with 400; never data.
 */
async function assertRefusedBeforeRunning(send: (headers: Record<string, string>) => Promise<Response>, code = 'BAD_USER_INPUT'): Promise<Response> {
  const legacy = await send({ accept: 'application/json' });
  assertGraphQLError(legacy, 200, code);
  assert.match(String(legacy.headers['content-type']), /^application\/json; charset=utf-8$/);
  const modern = await send({ accept: GRAPHQL_RESPONSE_JSON });
  assertGraphQLError(modern, 400, code);
  assert.match(String(modern.headers['content-type']), /^application\/graphql-response\+json; charset=utf-8$/);
  assert.deepEqual(modern.body, legacy.body, 'the two media types differ only in status');
  return legacy;
}

for (const engine of transportEngines()) {
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

    it('answers a malformed JSON body with 400 and writes nothing, whatever the media type', async () => {
      const before = await rowCounts(t);
      for (const accept of ['application/json', GRAPHQL_RESPONSE_JSON]) {
        const res = await post('{"query": "mutation { createClient(name: \\"x\\") { client_secret } }"', { accept });
        assertGraphQLError(res, 400, 'BAD_USER_INPUT');
        assert.match(res.body.errors[0].message, /malformed/i);
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers JSON that is not {query: string} with 400 BAD_USER_INPUT, batches included', async () => {
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
        JSON.stringify({ query: '{ clients { id } }', extensions: 'x' }),
      ]) {
        const res = await post(payload);
        assertGraphQLError(res, 400, 'BAD_USER_INPUT');
      }
      const batch = await post(JSON.stringify([{ query: '{ clients { id } }' }, { query: '{ clients { id } }' }]));
      assert.match(batch.body.errors[0].message, /Batched requests are not supported/);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers a GraphQL syntax error with BAD_USER_INPUT: 200 as application/json, 400 as application/graphql-response+json', async () => {
      const before = await rowCounts(t);
      const res = await assertRefusedBeforeRunning((headers) =>
        t.gql(token, 'mutation { createClient(name: "syntax" { client_secret } }', undefined, { headers }),
      );
      assert.match(res.body.errors[0].message, /^Syntax Error/);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('refuses unknown fields, arguments and types before running anything', async () => {
      const before = await rowCounts(t);
      for (const query of [
        '{ clinets { id } }',
        '{ clients { id naem } }',
        '{ clients(nme: "x") { id } }',
        'query($n: Strin) { clients(name: $n) { id } }',
        'mutation { createClinet(name: "typo") { client_secret } }',
      ]) {
        await assertRefusedBeforeRunning((headers) => t.gql(token, query, undefined, { headers }));
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('refuses variables of the wrong type before running: BAD_USER_INPUT and no data', async () => {
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
        const res = await assertRefusedBeforeRunning((headers) => t.gql(token, CREATE_CLIENT, variables, { headers }));
        assert.match(res.body.errors[0].message, /^Variable "\$(name|roles)"/, JSON.stringify(variables));
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('coerces roles: "x" to ["x"] as the GraphQL spec requires, and then refuses the unknown role', async () => {
      // Input coercion wraps a single value in a list (GraphQL spec, List input coercion), so this
      // is not a type error; the resolver still answers clearly and writes nothing.
      const before = await rowCounts(t);
      for (const accept of ['application/json', GRAPHQL_RESPONSE_JSON]) {
        const res = await t.gql(token, CREATE_CLIENT, { name: 'single-role', roles: 'x' }, { headers: { accept } });
        assert.equal(res.status, 200, `${accept}: the operation ran, so 200 for both media types: ${res.text}`);
        assert.equal(res.body.data.createClient, null);
        assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('runs a query sent with GET (parameters in the query string), never a mutation', async () => {
      const before = await rowCounts(t);
      const get = (params: Record<string, string>, accept?: string) =>
        t.request({
          method: 'GET',
          url: `/graphql?${new URLSearchParams(params)}`,
          headers: { authorization: `Bearer ${token}`, ...(accept ? { accept } : {}) },
        });
      const query = await get({ query: 'query($n: String) { clients(name: $n) { name } }', variables: JSON.stringify({ n: 'root%' }) });
      assert.equal(query.status, 200, query.text);
      assert.equal(query.body.errors, undefined, query.text);
      assert.ok(Array.isArray(query.body.data.clients));

      const mutations: Record<string, string>[] = [
        { query: 'mutation { createClient(name: "via-get") { client_secret } }' },
        // the operation GET would run is the one operationName names
        { query: 'query Q { __typename } mutation M { createClient(name: "via-get-named") { client_secret } }', operationName: 'M' },
      ];
      for (const params of mutations) {
        for (const accept of ['application/json', GRAPHQL_RESPONSE_JSON]) {
          const res = await get(params, accept);
          assertGraphQLError(res, 405, 'BAD_USER_INPUT');
          assert.equal(res.headers.allow, 'POST');
        }
      }
      const named = await get({ query: mutations[1]!.query!, operationName: 'Q' });
      assert.deepEqual(named.body, { data: { __typename: 'Query' } });

      for (const bad of [
        { query: '{ __typename }', variables: '{not json' },
        { query: '{ __typename }', variables: '[1]' },
      ]) {
        assertGraphQLError(await get(bad), 400, 'BAD_USER_INPUT');
      }
      const repeated = await t.request({
        method: 'GET',
        url: '/graphql?query=%7B__typename%7D&query=%7B__typename%7D',
        headers: { authorization: `Bearer ${token}` },
      });
      assertGraphQLError(repeated, 400, 'BAD_USER_INPUT');
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers other methods with 405 and Allow: GET, POST, without executing anything', async () => {
      for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) {
        const withBody = method !== 'HEAD' && method !== 'OPTIONS';
        const res = await t.request({
          method,
          url: `/graphql?query=${encodeURIComponent('{ clients { id } }')}`,
          headers: { authorization: `Bearer ${token}`, ...(withBody ? { 'content-type': 'application/json' } : {}) },
          ...(withBody ? { payload: { query: '{ clients { id } }' } } : {}),
        });
        assert.equal(res.status, 405, `${method}: ${res.text}`);
        assert.equal(res.headers.allow, 'GET, POST', method);
        if (method !== 'HEAD') assertGraphQLError(res, 405, 'BAD_USER_INPUT');
      }
    });

    it('does not execute a POST sent as text/plain, form or multipart (the content types a page on another site may send)', async () => {
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
        assertGraphQLError(res, 415, 'BAD_USER_INPUT');
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers an Accept header it cannot satisfy with 406, and negotiates the rest', async () => {
      const before = await rowCounts(t);
      const mutation = 'mutation { createClient(name: "not-acceptable") { client_secret } }';
      for (const accept of ['text/html', 'application/xml, text/*;q=0.5', `${GRAPHQL_RESPONSE_JSON};q=0, application/json;q=0`]) {
        const res = await t.gql(token, mutation, undefined, { headers: { accept } });
        assertGraphQLError(res, 406, 'BAD_USER_INPUT');
        assert.match(String(res.headers['content-type']), /^application\/json/);
      }
      assert.deepEqual(await rowCounts(t), before);
      const cases: [string, string][] = [
        [`${GRAPHQL_RESPONSE_JSON}, application/json;q=0.9`, GRAPHQL_RESPONSE_JSON],
        [`application/json, ${GRAPHQL_RESPONSE_JSON}`, 'application/json'],
        [`application/json;q=0.5, ${GRAPHQL_RESPONSE_JSON}`, GRAPHQL_RESPONSE_JSON],
        ['*/*', 'application/json'],
        ['application/*', 'application/json'],
        [`*/*;q=0.8, ${GRAPHQL_RESPONSE_JSON}`, GRAPHQL_RESPONSE_JSON],
        ['text/html,application/xhtml+xml,*/*;q=0.8', 'application/json'],
      ];
      for (const [accept, expected] of cases) {
        const res = await t.gql(token, '{ __typename }', undefined, { headers: { accept } });
        assert.equal(res.status, 200, `${accept}: ${res.text}`);
        assert.equal(String(res.headers['content-type']), `${expected}; charset=utf-8`, accept);
        assert.equal(res.headers.vary, 'Accept');
      }
    });

    it('answers a body over 1 MiB with 413 and writes nothing', async () => {
      const before = await rowCounts(t);
      const padding = 'x'.repeat(BODY_LIMIT + 1);
      const res = await post(JSON.stringify({ query: `mutation { createClient(name: "huge") { client_secret } } # ${padding}` }));
      assert.equal(res.status, 413, res.text);
      assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers a body over 1 MiB that is not even JSON with 413, not 400: its size is judged first', async () => {
      const res = await post(`{${'x'.repeat(BODY_LIMIT + 1)}`);
      assert.equal(res.status, 413, res.text.slice(0, 300));
    });

    it('keeps 401 with WWW-Authenticate for a missing or bad token, whatever the media type', async () => {
      for (const accept of ['application/json', GRAPHQL_RESPONSE_JSON]) {
        const missing = await t.gql(undefined, '{ __typename }', undefined, { headers: { accept } });
        assertGraphQLError(missing, 401, 'UNAUTHENTICATED');
        assert.equal(missing.headers['www-authenticate'], 'Bearer realm="gatehouse"');
        const bad = await t.gql('not-a-token', '{ __typename }', undefined, { headers: { accept } });
        assertGraphQLError(bad, 401, 'UNAUTHENTICATED');
        assert.match(String(bad.headers['www-authenticate']), /^Bearer realm="gatehouse", error="invalid_token"$/);
        assert.equal(String(bad.headers['content-type']), `${accept}; charset=utf-8`);
      }
    });
  });

  describe(`GraphQL over HTTP: no response is cached (${engine})`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine });
      token = await t.rootToken();
    });
    after(() => t.close());

    const assertNoStore = (res: Response, what: string) => {
      assert.equal(res.headers['cache-control'], 'no-store', what);
      assert.equal(res.headers.pragma, 'no-cache', what);
    };

    it('sends Cache-Control: no-store and Pragma: no-cache with every response that carries a client secret', async () => {
      const created = await t.gql(token, CREATE_CLIENT, { name: 'no-store' }, { tenant: '1' });
      assert.match(created.body.data.createClient.client_secret, /^gatehouse_cs_/);
      assertNoStore(created, 'createClient');
      const { id, secret } = { id: created.body.data.createClient.client.id, secret: created.body.data.createClient.client_secret };
      const rotated = await t.gql(token, `mutation($id: ID!, $s: String) { rotateClientSecret(id: $id, secret: $s) { client_secret } }`, {
        id,
        s: secret,
      });
      assert.match(rotated.body.data.rotateClientSecret.client_secret, /^gatehouse_cs_/);
      assertNoStore(rotated, 'rotateClientSecret');
      const forced = await t.gql(token, `mutation($id: ID!) { forceRotateClientSecret(id: $id) { client_secret } }`, { id });
      assert.match(forced.body.data.forceRotateClientSecret.client_secret, /^gatehouse_cs_/);
      assertNoStore(forced, 'forceRotateClientSecret');
    });

    it('sends them with errors and with answers of the tenant interface too', async () => {
      const other = await createClient(t, token, 'no-store-other');
      const responses: [string, Response][] = [
        ['a GraphQL error', await t.gql(token, '{ clinets { id } }')],
        [
          'a resolver error',
          await t.gql(token, `mutation($id: ID!) { rotateClientSecret(id: $id, secret: "wrong") { client_secret } }`, { id: other.id }),
        ],
        ['401', await t.gql(undefined, '{ clients { id } }')],
        ['405', await t.request({ method: 'PUT', url: '/graphql' })],
        ['406', await t.gql(token, '{ __typename }', undefined, { headers: { accept: 'text/html' } })],
        [
          '415',
          await t.request({
            method: 'POST',
            url: '/graphql',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
            payload: '{}',
          }),
        ],
        ['GET', await t.request({ method: 'GET', url: '/graphql?query=%7B__typename%7D', headers: { authorization: `Bearer ${token}` } })],
        ['tenant interface', await t.gql(token, '{ tenants { count } }', undefined, { path: '/public/query' })],
        ['tenant interface error', await t.gql(token, '{ tenants { cuont } }', undefined, { path: '/query' })],
      ];
      for (const [what, res] of responses) assertNoStore(res, `${what}: ${res.status}`);
    });
  });

  describe(`HTTP edge: request ids, health, readiness, metrics (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_METRICS_PORT: '9464' } });
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

    it('GET /metrics (on the metrics listener) is Prometheus text and counts issued tokens', async () => {
      const scrape = async () => {
        const res = await t.service.metricsApp!.inject({ method: 'GET', url: '/metrics' });
        return { status: res.statusCode, type: String(res.headers['content-type']), text: res.body };
      };
      const counter = (text: string) => {
        const m = /^gatehouse_tokens_issued_total\{grant_type="client_credentials"\} (\d+)$/m.exec(text);
        return m ? Number(m[1]) : 0;
      };
      const first = await scrape();
      assert.equal(first.status, 200);
      assert.match(first.type, /^text\/plain; version=0\.0\.4/);
      const issued = counter(first.text);
      await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      const res = await scrape();
      assert.match(res.text, /^# TYPE gatehouse_tokens_issued_total counter$/m);
      assert.equal(counter(res.text), issued + 1);
      // requests of the public listener are counted
      assert.match(
        res.text,
        /^gatehouse_http_request_duration_seconds_count\{method="POST",route="\/auth\/api\/v2\/auth\/token",status="200"\} [1-9]/m,
      );
      // a rejected token request does not count as issued
      await t.tokenResponse(ROOT_CLIENT_ID, 'wrong-secret-wrong-secret-wrong-secret');
      assert.equal(counter((await scrape()).text), issued + 1);
      // the metrics listener serves /metrics and nothing else
      assert.equal((await t.service.metricsApp!.inject({ method: 'GET', url: '/healthz' })).statusCode, 404);
    });

    it('the public listener does not serve /metrics, with or without GATEHOUSE_METRICS_PORT', async () => {
      const res = await t.request({ method: 'GET', url: '/metrics' });
      assert.equal(res.status, 404);
      assert.doesNotMatch(res.text, /gatehouse_tokens_issued_total/);
      const plain = await startTestApp({ engine });
      try {
        assert.equal(plain.service.metricsApp, undefined, 'no metrics listener without GATEHOUSE_METRICS_PORT');
        const unset = await plain.request({ method: 'GET', url: '/metrics' });
        assert.equal(unset.status, 404);
        assert.doesNotMatch(unset.text, /gatehouse_tokens_issued_total/);
      } finally {
        await plain.close();
      }
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

  describe(`HTTP edge: a resolver fails (${engine})`, () => {
    it('answers 200 with the field null and a masked INTERNAL beside the rest of data, and logs the detail under the request id', async () => {
      const t = await startTestApp({ engine });
      try {
        const token = await t.rootToken();
        // the store fails the way a driver does: its message names the SQL and a source file
        const leak = 'relation "users" does not exist: select * from users where id = $1 at /srv/gatehouse/src/store/users.ts:42';
        const findUser = mock.method(t.service.store.users, 'findUser', async () => {
          throw new Error(leak);
        });
        const query = '{ me { kind client_id } user(id: "00000000-0000-4000-8000-000000000001") { id email } }';
        for (const accept of ['application/json', GRAPHQL_RESPONSE_JSON]) {
          const res = await t.gql(token, query, undefined, { headers: { accept } });
          assert.equal(res.status, 200, `${accept}: ${res.text}`);
          assert.deepEqual(res.body.data, { me: { kind: 'client', client_id: ROOT_CLIENT_ID }, user: null }, 'the other field still answers');
          assert.equal(res.body.errors.length, 1, res.text);
          assert.equal(res.body.errors[0].extensions.code, 'INTERNAL');
          assert.equal(res.body.errors[0].message, 'Internal server error');
          assert.deepEqual(res.body.errors[0].path, ['user']);
          assert.deepEqual(res.body.error, ['Internal server error']);
          assert.doesNotMatch(res.text, /select|relation|users\.ts|\/srv|stack|\.ts\b|\.js\b/i, 'neither SQL nor a path reaches the caller');
          // the detail is in an error-level log line carrying the response's request id
          const id = res.headers['x-request-id'] as string;
          assert.match(id, /.+/);
          const line = t.logs.find((l) => l.includes(id) && /"level":50/.test(l) && l.includes('resolver failed'));
          assert.ok(line, `an error line "resolver failed" with request id ${id}`);
          assert.ok(line.includes('relation \\"users\\" does not exist'), 'the log keeps what the caller is not told');
        }
        assert.equal(findUser.mock.callCount(), 2, 'the resolver ran (the failure is inside the operation)');
      } finally {
        await t.close();
      }
    });
  });

  describe(`GraphQL over HTTP: the console's session cookie is not a credential (${engine})`, () => {
    it('answers a GET or POST that brings only the session cookie with 401 and runs nothing', async () => {
      const t = await startTestApp({ engine });
      try {
        const { client: browser } = await signedInUser(t, 'admin@cookie.test', { roles: [ROLE_IDS.Administrator] });
        assert.ok(browser.cookie, 'a console session');
        const cookie = `gatehouse_session=${browser.cookie}`;
        assert.equal((await browser.get('/console/account')).status, 200, 'the cookie is good for the console');
        const listClients = mock.method(t.service.store.credentials, 'listClients');
        const me = mock.method(t.service.services.users, 'identity');
        const search = mock.method(t.service.services.tenants, 'search');
        const before = await rowCounts(t);
        const mutation = 'mutation { createClient(name: "by-cookie") { client_secret } }';
        const sends: [string, () => Promise<Response>][] = [
          [
            'GET',
            () => t.request({ method: 'GET', url: `/graphql?query=${encodeURIComponent('{ clients { id } me { id } }')}`, headers: { cookie } }),
          ],
          [
            'POST query',
            () =>
              t.request({
                method: 'POST',
                url: '/graphql',
                headers: { cookie, 'content-type': 'application/json' },
                payload: { query: '{ clients { id } }' },
              }),
          ],
          [
            'POST mutation',
            () =>
              t.request({ method: 'POST', url: '/graphql', headers: { cookie, 'content-type': 'application/json' }, payload: { query: mutation } }),
          ],
          [
            'tenant interface',
            () =>
              t.request({
                method: 'POST',
                url: '/query',
                headers: { cookie, 'content-type': 'application/json' },
                payload: { query: '{ tenants { results { id } } }' },
              }),
          ],
        ];
        for (const [what, send] of sends) {
          const res = await send();
          assertGraphQLError(res, 401, 'UNAUTHENTICATED');
          assert.equal(res.headers['www-authenticate'], 'Bearer realm="gatehouse"', what);
        }
        assert.equal(listClients.mock.callCount(), 0, 'no resolver ran');
        assert.equal(me.mock.callCount(), 0, 'no resolver ran');
        assert.equal(search.mock.callCount(), 0, 'no resolver ran');
        assert.deepEqual(await rowCounts(t), before, 'nothing written');
      } finally {
        await t.close();
      }
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
        // (the root client is in this process's cache by now and may still be served: a client
        // never seen needs the database)
        const tok = await t.tokenResponse('never-seen-client', ROOT_CLIENT_SECRET);
        assert.equal(tok.status, 500, tok.text);
        assert.deepEqual(tok.body, { error: 'server_error', error_description: 'internal error' });
        // the device-authorization endpoint too: a fault of the server, not a malformed request
        const device = await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/device/code',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'client_id=gatehouse-cli&login_hint=someone%40example.com',
        });
        assert.equal(device.status, 500, device.text);
        assert.deepEqual(device.body, { error: 'server_error', error_description: 'internal error' });
        const deviceId = device.headers['x-request-id'] as string;
        assert.ok(t.logs.some((l) => l.includes(deviceId) && /"level":50/.test(l) && l.includes('device authorization failed')));
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
