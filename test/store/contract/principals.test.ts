// PrincipalStore contract (src/access/store.ts), on every engine: the principal behind a token,
// as of now: a client only with a secret of its own that is not revoked, only while the client
// lives and its tenant is enabled; a user only while active in an enabled tenant; the cut-off
// times that void earlier tokens; role assignments of that principal only, expired ones included.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { ROLE_IDS } from '../../../src/access/roles.js';
import type { Tenant } from '../../../src/tenants/model.js';
import { at, childOf, clientRow, type Contract, HOUR, newUser, openContract, sha256, T0, twoTenants } from './harness.js';
import { engines } from '../../helpers/engines.js';

for (const engine of engines()) {
  describe(`PrincipalStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    /** a client of the tenant with one secret */
    async function client(tenant: Tenant) {
      const row = clientRow(tenant.id);
      await c.store.credentials.insertClient(row);
      const secretId = randomUUID();
      await c.store.credentials.insertSecret({
        id: secretId,
        clientId: row.id,
        tenantId: tenant.id,
        hash: sha256(secretId),
        hint: 'h',
        createdAt: T0,
      });
      return { ...row, secretId };
    }

    it('findClientPrincipal: the client with its roles, when the secret is its own and unrevoked', async () => {
      const t = await childOf(c.store, a);
      const mine = await client(t);
      const theirs = await client(b);
      const role = { id: randomUUID(), tenantId: t.id, roleId: ROLE_IDS.Administrator, expiresAt: null };
      await c.store.credentials.insertRoleAssignments([{ ...role, principalId: mine.id, createdAt: T0 }]);
      assert.deepEqual(await c.store.principals.findClientPrincipal(mine.id, mine.secretId), {
        kind: 'client',
        id: mine.id,
        tenantId: t.id,
        clientId: mine.clientId,
        secretId: mine.secretId,
        assignments: [role],
        tokensValidAfter: null,
      });
      assert.equal(await c.store.principals.findClientPrincipal(mine.id, theirs.secretId), undefined, 'another client’s secret');
      assert.equal(await c.store.principals.findClientPrincipal(theirs.id, mine.secretId), undefined, 'nor the other way round');
      assert.equal(await c.store.principals.findClientPrincipal(randomUUID(), mine.secretId), undefined);
    });

    it('findClientPrincipal: nothing once the secret or the client is revoked, or while its tenant is disabled', async () => {
      const t = await childOf(c.store, a);
      const revokedSecret = await client(t);
      await c.store.credentials.revokeSecrets(revokedSecret.id, at(1));
      assert.equal(await c.store.principals.findClientPrincipal(revokedSecret.id, revokedSecret.secretId), undefined);

      const revokedClient = await client(t);
      await c.store.credentials.revokeClient(revokedClient.id, at(1), 'admin');
      assert.equal(await c.store.principals.findClientPrincipal(revokedClient.id, revokedClient.secretId), undefined);

      const live = await client(t);
      const sibling = await client(b);
      await c.store.tenants.updateTenant(t.id, { enabled: false, tokensValidAfter: at(HOUR), updatedAt: at(HOUR) });
      assert.equal(await c.store.principals.findClientPrincipal(live.id, live.secretId), undefined, 'a disabled tenant');
      assert.ok(await c.store.principals.findClientPrincipal(sibling.id, sibling.secretId), 'another tenant’s client still works');
      await c.store.tenants.updateTenant(t.id, { enabled: true, updatedAt: at(2 * HOUR) });
      const back = await c.store.principals.findClientPrincipal(live.id, live.secretId);
      assert.deepEqual(back?.tokensValidAfter, at(HOUR), 're-enabled: tokens from before the cut stay void');
    });

    it('findUserPrincipal: an active user of an enabled tenant, with the later of its own and its tenant’s cut-off', async () => {
      const t = await childOf(c.store, a);
      const u = await newUser(c.store, t.id);
      const other = await newUser(c.store, b.id);
      const role = { id: randomUUID(), tenantId: t.id, roleId: ROLE_IDS.Analyst, expiresAt: at(-HOUR) };
      await c.store.users.insertRoleAssignments([{ ...role, principalId: u.id, createdAt: T0 }]);
      assert.deepEqual(await c.store.principals.findUserPrincipal(u.id), {
        kind: 'user',
        id: u.id,
        tenantId: t.id,
        assignments: [role],
        tokensValidAfter: null,
      });
      assert.equal(await c.store.principals.findUserPrincipal(randomUUID()), undefined);

      await c.store.users.setDisabled(u.id, at(HOUR), at(HOUR), 'admin');
      assert.equal(await c.store.principals.findUserPrincipal(u.id), undefined, 'a disabled user');
      assert.ok(await c.store.principals.findUserPrincipal(other.id), 'another user is unaffected');
      await c.store.users.setDisabled(u.id, null, at(2 * HOUR), 'admin');
      assert.deepEqual((await c.store.principals.findUserPrincipal(u.id))?.tokensValidAfter, at(HOUR), 'the user’s own cut');

      await c.store.tenants.updateTenant(t.id, { enabled: false, tokensValidAfter: at(3 * HOUR), updatedAt: at(3 * HOUR) });
      assert.equal(await c.store.principals.findUserPrincipal(u.id), undefined, 'a disabled tenant');
      assert.ok(await c.store.principals.findUserPrincipal(other.id), 'another tenant’s user is unaffected');
      await c.store.tenants.updateTenant(t.id, { enabled: true, updatedAt: at(4 * HOUR) });
      assert.deepEqual((await c.store.principals.findUserPrincipal(u.id))?.tokensValidAfter, at(3 * HOUR), 'the tenant’s cut, being later');
      await c.store.users.resetSignIn(u.id, sha256('link'), at(10 * HOUR), at(5 * HOUR), 'admin');
      assert.deepEqual((await c.store.principals.findUserPrincipal(u.id))?.tokensValidAfter, at(5 * HOUR), 'a reset cuts again, later');
    });

    it('findAssignments: the principal’s own assignments of its kind, expired ones included', async () => {
      const u = await newUser(c.store, a.id);
      const cl = await client(a);
      const expired = { id: randomUUID(), tenantId: a.id, roleId: ROLE_IDS.Auditor, expiresAt: at(-HOUR) };
      const current = { id: randomUUID(), tenantId: b.id, roleId: ROLE_IDS.Auditor, expiresAt: null };
      await c.store.users.insertRoleAssignments([
        { ...expired, principalId: u.id, createdAt: T0 },
        { ...current, principalId: u.id, createdAt: T0 },
      ]);
      await c.store.credentials.insertRoleAssignments([
        { id: randomUUID(), tenantId: a.id, roleId: ROLE_IDS.Responder, expiresAt: null, principalId: cl.id, createdAt: T0 },
      ]);
      const byId = (x: { id: string }, y: { id: string }) => x.id.localeCompare(y.id);
      assert.deepEqual((await c.store.principals.findAssignments('user', u.id)).sort(byId), [expired, current].sort(byId));
      assert.equal((await c.store.principals.findAssignments('client', cl.id)).length, 1);
      assert.deepEqual(await c.store.principals.findAssignments('client', u.id), [], 'a user’s assignments are not a client’s');
      assert.deepEqual(await c.store.principals.findAssignments('user', cl.id), []);
      assert.deepEqual(await c.store.principals.findAssignments('user', randomUUID()), []);
    });
  });
}
