// First start on an empty database: the vendor root tenant "1", an Administrator API client and
// an Administrator user, created once; generated secrets returned (to be printed once) and
// working; configured ones used and not echoed; later and concurrent starts create nothing more.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { ROLE_IDS } from '../src/access/roles.js';
import { DEFAULT_ADMIN_EMAIL } from '../src/bootstrap/bootstrap.js';
import { loadConfig } from '../src/config.js';
import { SECRET_PATTERN } from '../src/credentials/secret.js';
import { createLogger } from '../src/logger.js';
import { createService, type Service } from '../src/compose.js';
import { openDb, type Db } from '../src/store/db.js';
import { verifyPassword } from '../src/users/password.js';
import { TEST_ENCRYPTION_KEY } from './helpers/app.js';
import { openTestDb } from './helpers/db.js';
import { engines } from './helpers/engines.js';

const BASE_ENV = {
  GATEHOUSE_BASE_URL: 'http://gatehouse.test',
  GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  GATEHOUSE_DATA_DIR: '/nonexistent/gatehouse-bootstrap-test',
  LOG_LEVEL: 'silent',
};

function start(db: Db, env: Record<string, string> = {}): Promise<Service> {
  return createService({
    config: loadConfig({ ...BASE_ENV, ...env }),
    db,
    logger: createLogger('silent'),
    flushIntervalMs: null,
  });
}

async function tokenStatus(service: Service, clientId: string, secret: string): Promise<{ status: number; body: any }> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/auth/api/v2/auth/token',
    headers: {
      authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64'),
      'content-type': 'application/json',
    },
    payload: { grant_type: 'client_credentials' },
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

async function counts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['tenants', 'clients', 'client_secrets', 'role_assignments', 'users', 'audit_events', 'signing_keys'] as const) {
    const r = await db.kysely
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(r.n);
  }
  return out;
}

/** Stops a service but leaves its database open, so another start can use the same database. */
async function stopKeepingDb(service: Service): Promise<void> {
  await service.app.close();
  await service.lastUsed.stop();
}

