import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { generateSecret, plausibleSecret, secretHint } from '../../src/credentials/secret.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, CREATE_CLIENT, createClient, rowCounts, seedTenant } from '../helpers/seed.js';

for (const engine of engines()) {
  describe(`createClient (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    it('creates an Analyst client by default and returns its secret once', async () => {
      const res = await t.gql(
        await t.rootToken(),
        `mutation { createClient(name: "reporting") {
          client { id name client_id roles tenant_id environment created_at updated_at created_by updated_by
                   role_assignments { id tenant_id role_id role_name expires_at } secrets { hint expires_at } }
          client_secret } }`,
      );
      assert.equal(res.status, 200);
      const { client, client_secret } = res.body.data.createClient;
      assert.match(client.id, /^[0-9a-f-]{36}$/);
      assert.match(client.client_id, /^[0-9a-f]{32}$/);
      assert.match(client_secret, /^gatehouse_cs_[0-9A-Za-z]{49}$/);
      assert.deepEqual(client.roles, ['Analyst']);
      assert.equal(client.tenant_id, '1');
      assert.equal(client.environment, 'us1');
      assert.equal(client.created_at, t.clock.now().toISOString());
      assert.equal(client.role_assignments.length, 1);
      assert.deepEqual(
        { ...client.role_assignments[0], id: undefined },
        { id: undefined, tenant_id: '1', role_id: ROLE_IDS.Analyst, role_name: 'Analyst', expires_at: null },
      );
      assert.equal(client.secrets.length, 1);
      assert.equal(client.secrets[0].hint, `gatehouse_cs_…${client_secret.slice(-4)}`);
      // the secret works, and is never readable again
      assert.ok(await t.token(client.client_id, client_secret));
      const list = await t.gql(await t.rootToken(), `{ clients(name: "reporting") { client_id secrets { hint } } }`);
      assert.ok(!list.text.includes(client_secret));
    });

    it('assigns the roles given by id', async () => {
      const c = await createClient(t, await t.rootToken(), 'privileged', { roles: [ROLE_IDS.Administrator, ROLE_IDS.Auditor] });
      const res = await t.gql(await t.rootToken(), `{ clients(clientIDs: ["${c.clientId}"]) { roles role_assignments { role_id } } }`);
      assert.deepEqual(res.body.data.clients[0].roles.sort(), ['Administrator', 'Auditor']);
    });

    it('rejects an unknown role id with BAD_USER_INPUT and writes nothing', async () => {
      const before = await rowCounts(t);
      const res = await t.gql(await t.rootToken(), CREATE_CLIENT, { name: 'x-unknown-role', roles: ['00000000-0000-4000-8000-000000000000'] });
      assert.equal(res.status, 200);
      assert.equal(res.body.data.createClient, null);
      assert.equal(res.body.errors[0].extensions.code, 'BAD_USER_INPUT');
      assert.match(res.body.errors[0].message, /unknown role id/);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('rejects an empty or over-long name and an empty role list', async () => {
      const before = await rowCounts(t);
      for (const variables of [{ name: '   ' }, { name: 'x'.repeat(201) }, { name: 'ok-name', roles: [] }, { name: 'bad\u0007bell' }]) {
        const res = await t.gql(await t.rootToken(), CREATE_CLIENT, variables);
        assert.equal(res.body.errors?.[0]?.extensions.code, 'BAD_USER_INPUT', JSON.stringify(variables));
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('answers a duplicate name with CONFLICT "Existing client in tenant" (and error: [...])', async () => {
      await createClient(t, await t.rootToken(), 'duplicate-me');
      const before = await rowCounts(t);
      const res = await t.gql(await t.rootToken(), CREATE_CLIENT, { name: 'duplicate-me' });
      assert.equal(res.body.errors[0].extensions.code, 'CONFLICT');
      assert.equal(res.body.errors[0].message, 'Existing client in tenant');
      assert.deepEqual(res.body.error, ['Existing client in tenant']);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('lets the same name exist in two tenants', async () => {
      const tenant = await seedTenant(t, '1');
      await createClient(t, await t.rootToken(), 'shared-name');
      const other = await createClient(t, await t.rootToken(), 'shared-name', { tenant });
      assert.equal(other.tenantId, tenant);
    });

    it('of two concurrent creates with one name, exactly one succeeds', async () => {
      const tenant = await seedTenant(t, '1');
      const token = await t.rootToken();
      const results = await Promise.all([1, 2, 3].map(() => t.gql(token, CREATE_CLIENT, { name: 'race' }, { tenant })));
      const ok = results.filter((r) => r.body.data?.createClient);
      const conflicts = results.filter((r) => r.body.errors?.[0]?.extensions.code === 'CONFLICT');
      assert.equal(ok.length, 1);
      assert.equal(conflicts.length, 2);
      const rows = await t.db.kysely.selectFrom('clients').select('id').where('tenant_id', '=', tenant).execute();
      assert.equal(rows.length, 1);
    });

    it('lets Analysts and Administrators create, and refuses Responders and Auditors', async () => {
      const tenant = await seedTenant(t, '1');
      const analyst = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
      assert.ok((await t.gql(analyst.token, CREATE_CLIENT, { name: 'by-analyst' })).body.data.createClient);
      assert.ok((await t.gql(admin.token, CREATE_CLIENT, { name: 'by-admin' })).body.data.createClient);
      for (const role of [ROLE_IDS.Responder, ROLE_IDS.Auditor]) {
        const weak = await clientWithRoles(t, tenant, [role]);
        const before = await rowCounts(t);
        const res = await t.gql(weak.token, CREATE_CLIENT, { name: `by-${role}` });
        assert.equal(res.body.errors[0].extensions.code, 'FORBIDDEN');
        assert.deepEqual(await rowCounts(t), before);
      }
    });

    it('never grants a role the creator does not hold', async () => {
      const tenant = await seedTenant(t, '1');
      const analyst = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      const res = await t.gql(analyst.token, CREATE_CLIENT, { name: 'escalate', roles: [ROLE_IDS.Administrator] });
      assert.equal(res.body.errors[0].extensions.code, 'FORBIDDEN');
      // vendor roles exist only in tenant 1
      const ops = await t.gql(await t.rootToken(), CREATE_CLIENT, { name: 'ops-outside-root', roles: [ROLE_IDS.Operations] }, { tenant });
      assert.equal(ops.body.errors[0].extensions.code, 'BAD_USER_INPUT');
    });

    it('a partner Administrator creates clients in a child tenant through X-Tenant-Context', async () => {
      const partner = await seedTenant(t, '1', { isPartner: true });
      const child = await seedTenant(t, partner);
      const admin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
      const res = await t.gql(admin.token, CREATE_CLIENT, { name: 'child-client' }, { tenant: child });
      assert.equal(res.body.data.createClient.client.tenant_id, child);
    });

    it('a creation or a rotation whose audit row cannot be written leaves neither the change nor the row', async () => {
      const tenant = await seedTenant(t, '1');
      const token = await t.rootToken();
      const kept = await createClient(t, token, 'kept', { tenant });
      // the database refuses these two audit rows, as a full disk or a broken constraint would,
      // inside the transaction of the change they record
      await sql`create function refuse_credential_audit() returns trigger language plpgsql as $$
        begin raise exception 'audit row refused (test)'; end $$`.execute(t.db.kysely);
      await sql`create trigger refuse_credential_audit before insert on audit_events for each row
        when (new.action in ('client.created', 'client.secret_rotated')) execute function refuse_credential_audit()`.execute(t.db.kysely);
      try {
        const before = await rowCounts(t);
        const created = await t.gql(token, CREATE_CLIENT, { name: 'never-made' }, { tenant });
        assert.equal(created.body.data?.createClient ?? null, null, created.text);
        assert.ok(created.body.errors?.length, created.text);
        const rotated = await t.gql(token, `mutation($id: ID!) { rotateClientSecret(id: $id) { client_secret } }`, { id: kept.id }, { tenant });
        assert.equal(rotated.body.data?.rotateClientSecret ?? null, null, rotated.text);
        assert.ok(rotated.body.errors?.length, rotated.text);
        // no client, secret, role, creation count or audit row of either remains
        assert.deepEqual(await rowCounts(t), before);
      } finally {
        await sql`drop trigger refuse_credential_audit on audit_events`.execute(t.db.kysely);
        await sql`drop function refuse_credential_audit()`.execute(t.db.kysely);
      }
      // the old secret is still the one that works, and the name is still free
      assert.equal((await t.tokenResponse(kept.clientId, kept.secret)).status, 200);
      const made = await createClient(t, token, 'never-made', { tenant });
      // once the database takes them again, the creation and its one audit row commit together;
      // the row names the secret by its hint only
      const rows = await t.db.kysely
        .selectFrom('audit_events')
        .select(['action', 'details'])
        .where('target_id', '=', made.id)
        .where('action', '=', 'client.created')
        .execute();
      assert.equal(rows.length, 1);
      const details = typeof rows[0]!.details === 'string' ? JSON.parse(rows[0]!.details) : rows[0]!.details;
      assert.equal(details.secret_hint, secretHint(made.secret));
      assert.ok(!JSON.stringify(details).includes(made.secret.slice(13, -4)), 'no part of the secret beyond its hint');
    });

    describe('rate limit', () => {
      it('allows GATEHOUSE_CLIENT_CREATE_LIMIT creations per tenant per rolling hour, then RATE_LIMITED with Retry-After', async () => {
        const tenant = await seedTenant(t, '1');
        const other = await seedTenant(t, '1');
        const token = await t.rootToken();
        const start = t.clock.now();
        for (let i = 0; i < 10; i++) {
          const res = await t.gql(token, CREATE_CLIENT, { name: `limited-${i}` }, { tenant });
          assert.ok(res.body.data.createClient, res.text);
          t.clock.advance(60_000); // one a minute
        }
        const before = await rowCounts(t);
        const res = await t.gql(token, CREATE_CLIENT, { name: 'limited-10' }, { tenant });
        assert.equal(res.body.errors[0].extensions.code, 'RATE_LIMITED');
        // the oldest creation leaves the window one hour after it happened
        const expected = Math.ceil((start.getTime() + 3600_000 - t.clock.now().getTime()) / 1000);
        assert.equal(res.body.errors[0].extensions.retryAfter, expected);
        assert.equal(res.headers['retry-after'], String(expected));
        assert.deepEqual(await rowCounts(t), before);
        // another tenant is not affected
        assert.ok((await t.gql(token, CREATE_CLIENT, { name: 'unaffected' }, { tenant: other })).body.data.createClient);
        // the window rolls: after the oldest leaves, one more fits
        t.clock.advance(expected * 1000);
        assert.ok((await t.gql(token, CREATE_CLIENT, { name: 'limited-10' }, { tenant })).body.data.createClient);
        assert.equal((await t.gql(token, CREATE_CLIENT, { name: 'limited-11' }, { tenant })).body.errors[0].extensions.code, 'RATE_LIMITED');
        // under application/graphql-response+json too: the request ran, so 200 (docs/graphql.md,
        // "Status codes"), with Retry-After and the field null
        const typed = await t.gql(token, CREATE_CLIENT, { name: 'limited-12' }, { tenant, headers: { accept: 'application/graphql-response+json' } });
        assert.equal(typed.status, 200, typed.text);
        assert.match(String(typed.headers['content-type']), /^application\/graphql-response\+json/);
        assert.equal(typed.body.errors[0].extensions.code, 'RATE_LIMITED');
        assert.equal(typed.body.data.createClient, null);
        assert.ok(Number(typed.headers['retry-after']) > 0);
      });

      it('is one budget per tenant: two Administrators (two clients) share it', async () => {
        const tenant = await seedTenant(t, '1');
        const admins = [await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]), await clientWithRoles(t, tenant, [ROLE_IDS.Administrator])];
        // their own creations leave the window; tokens issued afresh
        t.clock.advance(3600_000 + 1000);
        const tokens = [await t.token(admins[0]!.clientId, admins[0]!.secret), await t.token(admins[1]!.clientId, admins[1]!.secret)];
        for (let i = 0; i < 10; i++) {
          const res = await t.gql(tokens[i % 2]!, CREATE_CLIENT, { name: `shared-${i}` }, { tenant });
          assert.ok(res.body.data.createClient, res.text);
        }
        // five each: the eleventh is refused whichever of them asks
        for (const token of tokens) {
          const res = await t.gql(token, CREATE_CLIENT, { name: 'shared-10' }, { tenant });
          assert.equal(res.body.errors?.[0]?.extensions.code, 'RATE_LIMITED', res.text);
        }
      });

      it('holds across a restart and a second process: exactly 10 in the hour in all', async () => {
        const tenant = await seedTenant(t, '1');
        for (let i = 0; i < 4; i++) await createClient(t, await t.rootToken(), `before-restart-${i}`, { tenant });
        // a service started afresh on the same database (nothing of the first one's memory), both
        // creating at once
        const second = await startTestApp({ engine, db: t.db, clock: t.clock });
        try {
          const apps = [t, second];
          const tokens = [await t.rootToken(), await second.rootToken()];
          const results = await Promise.all(
            Array.from({ length: 16 }, (_, i) => apps[i % 2]!.gql(tokens[i % 2]!, CREATE_CLIENT, { name: `after-restart-${i}` }, { tenant })),
          );
          assert.equal(results.filter((r) => r.body.data?.createClient).length, 6);
          assert.equal(results.filter((r) => r.body.errors?.[0]?.extensions.code === 'RATE_LIMITED').length, 10);
          const res = await second.gql(tokens[1]!, CREATE_CLIENT, { name: 'one-more' }, { tenant });
          assert.equal(res.body.errors?.[0]?.extensions.code, 'RATE_LIMITED', res.text);
        } finally {
          // the database stays open for the first service
          await second.service.app.close();
          await second.service.lastUsed.stop();
        }
        const rows = await t.db.kysely.selectFrom('clients').select('id').where('tenant_id', '=', tenant).execute();
        assert.equal(rows.length, 10);
      });

      it('counts deleted clients: deleting does not give the budget back', async () => {
        const tenant = await seedTenant(t, '1');
        const token = await t.rootToken();
        for (let i = 0; i < 10; i++) {
          const c = await createClient(t, token, `churn-${i}`, { tenant });
          await t.gql(token, `mutation($id: ID!) { deleteClient(id: $id) { id } }`, { id: c.id }, { tenant });
        }
        const res = await t.gql(token, CREATE_CLIENT, { name: 'churn-10' }, { tenant });
        assert.equal(res.body.errors[0].extensions.code, 'RATE_LIMITED');
      });

      it('is exact under concurrency: of 20 simultaneous creates, exactly 10 succeed', async () => {
        const tenant = await seedTenant(t, '1');
        const token = await t.rootToken();
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => t.gql(token, CREATE_CLIENT, { name: `burst-${i}` }, { tenant })));
        const ok = results.filter((r) => r.body.data?.createClient).length;
        const limited = results.filter((r) => r.body.errors?.[0]?.extensions.code === 'RATE_LIMITED').length;
        assert.equal(ok, 10);
        assert.equal(limited, 10);
        const rows = await t.db.kysely.selectFrom('clients').select('id').where('tenant_id', '=', tenant).execute();
        assert.equal(rows.length, 10);
      });

      it('counts aliased creates in one document one by one', async () => {
        const tenant = await seedTenant(t, '1');
        const doc = `mutation { ${Array.from({ length: 11 }, (_, i) => `c${i}: createClient(name: "alias-${i}") { client { id } }`).join(' ')} }`;
        const res = await t.gql(await t.rootToken(), doc, undefined, { tenant });
        const created = Object.values(res.body.data).filter(Boolean).length;
        assert.equal(created, 10);
        assert.equal(res.body.errors.length, 1);
        assert.equal(res.body.errors[0].extensions.code, 'RATE_LIMITED');
      });
    });
  });
}

// The secrets themselves, without storage: what createClient (and both rotations) return comes
// from generateSecret (src/credentials/secret.ts). docs/credentials.md, "Secrets":
// `gatehouse_cs_` + 43 base62 characters (256 random bits) + 6 of CRC32 checksum.
describe('client secrets', () => {
  const PREFIX = 'gatehouse_cs_';
  const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

  it('10,000 of them are all distinct, all of the documented form with a valid checksum, and every one of the 256 bits varies', () => {
    const secrets = Array.from({ length: 10_000 }, () => generateSecret());
    assert.equal(new Set(secrets).size, secrets.length);
    // each bit of the 256-bit number the 43 characters spell, counted over all the secrets: a
    // uniform source sets each one about 5,000 times (a standard deviation of 50)
    const ones = new Array<number>(256).fill(0);
    for (const secret of secrets) {
      assert.match(secret, /^gatehouse_cs_[0-9A-Za-z]{49}$/);
      assert.ok(plausibleSecret(secret), secret);
      let n = 0n;
      for (const c of secret.slice(PREFIX.length, PREFIX.length + 43)) n = n * 62n + BigInt(BASE62.indexOf(c));
      for (let bit = 0; bit < 256; bit++, n >>= 1n) if (n & 1n) ones[bit]!++;
      assert.equal(n, 0n, 'no more than 256 bits');
    }
    const uneven = ones.map((count, bit) => [bit, count]).filter(([, count]) => count! < 4_500 || count! > 5_500);
    assert.deepEqual(uneven, [], 'bits (and how often they were set) far from half the time');
  });

  it('refuses offline every one-character change after the prefix: each other character in each place, one left out, one added', () => {
    const others = `${BASE62}_-+/= .`;
    for (let i = 0; i < 20; i++) {
      const secret = generateSecret();
      assert.ok(plausibleSecret(secret), 'the control: the secret itself passes');
      const mutants: string[] = [];
      for (let at = PREFIX.length; at < secret.length; at++) {
        for (const c of others) if (c !== secret[at]) mutants.push(secret.slice(0, at) + c + secret.slice(at + 1));
        mutants.push(secret.slice(0, at) + secret.slice(at + 1));
      }
      for (let at = PREFIX.length; at <= secret.length; at++) for (const c of others) mutants.push(secret.slice(0, at) + c + secret.slice(at));
      assert.equal(mutants.length, 49 * (others.length - 1) + 49 + 50 * others.length);
      const passed = mutants.filter((m) => plausibleSecret(m));
      assert.deepEqual(passed, [], `changes of ${secret} that pass the checksum`);
    }
  });
});
