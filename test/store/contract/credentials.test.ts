// CredentialStore contract (src/credentials/store.ts), on every engine: clients found and listed
// through their tenant's scope only, the unique rules client.name (live clients of a tenant) and
// client.clientId, the creation limit exact under concurrency (per tenant), secrets live, expired
// and revoked, the client the token endpoint authenticates, and the buffered last uses.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { ROLE_IDS } from '../../../src/access/roles.js';
import type { NewClient, NewSecret } from '../../../src/credentials/store.js';
import type { Tenant } from '../../../src/tenants/model.js';
import {
  at,
  childOf,
  clientRow,
  type Contract,
  fulfilled,
  HOUR,
  MINUTE,
  oneWinsOthersDuplicate,
  openContract,
  race,
  RACERS,
  raceTransactions,
  rejectsDuplicate,
  sha256,
  T0,
  twoTenants,
  TX_RACERS,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

const secretRow = (client: NewClient, over: Partial<NewSecret> = {}): NewSecret => ({
  id: randomUUID(),
  clientId: client.id,
  tenantId: client.tenantId,
  hash: sha256(randomUUID()),
  hint: 'gh_…abcd',
  createdAt: T0,
  ...over,
});

for (const engine of engines()) {
  describe(`CredentialStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    const insert = async (tenant: Tenant, over: Partial<NewClient> = {}) => {
      const row = clientRow(tenant.id, over);
      await c.store.credentials.insertClient(row);
      return row;
    };

    it('getClient reads a client as inserted, with no roles, secrets or use yet; an unknown id is an error', async () => {
      const row = await insert(a, { name: 'Build Bot', nameNormalized: 'build bot', createdAt: at(1000) });
      assert.deepEqual(await c.store.credentials.getClient(row.id), {
        id: row.id,
        tenantId: a.id,
        clientId: row.clientId,
        name: 'Build Bot',
        environment: 'echo',
        createdAt: at(1000),
        updatedAt: at(1000),
        createdBy: 'contract-test',
        updatedBy: 'contract-test',
        revokedAt: null,
        lastUsedAt: null,
        roleAssignments: [],
        secrets: [],
      });
      await assert.rejects(c.store.credentials.getClient(randomUUID()));
    });

    it('findClient finds a live client through its own tenant only, by id or client_id', async () => {
      const row = await insert(a);
      for (const ref of [{ id: row.id }, { clientId: row.clientId }]) {
        assert.equal((await c.store.credentials.findClient(a.id, ref))?.id, row.id, JSON.stringify(ref));
        assert.equal(await c.store.credentials.findClient(b.id, ref), undefined, `not through the other tenant: ${JSON.stringify(ref)}`);
      }
      assert.equal(await c.store.credentials.findClient(a.id, { id: randomUUID() }), undefined);
      const locked = await c.store.transaction((tx) => tx.credentials.findClient(a.id, { id: row.id }, true));
      assert.equal(locked?.id, row.id);
      await c.store.credentials.revokeClient(row.id, at(HOUR), 'admin');
      assert.equal(await c.store.credentials.findClient(a.id, { id: row.id }), undefined, 'a revoked client is not live');
      const revoked = await c.store.credentials.getClient(row.id);
      assert.deepEqual([revoked.revokedAt, revoked.updatedAt, revoked.updatedBy], [at(HOUR), at(HOUR), 'admin']);
    });

    it('client.name: unique among a tenant’s live clients; another tenant, or a revoked client, leaves it free', async () => {
      const first = await insert(a, { name: 'Deploy', nameNormalized: 'deploy' });
      await rejectsDuplicate(c.store.credentials.insertClient(clientRow(a.id, { name: 'DEPLOY', nameNormalized: 'deploy' })), 'client.name');
      await insert(b, { name: 'Deploy', nameNormalized: 'deploy' });
      await c.store.credentials.revokeClient(first.id, at(1), 'admin');
      await insert(a, { name: 'Deploy', nameNormalized: 'deploy' });
      const results = await race(RACERS, () => c.store.credentials.insertClient(clientRow(a.id, { name: 'Contended', nameNormalized: 'contended' })));
      oneWinsOthersDuplicate(results, 'client.name');
    });

    it('client.clientId: unique across every tenant', async () => {
      const row = await insert(a);
      await rejectsDuplicate(c.store.credentials.insertClient(clientRow(b.id, { clientId: row.clientId })), 'client.clientId');
      assert.equal(await c.store.credentials.findClient(b.id, { clientId: row.clientId }), undefined);
    });

    it('the creation limit is exact under concurrency: creations queue per tenant, and count only their own tenant', async () => {
      const LIMIT = 2;
      const ta = await childOf(c.store, a);
      const tb = await childOf(c.store, b);
      // older creations outside the window, and one of another tenant inside it
      await c.store.credentials.recordCreation(ta.id, randomUUID(), at(-2 * HOUR));
      await c.store.credentials.recordCreation(tb.id, randomUUID(), at(-MINUTE));
      const since = at(-HOUR);
      assert.deepEqual(await c.store.credentials.countCreationsSince(ta.id, since), { count: 0, oldest: null });
      assert.deepEqual(await c.store.credentials.countCreationsSince(tb.id, since), { count: 1, oldest: at(-MINUTE) });
      // what createClient does, in its transaction: half of the racers in each tenant
      const created = fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx, i) => {
          const tenant = i % 2 ? tb : ta;
          await tx.credentials.lockTenantForCreation(tenant.id);
          const window = await tx.credentials.countCreationsSince(tenant.id, since);
          if (window.count >= LIMIT) return false;
          const row = clientRow(tenant.id, { createdAt: at(i) });
          await tx.credentials.insertClient(row);
          await tx.credentials.recordCreation(tenant.id, row.id, at(i));
          return true;
        }),
      );
      assert.equal(created.filter((ok, i) => ok && i % 2 === 0).length, LIMIT, 'tenant A: exactly the limit');
      assert.equal(created.filter((ok, i) => ok && i % 2 === 1).length, LIMIT - 1, 'tenant B: the limit, less its earlier creation');
      assert.equal((await c.store.credentials.countCreationsSince(ta.id, since)).count, LIMIT);
      assert.equal((await c.store.credentials.listClients({ tenantIds: [ta.id], offset: 0, limit: 100 })).length, LIMIT);
      assert.equal((await c.store.credentials.countCreationsSince(ta.id, at(TX_RACERS))).count, 0, 'after `since` only');
    });

    it('secrets: live until expired or revoked, oldest first; revoking reaches one client’s secrets only', async () => {
      const row = await insert(a);
      const other = await insert(b);
      const old = secretRow(row, { createdAt: at(1) });
      const current = secretRow(row, { createdAt: at(2) });
      const gone = secretRow(row, { createdAt: at(3) });
      const theirs = secretRow(other);
      for (const s of [current, gone, old, theirs]) await c.store.credentials.insertSecret(s);
      await c.store.credentials.expireSecret(old.id, at(HOUR));
      await c.store.credentials.expireSecret(gone.id, T0);
      const live = await c.store.credentials.findLiveSecrets(row.id, at(MINUTE));
      assert.deepEqual(live, [
        { id: old.id, hash: old.hash, expiresAt: at(HOUR), revokedAt: null },
        { id: current.id, hash: current.hash, expiresAt: null, revokedAt: null },
      ]);
      assert.deepEqual(
        (await c.store.credentials.findLiveSecrets(row.id, at(HOUR))).map((s) => s.id),
        [current.id],
        'a secret past its grace period is not live',
      );
      c.clock.set(at(MINUTE));
      assert.deepEqual(
        (await c.store.credentials.getClient(row.id)).secrets.map((s) => [s.id, s.hint, s.expiresAt]),
        [
          [old.id, 'gh_…abcd', at(HOUR)],
          [current.id, 'gh_…abcd', null],
        ],
        'the client shows its live secrets as of the clock',
      );
      await c.store.credentials.revokeSecrets(row.id, at(2 * MINUTE));
      assert.deepEqual(await c.store.credentials.findLiveSecrets(row.id, at(MINUTE)), []);
      assert.deepEqual((await c.store.credentials.getClient(row.id)).secrets, []);
      assert.deepEqual(
        (await c.store.credentials.findLiveSecrets(other.id, at(MINUTE))).map((s) => s.id),
        [theirs.id],
        'the other client’s secret is untouched',
      );
      c.clock.set(T0);
    });

    it('role assignments are read back with the client, oldest first', async () => {
      const row = await insert(a);
      const later = { id: randomUUID(), tenantId: a.id, roleId: ROLE_IDS.Analyst, expiresAt: at(HOUR), principalId: row.id, createdAt: at(2) };
      const first = { id: randomUUID(), tenantId: b.id, roleId: ROLE_IDS.Administrator, expiresAt: null, principalId: row.id, createdAt: at(1) };
      await c.store.credentials.insertRoleAssignments([later, first]);
      await c.store.credentials.insertRoleAssignments([]);
      assert.deepEqual((await c.store.credentials.getClient(row.id)).roleAssignments, [
        { id: first.id, tenantId: b.id, roleId: ROLE_IDS.Administrator, expiresAt: null },
        { id: later.id, tenantId: a.id, roleId: ROLE_IDS.Analyst, expiresAt: at(HOUR) },
      ]);
    });

    it('listClients: the live clients of the tenants asked for, filtered, by creation then id, a page at a time', async () => {
      const ta = await childOf(c.store, a);
      const tb = await childOf(c.store, b);
      const rows: NewClient[] = [];
      for (let i = 0; i < 5; i++) rows.push(await insert(ta, { name: `svc ${i}`, nameNormalized: `svc ${i}`, createdAt: at(i * 1000) }));
      const same = await insert(ta, { name: 'same time', nameNormalized: 'same time', createdAt: at(2000) });
      const theirs = await insert(tb, { name: 'svc 0', nameNormalized: 'svc 0', createdAt: at(500) });
      const revoked = await insert(ta, { name: 'revoked', nameNormalized: 'revoked' });
      await c.store.credentials.revokeClient(revoked.id, at(1), 'admin');
      await c.store.credentials.insertRoleAssignments([
        { id: randomUUID(), tenantId: ta.id, roleId: ROLE_IDS.Auditor, expiresAt: null, principalId: rows[3]!.id, createdAt: T0 },
        { id: randomUUID(), tenantId: tb.id, roleId: ROLE_IDS.Auditor, expiresAt: null, principalId: theirs.id, createdAt: T0 },
      ]);
      const list = async (filter: Partial<Parameters<typeof c.store.credentials.listClients>[0]>) =>
        (await c.store.credentials.listClients({ tenantIds: [ta.id], offset: 0, limit: 100, ...filter })).map((x) => x.id);
      const ordered = [rows[0]!, rows[1]!, ...[rows[2]!, same].sort((x, y) => x.id.localeCompare(y.id)), rows[3]!, rows[4]!].map((r) => r.id);
      assert.deepEqual(await list({}), ordered, 'by creation then id; not the revoked one, nor the other tenant’s');
      assert.deepEqual(await list({ offset: 2, limit: 3 }), ordered.slice(2, 5));
      assert.deepEqual(await list({ tenantIds: [tb.id, ta.id], name: { pattern: 'svc 0', wildcard: false } }), [rows[0]!.id, theirs.id]);
      assert.deepEqual(
        await list({ name: { pattern: 'svc%', wildcard: true } }),
        ordered.filter((id) => id !== same.id),
      );
      assert.deepEqual(await list({ clientIds: [rows[1]!.clientId, rows[2]!.id.toUpperCase(), theirs.clientId, 'not-an-id'] }), [
        rows[1]!.id,
        rows[2]!.id,
      ]);
      assert.deepEqual(await list({ clientIds: [] }), []);
      assert.deepEqual(await list({ tenantIds: [ta.id, tb.id], roleIds: [ROLE_IDS.Auditor] }), [theirs.id, rows[3]!.id]);
      assert.deepEqual(await list({ roleIds: [] }), []);
      assert.deepEqual(await list({ tenantIds: [] }), []);
    });

    it('findAuthClient: a live client of an enabled tenant with its unrevoked secrets; nothing otherwise', async () => {
      const t = await childOf(c.store, a);
      const row = await insert(t);
      assert.deepEqual(await c.store.credentials.findAuthClient(row.clientId), {
        id: row.id,
        tenantId: t.id,
        clientId: row.clientId,
        environment: 'echo',
        secrets: [],
      });
      const live = secretRow(row);
      const grace = secretRow(row);
      const revoked = secretRow(row);
      for (const s of [live, grace, revoked]) await c.store.credentials.insertSecret(s);
      await c.store.credentials.expireSecret(grace.id, at(HOUR));
      await c.store.credentials.revokeSecrets(row.id, at(1));
      for (const s of [live, grace]) await c.store.credentials.insertSecret({ ...s, id: randomUUID(), hash: sha256(s.id) });
      const found = await c.store.credentials.findAuthClient(row.clientId);
      assert.equal(found?.secrets.length, 2, 'the revoked secrets are left out');
      assert.ok(found?.secrets.every((s) => s.revokedAt === null && s.hash.length === 32));
      assert.equal(await c.store.credentials.findAuthClient('no-such-client'), undefined);
      await c.store.tenants.updateTenant(t.id, { enabled: false, updatedAt: at(1) });
      assert.equal(await c.store.credentials.findAuthClient(row.clientId), undefined, 'a disabled tenant’s client obtains nothing');
      await c.store.tenants.updateTenant(t.id, { enabled: true, updatedAt: at(2) });
      await c.store.credentials.revokeClient(row.id, at(3), 'admin');
      assert.equal(await c.store.credentials.findAuthClient(row.clientId), undefined, 'nor a revoked client');
    });

    it('touchClient moves that client’s update stamp only', async () => {
      const row = await insert(a);
      const other = await insert(a);
      await c.store.credentials.touchClient(row.id, at(HOUR), 'editor');
      const touched = await c.store.credentials.getClient(row.id);
      assert.deepEqual([touched.updatedAt, touched.updatedBy, touched.createdAt], [at(HOUR), 'editor', T0]);
      const untouched = await c.store.credentials.getClient(other.id);
      assert.deepEqual([untouched.updatedAt, untouched.updatedBy], [T0, 'contract-test']);
    });

    it('recordSecretUse keeps the latest use of each secret, across calls and across the batches of one call', async () => {
      const row = await insert(a);
      const other = await insert(b);
      const [s1, s2, s3] = [secretRow(row), secretRow(row), secretRow(row)];
      const theirs = secretRow(other);
      for (const s of [s1, s2, s3, theirs]) await c.store.credentials.insertSecret(s);
      // one call with more uses than one statement takes (1000): s3's is in the second statement
      const unknown = Array.from({ length: 1000 }, (_, i) => ({ secretId: randomUUID(), at: at(i) }));
      await c.store.credentials.recordSecretUse([
        { secretId: s1.id, at: at(HOUR) },
        { secretId: s2.id, at: at(HOUR) },
        ...unknown,
        { secretId: s3.id, at: at(HOUR) },
      ]);
      const lastUsed = async () => {
        const read = await c.store.credentials.getClient(row.id);
        return [read.lastUsedAt, ...[s1, s2, s3].map((s) => read.secrets.find((x) => x.id === s.id)?.lastUsedAt)];
      };
      assert.deepEqual(await lastUsed(), [at(HOUR), at(HOUR), at(HOUR), at(HOUR)]);
      // a later call: an older use leaves s1 as it was; newer ones move s2 and s3
      await c.store.credentials.recordSecretUse([
        { secretId: s1.id, at: at(MINUTE) },
        { secretId: s2.id, at: at(2 * HOUR) },
        { secretId: s3.id, at: at(3 * HOUR) },
      ]);
      await c.store.credentials.recordSecretUse([]);
      assert.deepEqual(await lastUsed(), [at(3 * HOUR), at(HOUR), at(2 * HOUR), at(3 * HOUR)], 'the client’s last use is its secrets’ latest');
      assert.equal((await c.store.credentials.getClient(other.id)).lastUsedAt, null, 'another client’s secret is untouched');
    });

    it('recordSecretUse keeps the latest use when one call holds several uses of a secret', async () => {
      const row = await insert(a);
      const s = secretRow(row);
      await c.store.credentials.insertSecret(s);
      await c.store.credentials.recordSecretUse([
        { secretId: s.id, at: at(1) },
        { secretId: s.id, at: at(HOUR) },
        { secretId: s.id, at: at(2) },
      ]);
      assert.deepEqual((await c.store.credentials.getClient(row.id)).lastUsedAt, at(HOUR));
    });
  });
}
