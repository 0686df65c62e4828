// The one way a user is created (src/users/creation.ts, used by the user service, first start and
// SSO sign-in), on every engine: the row, its roles in its home tenant and the user.created
// event in one go; an address a user of the same tenant holds, or one an account proved in any
// tenant, in any spelling that has the same key, is CONFLICT and leaves nothing behind.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { AppError } from '../../src/errors.js';
import type { Tenant } from '../../src/tenants/model.js';
import { addUser, EMAIL_PROVEN, EMAIL_TAKEN, type UserCreation } from '../../src/users/creation.js';
import { checkEmail } from '../../src/users/model.js';
import { type Contract, newTenant, openContract, ROOT, sha256, T0, twoTenants } from '../store/contract/harness.js';
import { engines } from '../helpers/engines.js';

for (const engine of engines()) {
  describe(`creating a user (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    const creation = (tenant: Tenant, email: string, over: Partial<UserCreation> = {}): UserCreation => ({
      tenantId: tenant.id,
      email: checkEmail(email),
      displayName: 'Pat',
      passwordHash: null,
      setup: { tokenHash: sha256(email), expiresAt: new Date(T0.getTime() + 3_600_000) },
      roleIds: [ROLE_IDS.Analyst, ROLE_IDS.Auditor],
      createdAt: T0,
      actor: { kind: 'user', id: '0b5e1c2a-0000-4000-8000-000000000001' },
      event: { via: 'test' },
      ...over,
    });

    const events = (userId: string) =>
      c.db.kysely
        .selectFrom('audit_events')
        .select(['action', 'tenant_id', 'actor_kind', 'actor_id', 'details'])
        .where('target_id', '=', userId)
        .execute();

    it('writes the user, its roles in its home tenant and the user.created event', async () => {
      const id = await c.store.transaction((tx) => addUser(tx, creation(a, 'Pat@Example.com')));
      const user = await c.store.users.findUser(id);
      assert.equal(user?.tenantId, a.id);
      assert.equal(user?.email, 'Pat@Example.com');
      assert.equal(user?.emailNormalized, 'pat@example.com');
      assert.equal(user?.createdBy, '0b5e1c2a-0000-4000-8000-000000000001');
      assert.deepEqual(user?.setupExpiresAt, new Date(T0.getTime() + 3_600_000));
      assert.deepEqual(
        user?.roleAssignments.map((r) => [r.tenantId, r.roleId]).sort(),
        [
          [a.id, ROLE_IDS.Analyst],
          [a.id, ROLE_IDS.Auditor],
        ].sort(),
      );
      const written = await events(id);
      assert.equal(written.length, 1);
      assert.deepEqual(
        { ...written[0], tenant_id: String(written[0]!.tenant_id) },
        {
          action: 'user.created',
          tenant_id: a.id,
          actor_kind: 'user',
          actor_id: '0b5e1c2a-0000-4000-8000-000000000001',
          details: { email: 'Pat@Example.com', roles: [ROLE_IDS.Analyst, ROLE_IDS.Auditor], via: 'test' },
        },
      );
    });

    it('by the system: no created_by; with no event asked, none is written', async () => {
      const id = await c.store.transaction((tx) =>
        addUser(tx, creation(a, 'system-made@example.com', { actor: { kind: 'system', id: 'bootstrap' }, event: null, setup: null })),
      );
      const user = await c.store.users.findUser(id);
      assert.equal(user?.createdBy, null);
      assert.equal(user?.setupExpiresAt, null);
      assert.deepEqual(await events(id), []);
    });

    it('an address a user of the same tenant holds, in any spelling, is CONFLICT, and nothing is left', async () => {
      await c.store.transaction((tx) => addUser(tx, creation(a, 'taken@example.com')));
      await refused(a, 'TAKEN@example.com', EMAIL_TAKEN);
    });

    it('an address nobody proved does not block another tenant; once proven, every tenant is refused with words that name none', async () => {
      await c.store.transaction((tx) => addUser(tx, creation(a, 'squat@example.com')));
      const id = await c.store.transaction((tx) => addUser(tx, creation(b, 'Squat@example.com')));
      await c.db.kysely.updateTable('users').set({ email_verified_at: T0 }).where('id', '=', id).execute();
      const third = await newTenant(c.store, ROOT, '1.', { name: 'Tenant C', at: T0 });
      await refused(third, 'squat@example.com', EMAIL_PROVEN);
      await refused(a, 'SQUAT@example.com', EMAIL_PROVEN);
      const holders = await c.db.kysely
        .selectFrom('users')
        .select('tenant_id')
        .where('email_normalized', '=', 'squat@example.com')
        .orderBy('created_at')
        .execute();
      assert.equal(holders.length, 2);
    });

    async function refused(tenant: Tenant, spelling: string, words: string) {
      const before = await c.db.kysely
        .selectFrom('role_assignments')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      await assert.rejects(
        c.store.transaction((tx) => addUser(tx, creation(tenant, spelling))),
        (err: unknown) => err instanceof AppError && err.code === 'CONFLICT' && err.message === words,
      );
      const after = await c.db.kysely
        .selectFrom('role_assignments')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(after.n), Number(before.n), 'no role assignment of a user that was not created');
    }
  });
}