for (const engine of engines()) {
  describe(`first start (${engine})`, () => {
    it('creates tenant "1", an Administrator client and an Administrator user, and returns working generated secrets', async () => {
      const db = await openTestDb(engine);
      let service: Service | undefined;
      try {
        assert.deepEqual(await counts(db), {
          tenants: 0,
          clients: 0,
          client_secrets: 0,
          role_assignments: 0,
          users: 0,
          audit_events: 0,
          signing_keys: 0,
        });
        service = await start(db);
        const boot = service.bootstrapped;
        assert.ok(boot, 'the first start reports what it created');
        assert.match(boot.clientId, /^[0-9a-f]{32}$/);
        assert.match(boot.clientSecret!, SECRET_PATTERN);
        assert.equal(boot.adminEmail, DEFAULT_ADMIN_EMAIL);
        assert.ok(boot.adminPassword && boot.adminPassword.length >= 20, 'a generated admin password of real length');

        const tenants = await db.kysely.selectFrom('tenants').selectAll().execute();
        assert.equal(tenants.length, 1);
        assert.equal(String(tenants[0]!.id), '1');
        assert.equal(tenants[0]!.parent_id, null);
        assert.equal(tenants[0]!.is_partner, true);
        assert.equal(tenants[0]!.name, 'Vendor');

        const clients = await db.kysely.selectFrom('clients').selectAll().execute();
        assert.equal(clients.length, 1);
        assert.equal(clients[0]!.client_id, boot.clientId);
        assert.equal(String(clients[0]!.tenant_id), '1');
        assert.equal(clients[0]!.revoked_at, null);
        const users = await db.kysely.selectFrom('users').selectAll().execute();
        assert.equal(users.length, 1);
        assert.equal(users[0]!.email, DEFAULT_ADMIN_EMAIL);
        assert.equal(String(users[0]!.tenant_id), '1');
        assert.ok(await verifyPassword(users[0]!.password_hash ?? '', boot.adminPassword!), 'the printed password is the stored one');
        assert.equal(await verifyPassword(users[0]!.password_hash ?? '', 'not-the-password'), false);

        const roles = await db.kysely.selectFrom('role_assignments').selectAll().orderBy('principal_kind').execute();
        assert.deepEqual(
          roles.map((r) => ({
            kind: r.principal_kind,
            principal: r.principal_id,
            tenant: String(r.tenant_id),
            role: r.role_id,
            expires: r.expires_at,
          })),
          [
            { kind: 'client', principal: clients[0]!.id, tenant: '1', role: ROLE_IDS.Administrator, expires: null },
            { kind: 'user', principal: users[0]!.id, tenant: '1', role: ROLE_IDS.Administrator, expires: null },
          ],
        );
        const audit = await db.kysely.selectFrom('audit_events').select(['action', 'tenant_id']).execute();
        assert.deepEqual(
          audit.map((a) => a.action),
          ['service.bootstrapped'],
        );

        // the generated secret obtains a token, which is an Administrator's in tenant 1
        const token = await tokenStatus(service, boot.clientId, boot.clientSecret!);
        assert.equal(token.status, 200, JSON.stringify(token.body));
        const list = await service.app.inject({
          method: 'POST',
          url: '/graphql',
          headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json' },
          payload: { query: '{ clients { client_id tenant_id roles } }' },
        });
        assert.equal(list.statusCode, 200, list.body);
        assert.deepEqual(JSON.parse(list.body).data.clients, [{ client_id: boot.clientId, tenant_id: '1', roles: ['Administrator'] }]);
        // and a wrong one does not
        assert.equal(
          (await tokenStatus(service, boot.clientId, boot.clientSecret!.slice(0, -1) + (boot.clientSecret!.endsWith('x') ? 'y' : 'x'))).status,
          401,
        );
      } finally {
        if (service) await service.close();
        else await db.close();
      }
    });

    it('creates nothing on the second start and returns undefined', async () => {
      const db = await openTestDb(engine);
      let second: Service | undefined;
      try {
        const first = await start(db);
        const boot = first.bootstrapped!;
        assert.ok(boot);
        await stopKeepingDb(first);
        const before = await counts(db);
        assert.equal(before.tenants, 1);
        assert.equal(before.signing_keys, 1);

        // a restart, even with other bootstrap settings, creates nothing and reports nothing
        second = await start(db, {
          GATEHOUSE_VENDOR_NAME: 'Renamed',
          GATEHOUSE_BOOTSTRAP_CLIENT_ID: 'another-admin',
          GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: 'another-secret-another-secret-0123456789',
        });
        assert.equal(second.bootstrapped, undefined);
        assert.deepEqual(await counts(db), before);
        const root = await db.kysely.selectFrom('tenants').select('name').where('id', '=', '1').executeTakeFirstOrThrow();
        assert.equal(root.name, 'Vendor');
        // the first start's credentials still work; the new settings do not create a client
        assert.equal((await tokenStatus(second, boot.clientId, boot.clientSecret!)).status, 200);
        assert.equal((await tokenStatus(second, 'another-admin', 'another-secret-another-secret-0123456789')).status, 401);
      } finally {
        if (second) await second.close();
        else await db.close();
      }
    });

    it('names the root tenant from GATEHOUSE_VENDOR_NAME', async () => {
      const db = await openTestDb(engine);
      const service = await start(db, { GATEHOUSE_VENDOR_NAME: 'Acme Security GmbH' });
      try {
        const root = await db.kysely.selectFrom('tenants').select(['name', 'is_partner']).where('id', '=', '1').executeTakeFirstOrThrow();
        assert.deepEqual(root, { name: 'Acme Security GmbH', is_partner: true });
      } finally {
        await service.close();
      }
    });

    it('uses configured bootstrap credentials and does not echo them back', async () => {
      const db = await openTestDb(engine);
      const clientId = 'ops-bootstrap';
      const clientSecret = 'configured-bootstrap-secret-0123456789abcdef';
      const adminEmail = 'Root@Example.COM';
      const adminPassword = 'configured-admin-password';
      const service = await start(db, {
        GATEHOUSE_BOOTSTRAP_CLIENT_ID: clientId,
        GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: clientSecret,
        GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL: adminEmail,
        GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD: adminPassword,
      });
      try {
        assert.deepEqual(service.bootstrapped, { clientId, adminEmail });
        assert.equal(service.bootstrapped!.clientSecret, undefined);
        assert.equal(service.bootstrapped!.adminPassword, undefined);
        assert.equal((await tokenStatus(service, clientId, clientSecret)).status, 200);
        const user = await db.kysely.selectFrom('users').select(['email', 'password_hash']).executeTakeFirstOrThrow();
        assert.equal(user.email, adminEmail);
        assert.ok(await verifyPassword(user.password_hash ?? '', adminPassword));
        // stored only as a digest
        const dump = JSON.stringify(await db.kysely.selectFrom('client_secrets').selectAll().execute());
        assert.equal(dump.includes(clientSecret), false);
      } finally {
        await service.close();
      }
    });

    it('a generated password alongside a configured client secret: only the generated one is returned', async () => {
      const db = await openTestDb(engine);
      const service = await start(db, {
        GATEHOUSE_BOOTSTRAP_CLIENT_ID: 'half-configured',
        GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: 'half-configured-secret-0123456789abcdefgh',
      });
      try {
        const boot = service.bootstrapped!;
        assert.equal(boot.clientId, 'half-configured');
        assert.equal(boot.clientSecret, undefined);
        assert.ok(boot.adminPassword, 'the generated password is returned to be printed');
      } finally {
        await service.close();
      }
    });

    it('of several services starting together on one empty database, exactly one bootstraps', async () => {
      const N = 4;
      // PostgreSQL: one pool per service on a fresh, unmigrated schema (several processes);
      // PGlite: one embedded database, several services in one process.
      let dbs: Db[];
      let cleanup: () => Promise<void>;
      if (engine === 'postgres') {
        const url = process.env.TEST_DATABASE_URL!;
        const schema = `gh_test_${randomBytes(6).toString('hex')}`;
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query(`create schema ${schema}`);
        await admin.end();
        dbs = await Promise.all(Array.from({ length: N }, () => openDb({ engine: 'postgres', url, schema, poolSize: 4 })));
        cleanup = async () => {
          const c = new pg.Client({ connectionString: url });
          await c.connect();
          await c.query(`drop schema if exists ${schema} cascade`);
          await c.end();
        };
      } else {
        const db = await openTestDb(engine);
        dbs = Array.from({ length: N }, () => db);
        cleanup = () => db.close();
      }
      const settled = await Promise.allSettled(dbs.map((db) => start(db)));
      const services = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      try {
        for (const s of settled) assert.equal(s.status, 'fulfilled', s.status === 'rejected' ? String(s.reason?.stack) : '');
        const booted = services.filter((s) => s.bootstrapped);
        assert.equal(booted.length, 1, 'exactly one start reports bootstrap secrets');
        const c = await counts(dbs[0]!);
        assert.equal(c.tenants, 1);
        assert.equal(c.clients, 1);
        assert.equal(c.users, 1);
        assert.equal(c.role_assignments, 2);
        assert.equal(c.audit_events, 1);
        assert.equal(c.signing_keys, 1, 'one signing key, shared');
        // every service accepts the one bootstrap secret and the tokens the others issue
        const boot = booted[0]!.bootstrapped!;
        const token = await tokenStatus(services[0]!, boot.clientId, boot.clientSecret!);
        assert.equal(token.status, 200);
        for (const s of services) {
          assert.equal((await tokenStatus(s, boot.clientId, boot.clientSecret!)).status, 200);
          const res = await s.app.inject({
            method: 'POST',
            url: '/graphql',
            headers: { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json' },
            payload: { query: '{ clients { client_id } }' },
          });
          assert.equal(res.statusCode, 200, res.body);
        }
      } finally {
        for (const s of services) await stopKeepingDb(s);
        if (engine === 'postgres') for (const db of dbs) await db.close();
        await cleanup();
      }
    });
  });
}
