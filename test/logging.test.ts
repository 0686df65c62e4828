// Secrets never reach the logs or the database in clear. A full flow runs through the app (token
// requests with every client-authentication method, right and wrong secrets, create, rotate,
// force-rotate, secrets in a query string, GraphQL errors); then every log line and a raw dump
// of every table are searched for every secret, token and Authorization header value.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { generateSecret, hashSecret } from '../src/credentials/secret.js';
import { keyId } from '../src/crypto/sealed-box.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, TEST_ENCRYPTION_KEY, startTestApp, type Response, type TestApp } from './helpers/app.js';
import { transportEngines } from './helpers/engines.js';
import { CREATE_CLIENT } from './helpers/seed.js';

const TOKEN_PATH = '/auth/api/v2/auth/token';
const ADMIN_PASSWORD = 'test-admin-password-1'; // set by startTestApp
const ROTATE = `mutation($id: ID!, $secret: String) { rotateClientSecret(id: $id, secret: $secret) { client_secret } }`;
const FORCE_ROTATE = `mutation($id: ID!) { forceRotateClientSecret(id: $id) { client_secret } }`;

const basic = (id: string, secret: string) => 'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');

for (const engine of transportEngines()) {
  describe(`secrets stay out of logs and storage (${engine})`, () => {
    let t: TestApp;
    /** values that must appear nowhere: secrets, passwords, tokens, Authorization header values */
    const secrets = new Map<string, string>();
    /** the request id of every request this flow sent */
    const requestIds: string[] = [];
    let seq = 0;

    const send = async (opts: { method: string; url: string; headers?: Record<string, string>; payload?: string | object }) => {
      const id = `logflow-${engine}-${++seq}`;
      requestIds.push(id);
      const res = await t.request({ ...opts, headers: { ...opts.headers, 'x-request-id': id } });
      assert.equal(res.headers['x-request-id'], id);
      return res;
    };
    const gql = (token: string, query: string, variables?: Record<string, unknown>, url = '/graphql') => {
      secrets.set(`Authorization: Bearer …${token.slice(-8)}`, `Bearer ${token}`);
      return send({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        payload: { query, ...(variables ? { variables } : {}) },
      });
    };
    const keepToken = (label: string, res: Response): string => {
      assert.equal(res.status, 200, res.text);
      const token = res.body.access_token as string;
      secrets.set(label, token);
      // a token cut into pieces would still leak its claims and signature
      const [, payload, signature] = token.split('.');
      secrets.set(`${label} payload`, payload!);
      secrets.set(`${label} signature`, signature!);
      return token;
    };
    const keepSecret = (label: string, secret: string) => {
      secrets.set(label, secret);
      // a secret with its prefix cut off, or a slice of it, is still a leak
      secrets.set(`${label} (middle)`, secret.slice(15, 35));
    };

    before(async () => {
      t = await startTestApp({ engine });
      keepSecret('bootstrap client secret', ROOT_CLIENT_SECRET);
      secrets.set('bootstrap admin password', ADMIN_PASSWORD);

      // 1. HTTP Basic, JSON body
      const rootAuth = basic(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET);
      secrets.set('Authorization: Basic (root)', rootAuth);
      secrets.set('Basic credentials (root)', rootAuth.slice('Basic '.length));
      const rootToken = keepToken(
        'root access token',
        await send({
          method: 'POST',
          url: TOKEN_PATH,
          headers: { authorization: rootAuth, 'content-type': 'application/json' },
          payload: { grant_type: 'client_credentials' },
        }),
      );

      // 2. createClient
      const created = await gql(rootToken, CREATE_CLIENT, { name: 'log-flow' });
      assert.equal(created.status, 200, created.text);
      const client = created.body.data.createClient.client;
      const s1 = created.body.data.createClient.client_secret as string;
      keepSecret('created secret', s1);

      // 3. client_secret_post in a JSON body and in a form body
      keepToken(
        'token (JSON client_secret_post)',
        await send({
          method: 'POST',
          url: TOKEN_PATH,
          headers: { 'content-type': 'application/json' },
          payload: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: s1 },
        }),
      );
      keepToken(
        'token (form client_secret_post)',
        await send({
          method: 'POST',
          url: TOKEN_PATH,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id, client_secret: s1 }).toString(),
        }),
      );

      // 4. wrong secrets, by each method
      const wrong = generateSecret();
      keepSecret('wrong secret', wrong);
      const wrongAuth = basic(client.client_id, wrong);
      secrets.set('Authorization: Basic (wrong)', wrongAuth);
      const wrongRequests: { headers: Record<string, string>; payload: string | object }[] = [
        { headers: { authorization: wrongAuth, 'content-type': 'application/json' }, payload: { grant_type: 'client_credentials' } },
        {
          headers: { 'content-type': 'application/json' },
          payload: { grant_type: 'client_credentials', client_id: client.client_id, client_secret: wrong },
        },
        {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `grant_type=client_credentials&client_id=${client.client_id}&client_secret=${wrong}`,
        },
      ];
      for (const req of wrongRequests) {
        const res = await send({ method: 'POST', url: TOKEN_PATH, ...req });
        assert.equal(res.status, 401, res.text);
        assert.equal(res.body.error, 'invalid_client');
      }
      // a malformed body that carries a secret (parsers like to quote what they could not read)
      const malformed = await send({
        method: 'POST',
        url: TOKEN_PATH,
        headers: { 'content-type': 'application/json' },
        payload: `{"grant_type":"client_credentials","client_id":"${client.client_id}","client_secret":"${s1}"`,
      });
      assert.equal(malformed.status, 400, malformed.text);
      // both methods at once (invalid_request)
      const both = await send({
        method: 'POST',
        url: TOKEN_PATH,
        headers: { authorization: basic(client.client_id, s1), 'content-type': 'application/json' },
        payload: { grant_type: 'client_credentials', client_secret: s1 },
      });
      assert.equal(both.status, 400, both.text);
      secrets.set('Authorization: Basic (created)', basic(client.client_id, s1));

      // 5. rotateClientSecret: first with a wrong current secret written into the document (a GraphQL
      //    error), then properly
      const badRotate = await gql(rootToken, `mutation { rotateClientSecret(id: "${client.id}", secret: "${wrong}") { client_secret } }`);
      assert.equal(badRotate.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', badRotate.text);
      const rotated = await gql(rootToken, ROTATE, { id: client.id, secret: s1 });
      assert.equal(rotated.status, 200, rotated.text);
      const s2 = rotated.body.data.rotateClientSecret.client_secret as string;
      keepSecret('rotated secret', s2);

      // 6. forceRotateClientSecret
      const forced = await gql(rootToken, FORCE_ROTATE, { id: client.id });
      assert.equal(forced.status, 200, forced.text);
      const s3 = forced.body.data.forceRotateClientSecret.client_secret as string;
      keepSecret('force-rotated secret', s3);
      const s3Auth = basic(client.client_id, s3);
      secrets.set('Authorization: Basic (force-rotated)', s3Auth);
      const clientToken = keepToken(
        'token (after force-rotate)',
        await send({
          method: 'POST',
          url: TOKEN_PATH,
          headers: { authorization: s3Auth, 'content-type': 'application/json' },
          payload: { grant_type: 'client_credentials' },
        }),
      );

      // 7. secrets in the query string, on several routes
      const query = `client_id=${client.client_id}&client_secret=${s3}&access_token=${clientToken}`;
      const inQuery = await send({
        method: 'POST',
        url: `${TOKEN_PATH}?grant_type=client_credentials&${query}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'grant_type=client_credentials',
      });
      assert.equal(inQuery.status, 401, inQuery.text);
      assert.equal((await send({ method: 'GET', url: `/healthz?${query}` })).status, 200);
      assert.equal((await send({ method: 'GET', url: `/no-such-route?${query}` })).status, 404);
      const gqlWithQuery = await gql(clientToken, '{ clients { id } }', undefined, `/graphql?${query}`);
      assert.equal(gqlWithQuery.status, 200, gqlWithQuery.text);

      // 8. GraphQL errors that echo what was sent: a syntax error and a variable of the wrong type
      //    (application/json: 200 with errors and no data, as GraphQL over HTTP asks)
      const syntax = await gql(rootToken, `mutation { rotateClientSecret(id: "${client.id}", secret: "${s3}" { client_secret } }`);
      assert.equal(syntax.status, 200, syntax.text);
      assert.equal(syntax.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', syntax.text);
      const typed = await gql(rootToken, CREATE_CLIENT, { name: { secret: s3 } });
      assert.equal(typed.status, 200, typed.text);
      assert.equal(typed.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', typed.text);
      // a bearer token that does not verify
      const forged = `${clientToken.slice(0, -8)}AAAAAAAA`;
      secrets.set('forged bearer token', forged);
      const unauth = await gql(forged, '{ clients { id } }');
      assert.equal(unauth.status, 401, unauth.text);
      // a revoked token after deleting the client
      const deleted = await gql(rootToken, `mutation($id: ID!) { deleteClient(id: $id) { id } }`, { id: client.id });
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal((await gql(clientToken, '{ clients { id } }')).status, 401);
    });
    after(() => t.close());

    it('the flow was logged: every request id appears in the logs', () => {
      assert.ok(t.logs.length >= requestIds.length, `only ${t.logs.length} log lines`);
      for (const id of requestIds) {
        assert.ok(
          t.logs.some((line) => line.includes(`"${id}"`)),
          `request ${id} left no log line; is request logging off?`,
        );
      }
    });

    it('no log line contains a secret, password, access token or Authorization header value', () => {
      assert.ok(secrets.size > 20, 'the flow collected the values to search for');
      for (const [label, value] of secrets) {
        assert.ok(value.length >= 16, `${label} is too short to search for`);
        const hit = t.logs.find((line) => line.includes(value));
        assert.equal(hit, undefined, `${label} appears in the log: ${hit?.slice(0, 300)}`);
      }
    });

    it('an answered request is one line of a fixed shape: its id, method, path, address, status and time, nothing else', () => {
      const completed = t.logs.map((line) => JSON.parse(line)).filter((l) => l.msg === 'request completed');
      assert.ok(completed.length >= requestIds.length, `only ${completed.length} request lines`);
      for (const id of requestIds) assert.equal(completed.filter((l) => l.reqId === id).length, 1, `request ${id}: one line`);
      for (const l of completed) {
        assert.deepEqual(Object.keys(l).sort(), ['hostname', 'level', 'msg', 'pid', 'req', 'reqId', 'res', 'responseTime', 'time']);
        assert.deepEqual(Object.keys(l.req).sort(), ['method', 'path', 'remoteAddress']);
        assert.doesNotMatch(l.req.path, /\?/);
        assert.deepEqual(Object.keys(l.res), ['statusCode']);
      }
    });

    it('no log line carries a query string or an authorization header at all', () => {
      for (const line of t.logs) {
        assert.doesNotMatch(line, /client_secret=/, line);
        assert.doesNotMatch(line, /access_token=/, line);
        assert.doesNotMatch(line, /"authorization":"(Basic|Bearer)/i, line);
      }
    });

    it('no table holds a secret, password or token in clear', async () => {
      const tables = await sql<{ table_name: string }>`
        select table_name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.db.kysely);
      const names = tables.rows.map((r) => r.table_name).sort();
      for (const expected of ['clients', 'client_secrets', 'users', 'signing_keys', 'audit_events']) {
        assert.ok(names.includes(expected), `table ${expected} is dumped (found: ${names.join(', ')})`);
      }
      let dumped = 0;
      for (const table of names) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(t.db.kysely);
        dumped += rows.rows.length;
        const dump = JSON.stringify(rows.rows);
        for (const [label, value] of secrets) {
          assert.equal(dump.includes(value), false, `${label} is stored in clear in table ${table}`);
        }
        // nor as hex or base64 of the raw bytes
        for (const [label, value] of secrets) {
          if (!label.endsWith('secret') && label !== 'bootstrap admin password') continue;
          assert.equal(dump.includes(Buffer.from(value).toString('hex')), false, `${label} is stored as hex in ${table}`);
          assert.equal(dump.includes(Buffer.from(value).toString('base64')), false, `${label} is stored as base64 in ${table}`);
        }
      }
      assert.ok(dumped > 10, 'the dump saw the rows the flow wrote');
    });

    it('stores client secrets only as SHA-256 digests with a short hint, and the password as argon2id', async () => {
      const rows = await t.db.kysely.selectFrom('client_secrets').select(['secret_hash', 'hint']).execute();
      for (const r of rows) {
        assert.equal(Buffer.from(r.secret_hash).length, 32);
        assert.match(r.hint, /^(gatehouse_cs_)?….{4}$/);
      }
      for (const label of ['bootstrap client secret', 'created secret', 'rotated secret', 'force-rotated secret']) {
        const secret = secrets.get(label)!;
        const row = await t.db.kysely.selectFrom('client_secrets').select(['hint']).where('secret_hash', '=', hashSecret(secret)).executeTakeFirst();
        assert.ok(row, `the digest of the ${label} is stored`);
        assert.ok(row.hint.endsWith(secret.slice(-4)));
      }
      const users = await t.db.kysely.selectFrom('users').select('password_hash').execute();
      assert.ok(users.length >= 1);
      for (const u of users) assert.match(u.password_hash ?? '', /^\$argon2id\$/);
    });

    it('does not store the private signing key in clear', async () => {
      const keys = await t.db.kysely.selectFrom('signing_keys').select(['private_jwk_sealed', 'public_jwk']).execute();
      assert.ok(keys.length >= 1);
      for (const k of keys) {
        const sealingKey = keyId(Buffer.from(TEST_ENCRYPTION_KEY, 'hex'));
        assert.ok(k.private_jwk_sealed.startsWith(`v2.${sealingKey}.`), 'sealed with a versioned scheme, naming the key');
        assert.throws(() => JSON.parse(k.private_jwk_sealed));
        assert.doesNotMatch(k.private_jwk_sealed, /"d"|"kty"|"crv"/);
        const publicJwk = (typeof k.public_jwk === 'string' ? JSON.parse(k.public_jwk) : k.public_jwk) as Record<string, unknown>;
        assert.equal(publicJwk.d, undefined, 'the public JWK has no private member');
        assert.equal(publicJwk.kty, 'EC');
      }
    });
  });
}
