// Safe retries with Idempotency-Key (docs/graphql.md "Safe retries: Idempotency-Key"; items 54 and
// 122 of docs/security.md), on both engines, through the GraphQL interfaces: a retried mutation
// with the same key and request has one effect and hears the first answer again (a one-time
// secret in it only by the caller that sent it); the same key with another request is 422; a
// key still running is 409 with Retry-After; a change committed whose answer was lost is never
// run again; a request that changed nothing and should be retried frees its key. The two-process
// race is test/reliability/idempotency-two-processes.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { accessOf, callerKey, fingerprint, LEASE_SECONDS } from '../../src/idempotency/model.js';
import { purgeExpired } from '../../src/maintenance/purge.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { CREATE_CLIENT, clientWithRoles, rowCounts } from '../helpers/seed.js';
import { createTenant, TENANT_PATH } from '../helpers/tenants.js';

const CREATE_TENANT = 'mutation($t: TenantCreateInput!) { createTenant(newTenant: $t) { id name } }';
const CREATE_USER = 'mutation($e: String!, $r: [ID!]) { createUser(email: $e, roles: $r) { user { id } setup_url } }';
const CREATE_SSO = 'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id name } }';
const ROTATE = 'mutation($id: ID!, $s: String!) { rotateClientSecret(id: $id, secret: $s) { client_secret } }';

for (const engine of engines()) {
  describe(`Idempotency-Key on mutations (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_CLIENT_CREATE_LIMIT: '3' } });
    });
    after(() => t.close());

    const keyed = async (
      key: string,
      query: string,
      variables: Record<string, unknown>,
      opts: { path?: string; tenant?: string; token?: string } = {},
    ) =>
      t.gql(opts.token ?? (await t.rootToken()), query, variables, {
        ...(opts.path ? { path: opts.path } : {}),
        ...(opts.tenant ? { tenant: opts.tenant } : {}),
        headers: { 'idempotency-key': key },
      });
    const count = async (table: string, where = sql`true`) =>
      Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(t.db.kysely)).rows[0]!.n);
    const keyRows = () => count('idempotency_keys');
    const ok = (r: Response) => {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.errors, undefined, r.text);
      return r.body.data;
    };

    it('a retried createClient hears the first answer, its secret included, and makes one client counted once against the hourly limit', async () => {
      const tenant = await createTenant(t, '1');
      const key = randomUUID();
      const first = await keyed(key, CREATE_CLIENT, { name: 'retried' }, { tenant });
      const made = ok(first).createClient;
      assert.equal(first.headers['idempotent-replayed'], undefined);
      for (let i = 0; i < 4; i++) {
        const again = await keyed(key, CREATE_CLIENT, { name: 'retried' }, { tenant });
        assert.equal(again.status, 200);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.deepEqual(again.body, first.body, 'the same answer, the one-time secret included');
      }
      assert.equal(await count('clients', sql`tenant_id = ${tenant}`), 1);
      assert.equal(await count('audit_events', sql`action = 'client.created' and target_id = ${made.client.id}`), 1, 'audited once');
      // the limit is 3 an hour: the replays did not count, so two more creations go through
      ok(await keyed(randomUUID(), CREATE_CLIENT, { name: 'second' }, { tenant }));
      ok(await keyed(randomUUID(), CREATE_CLIENT, { name: 'third' }, { tenant }));
      const fourth = await keyed(randomUUID(), CREATE_CLIENT, { name: 'fourth' }, { tenant });
      assert.equal(fourth.body.errors?.[0]?.extensions?.code, 'RATE_LIMITED', fourth.text);
    });

    it('a rate-limited request changed nothing: its key is freed, and the same key runs once the limit allows', async () => {
      const tenant = await createTenant(t, '1');
      for (const name of ['a', 'b', 'c']) ok(await keyed(randomUUID(), CREATE_CLIENT, { name }, { tenant }));
      const key = randomUUID();
      const limited = await keyed(key, CREATE_CLIENT, { name: 'later' }, { tenant });
      assert.equal(limited.body.errors?.[0]?.extensions?.code, 'RATE_LIMITED', limited.text);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      t.clock.advance(3_600_000);
      const later = await keyed(key, CREATE_CLIENT, { name: 'later' }, { tenant });
      ok(later);
      assert.equal(later.headers['idempotent-replayed'], undefined, 'run, not replayed');
      assert.equal(await count('clients', sql`tenant_id = ${tenant}`), 4);
    });

    it('the same key with another request is refused 422 and runs nothing: other variables, another X-Tenant-Context, the other interface', async () => {
      const tenant = await createTenant(t, '1');
      const key = randomUUID();
      ok(await keyed(key, CREATE_CLIENT, { name: 'original' }, { tenant }));
      const before = await rowCounts(t);
      const refusals = [
        await keyed(key, CREATE_CLIENT, { name: 'other name' }, { tenant }),
        await keyed(key, CREATE_CLIENT, { name: 'original' }),
        await keyed(key, CREATE_TENANT, { t: { name: 'other', partnerTenantID: '1' } }, { path: TENANT_PATH }),
      ];
      for (const r of refusals) {
        assert.equal(r.status, 422, r.text);
        assert.equal(r.body.errors[0].extensions.code, 'BAD_USER_INPUT');
        assert.equal(r.body.errors[0].extensions.idempotencyKey, 'reused');
        assert.match(r.body.errors[0].message, /Idempotency-Key was sent with a different request.*use a new key/);
        assert.equal(r.body.data, undefined);
      }
      assert.deepEqual(await rowCounts(t), before, 'nothing written');
      const other = await keyed(key, 'mutation($name: String!, $roles: [ID!]) { createClient(name: $name, roles: $roles) { client { id } } }', {});
      assert.equal(other.status, 422, 'another document is another request');
    });

    it("variables in another order are the same request: replayed; the same request after the caller's roles changed is not", async () => {
      const tenant = await createTenant(t, '1');
      const key = randomUUID();
      const first = await keyed(key, CREATE_CLIENT, { name: 'ordered', roles: [ROLE_IDS.Auditor] }, { tenant });
      ok(first);
      const reordered = await keyed(key, CREATE_CLIENT, { roles: [ROLE_IDS.Auditor], name: 'ordered' }, { tenant });
      assert.equal(reordered.headers['idempotent-replayed'], 'true', reordered.text);
      assert.deepEqual(reordered.body, first.body);
      // a caller whose roles changed since would see what it may no longer see: refused, not replayed
      const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
      const adminKey = randomUUID();
      const made = await keyed(adminKey, CREATE_CLIENT, { name: 'by admin' }, { tenant, token: admin.token });
      ok(made);
      await t.db.kysely.deleteFrom('role_assignments').where('principal_id', '=', admin.id).execute();
      await t.db.kysely
        .insertInto('role_assignments')
        .values({
          id: randomUUID(),
          tenant_id: tenant,
          principal_kind: 'client',
          principal_id: admin.id,
          role_id: ROLE_IDS.Auditor,
          expires_at: null,
          created_at: t.clock.now(),
        })
        .execute();
      const after = await keyed(adminKey, CREATE_CLIENT, { name: 'by admin' }, { tenant, token: admin.token });
      assert.equal(after.status, 422, after.text);
      assert.ok(!after.text.includes(made.body.data.createClient.client_secret));
      assert.match(after.body.errors[0].message, /or your roles or the tenant's support access have changed since/);
    });

    it('the order of variables does not count in the fingerprint', () => {
      const shape = { path: '/graphql', tenantContext: undefined, query: 'q', operationName: undefined, access: '1||' };
      assert.ok(
        fingerprint({ ...shape, variables: { a: 1, b: { c: 2, d: 3 } } }).equals(fingerprint({ ...shape, variables: { b: { d: 3, c: 2 }, a: 1 } })),
      );
      assert.ok(!fingerprint({ ...shape, variables: { a: 1 } }).equals(fingerprint({ ...shape, variables: { a: 2 } })));
    });

    it('a key whose request is still running is 409 with Retry-After; once its lease is over (its process died) a retry runs it', async () => {
      const key = randomUUID();
      const variables = { name: `held ${key.slice(0, 8)}` };
      const principal = await t.service.services.bearer.authenticate(await t.rootToken());
      const home = (await t.service.store.tenants.findScope('1'))!;
      const now = t.clock.now();
      // the request is under way (in this process or another): its key is held
      const held = {
        caller: callerKey(principal),
        key,
        fingerprint: fingerprint({
          path: '/graphql',
          tenantContext: undefined,
          query: CREATE_CLIENT,
          operationName: undefined,
          variables,
          access: accessOf(principal, home, now),
        }),
        claimId: randomUUID(),
      };
      assert.equal(
        await t.service.store.idempotency.claim(held, {
          now,
          lockedUntil: new Date(now.getTime() + LEASE_SECONDS * 1000),
          expiresAt: new Date(now.getTime() + 86_400_000),
        }),
        undefined,
      );
      const before = await rowCounts(t);
      const busy = await keyed(key, CREATE_CLIENT, variables);
      assert.equal(busy.status, 409, busy.text);
      assert.equal(busy.headers['retry-after'], '1');
      assert.equal(busy.body.errors[0].extensions.code, 'CONFLICT');
      assert.equal(busy.body.errors[0].extensions.idempotencyKey, 'in_use');
      assert.match(busy.body.errors[0].message, /still running; retry in a moment/);
      assert.deepEqual(await rowCounts(t), before);
      t.clock.advance(LEASE_SECONDS * 1000);
      const taken = await keyed(key, CREATE_CLIENT, variables);
      ok(taken);
      assert.equal(taken.headers['idempotent-replayed'], undefined);
    });

    it('many retries of one request at once: one client; each answer is its answer or "still running"', async () => {
      const tenant = await createTenant(t, '1');
      const key = randomUUID();
      const answers = await Promise.all(Array.from({ length: 12 }, () => keyed(key, CREATE_CLIENT, { name: 'raced' }, { tenant })));
      const made = answers.filter((r) => r.status === 200);
      assert.ok(made.length >= 1);
      const secrets = new Set(made.map((r) => ok(r).createClient.client_secret));
      assert.equal(secrets.size, 1, 'every 200 carries the one secret');
      for (const r of answers.filter((r) => r.status !== 200)) {
        assert.equal(r.status, 409, r.text);
        assert.equal(r.body.errors[0].extensions.idempotencyKey, 'in_use');
      }
      assert.equal(await count('clients', sql`tenant_id = ${tenant}`), 1);
    });

    it("a key is the caller's own: another caller's request with the same key runs as its own and never hears the first one's secret", async () => {
      const tenant = await createTenant(t, '1');
      const other = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
      const key = randomUUID();
      const mine = ok(await keyed(key, CREATE_CLIENT, { name: 'shared key' }, { tenant })).createClient;
      const theirs = await keyed(key, CREATE_CLIENT, { name: 'shared key' }, { tenant, token: other.token });
      assert.equal(theirs.headers['idempotent-replayed'], undefined);
      assert.ok(!theirs.text.includes(mine.client_secret), 'the first caller secret is not in the other answer');
      assert.equal(theirs.body.errors?.[0]?.extensions?.code, 'CONFLICT', 'it ran: the name is taken in that tenant');
    });

    it('the stored answer is sealed: its secret is in no row and no log line', async () => {
      const key = randomUUID();
      const made = ok(await keyed(key, CREATE_CLIENT, { name: `sealed ${key.slice(0, 8)}` })).createClient;
      const row = await t.db.kysely.selectFrom('idempotency_keys').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
      assert.equal(row.state, 'done');
      assert.match(row.answer_sealed!, /^v2\./);
      assert.ok(!row.answer_sealed!.includes(made.client_secret));
      assert.ok(!t.logs.some((line) => line.includes(made.client_secret)), 'no log line holds the secret');
    });

    it('a change committed whose answer was lost (the process stopped before storing it) is never run again: 409, read the current state', async () => {
      const tenant = await createTenant(t, '1');
      const key = randomUUID();
      const store = t.service.store.idempotency;
      const complete = store.complete;
      store.complete = async () => {
        throw new Error('the process stopped here');
      };
      let first: Response;
      try {
        first = await keyed(key, CREATE_CLIENT, { name: 'answer lost' }, { tenant });
      } finally {
        store.complete = complete;
      }
      ok(first);
      assert.ok(first.body.data.createClient.client_secret, 'the caller still gets the answer that could not be stored');
      // committed, no answer: as far as anyone can tell it is still finishing, until its lease is over
      const soon = await keyed(key, CREATE_CLIENT, { name: 'answer lost' }, { tenant });
      assert.equal(soon.status, 409, soon.text);
      assert.equal(soon.body.errors[0].extensions.idempotencyKey, 'in_use');
      t.clock.advance(LEASE_SECONDS * 1000);
      const retry = await keyed(key, CREATE_CLIENT, { name: 'answer lost' }, { tenant });
      assert.equal(retry.status, 409, retry.text);
      assert.equal(retry.body.errors[0].extensions.idempotencyKey, 'answer_lost', 'its lease over: lost, and never run again');
      assert.match(retry.body.errors[0].message, /made its change, but its answer was lost; read the current state/);
      assert.ok(!retry.text.includes(first.body.data.createClient.client_secret));
      assert.equal(await count('clients', sql`tenant_id = ${tenant}`), 1);
    });

    it('a document whose first field committed and whose second was rate-limited is replayed as it was, 200 without Retry-After', async () => {
      const tenant = await createTenant(t, '1');
      for (const name of ['x', 'y']) ok(await keyed(randomUUID(), CREATE_CLIENT, { name }, { tenant }));
      const key = randomUUID();
      const both = 'mutation { a: createClient(name: "third") { client { id } client_secret } b: createClient(name: "fourth") { client { id } } }';
      const first = await keyed(key, both, {}, { tenant });
      assert.equal(first.status, 200);
      assert.ok(first.body.data.a.client_secret, first.text);
      assert.equal(first.body.errors[0].extensions.code, 'RATE_LIMITED');
      assert.ok(first.headers['retry-after']);
      const again = await keyed(key, both, {}, { tenant });
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers['retry-after'], undefined, 'a replay tells no wait: the same key would answer the same');
      assert.deepEqual(again.body, first.body);
      assert.equal(await count('clients', sql`tenant_id = ${tenant}`), 3);
    });

    it('a key quoted as the IETF draft writes it is the same key', async () => {
      const key = randomUUID();
      const first = ok(await keyed(key, CREATE_TENANT, { t: { name: `quoted ${key.slice(0, 8)}`, partnerTenantID: '1' } }, { path: TENANT_PATH }));
      const quoted = await keyed(
        `"${key}"`,
        CREATE_TENANT,
        { t: { name: `quoted ${key.slice(0, 8)}`, partnerTenantID: '1' } },
        { path: TENANT_PATH },
      );
      assert.equal(quoted.headers['idempotent-replayed'], 'true');
      assert.deepEqual(quoted.body.data, first);
    });

    it('a refusal of the request itself is its answer: replayed, not run again', async () => {
      const key = randomUUID();
      const bad = await keyed(key, CREATE_CLIENT, { name: '   ' });
      assert.equal(bad.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', bad.text);
      const again = await keyed(key, CREATE_CLIENT, { name: '   ' });
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, bad.body);
    });

    it('tenant, user, SSO and rotation mutations: a retry replays, one effect each', async () => {
      const tenantKey = randomUUID();
      const name = `idem tenant ${tenantKey.slice(0, 8)}`;
      const tenantVars = { t: { name, partnerTenantID: '1' } };
      const tenant = ok(await keyed(tenantKey, CREATE_TENANT, tenantVars, { path: TENANT_PATH })).createTenant;
      assert.deepEqual(ok(await keyed(tenantKey, CREATE_TENANT, tenantVars, { path: TENANT_PATH })).createTenant, tenant);
      assert.equal(await count('tenants', sql`name = ${name}`), 1);

      const userKey = randomUUID();
      const userVars = { e: `idem-${userKey.slice(0, 8)}@example.com`, r: [ROLE_IDS.Auditor] };
      const user = ok(await keyed(userKey, CREATE_USER, userVars, { tenant: tenant.id })).createUser;
      const userAgain = await keyed(userKey, CREATE_USER, userVars, { tenant: tenant.id });
      assert.equal(userAgain.headers['idempotent-replayed'], 'true');
      assert.equal(ok(userAgain).createUser.setup_url, user.setup_url, 'the set-up link, to the same caller');
      assert.equal(await count('users', sql`email = ${userVars.e}`), 1);

      const ssoKey = randomUUID();
      const ssoVars = { c: { name: `idem sso ${ssoKey.slice(0, 8)}`, type: 'saml', domains: [`idem-${ssoKey.slice(0, 8)}.test`] } };
      const sso = ok(await keyed(ssoKey, CREATE_SSO, ssoVars, { path: TENANT_PATH, tenant: tenant.id })).createSSOConnection;
      assert.deepEqual(ok(await keyed(ssoKey, CREATE_SSO, ssoVars, { path: TENANT_PATH, tenant: tenant.id })).createSSOConnection, sso);
      assert.equal(await count('sso_connections', sql`tenant_id = ${tenant.id}`), 1);

      const client = ok(await keyed(randomUUID(), CREATE_CLIENT, { name: 'to rotate' }, { tenant: tenant.id })).createClient;
      const rotateKey = randomUUID();
      const rotateVars = { id: client.client.id, s: client.client_secret };
      const rotated = ok(await keyed(rotateKey, ROTATE, rotateVars, { tenant: tenant.id })).rotateClientSecret;
      assert.equal(ok(await keyed(rotateKey, ROTATE, rotateVars, { tenant: tenant.id })).rotateClientSecret.client_secret, rotated.client_secret);
      assert.equal(await count('client_secrets', sql`client_id = ${client.client.id}`), 2, 'the first secret and one rotation, not two');
    });

    it('a malformed key is 400 and nothing runs; a query ignores the header', async () => {
      const before = await rowCounts(t);
      const keysBefore = await keyRows();
      // 'a, b': a header sent twice, as HTTP joins it
      for (const bad of ['', 'has space', 'a,b', 'a, b', '"a b"', '""', 'x'.repeat(256), 'caf\u00e9']) {
        const r = await keyed(bad, CREATE_CLIENT, { name: 'never' });
        assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${r.text}`);
        assert.match(r.body.errors[0].message, /Idempotency-Key header must be 1 to 255 visible ASCII characters, without spaces or commas/);
      }
      const twice = await t.gql(
        await t.rootToken(),
        CREATE_CLIENT,
        { name: 'never' },
        { headers: { 'idempotency-key': ['a', 'b'] as unknown as string } },
      );
      assert.equal(twice.status, 400, 'two headers are one key sent twice: refused');
      assert.deepEqual(await rowCounts(t), before);
      ok(await keyed(randomUUID(), '{ clients(perPage: 1) { id } }', {}));
      assert.equal(await keyRows(), keysBefore, 'no key kept for a query');
    });

    it('a key is kept 24 hours: then the purge forgets it and it may name a new request', async () => {
      const key = randomUUID();
      ok(await keyed(key, CREATE_TENANT, { t: { name: `day ${key.slice(0, 8)}`, partnerTenantID: '1' } }, { path: TENANT_PATH }));
      t.clock.advance(24 * 3_600_000 - 1000);
      const stillKept = await keyed(key, CREATE_TENANT, { t: { name: `next ${key.slice(0, 8)}`, partnerTenantID: '1' } }, { path: TENANT_PATH });
      assert.equal(stillKept.status, 422);
      t.clock.advance(1000);
      const purged = await purgeExpired(t.service.store, t.clock, { sessionIdleSeconds: 3600, auditRetentionDays: 365 });
      assert.ok(purged.idempotencyKeys >= 1);
      assert.equal(await count('idempotency_keys', sql`key = ${key}`), 0);
      ok(await keyed(key, CREATE_TENANT, { t: { name: `next ${key.slice(0, 8)}`, partnerTenantID: '1' } }, { path: TENANT_PATH }));
    });
  });
}
