// Disabling a tenant cuts its principals' access; enabling it again must not revive the tokens
// they held before. New tokens, requested after the tenant is enabled again, work.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { disableExpiredTenants } from '../../src/tenants/expiry.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const UPDATE = `mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { id enabled } }`;
const DAY = 86_400_000;

for (const engine of engines()) {
  describe(`tokens after a tenant is disabled and enabled again (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    const version = (token: string) => t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${token}` } });
    const setEnabled = async (id: string, u: Record<string, unknown>, enabled: boolean) => {
      // the clock moves by days here: a root token of the moment, not the cached one
      const res = await tq(t, await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), UPDATE, { id, u });
      assert.equal(res.body.errors, undefined, res.text);
      assert.equal(res.body.data.updateTenant.enabled, enabled);
    };

    it('a token from before updateTenant disable stays refused after the tenant is enabled again', async () => {
      const tenant = await createTenant(t, '1');
      const client = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      assert.equal((await version(client.token)).status, 200);

      t.clock.advance(1000);
      await setEnabled(tenant, { disable: true }, false);
      assert.equal((await version(client.token)).status, 401);

      t.clock.advance(60_000);
      await setEnabled(tenant, { environments: [{ name: 'echo', enabled: true }] }, true);
      const old = await version(client.token);
      assert.equal(old.status, 401);
      assert.match(String(old.headers['www-authenticate']), /invalid_token/);
      assert.match(old.body.message, /before its tenant was disabled/);

      // the same client asks again and is served
      const fresh = await t.token(client.clientId, client.secret);
      assert.equal((await version(fresh)).status, 200);
      // and on the GraphQL interface too
      const listed = await t.gql(fresh, '{ clients { client_id } }');
      assert.equal(listed.status, 200, listed.text);
      assert.equal((await t.gql(client.token, '{ clients { client_id } }')).status, 401);
    });

    it('changes that do not disable the tenant leave its tokens alone', async () => {
      const tenant = await createTenant(t, '1', { environments: ['echo', 'pilot'] });
      const client = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      t.clock.advance(1000);
      await setEnabled(tenant, { name: 'renamed', environments: [{ name: 'pilot', enabled: false }] }, true);
      assert.equal((await version(client.token)).status, 200);
    });
    it('a token from before the expiry job disabled the tenant stays refused after it is enabled again', async () => {
      const tenant = await createTenant(t, '1', { token: await t.token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET) });
      const client = await clientWithRoles(t, tenant, [ROLE_IDS.Analyst]);
      await setEnabled(tenant, { expiresAt: new Date(t.clock.now().getTime() + DAY).toISOString() }, true);

      t.clock.advance(DAY + (t.config.expiryGraceDays + 1) * DAY);
      assert.deepEqual(await disableExpiredTenants(t.service.store, t.clock, t.config.expiryGraceDays), [tenant]);
      assert.equal((await version(client.token)).status, 401);

      t.clock.advance(1000);
      await setEnabled(tenant, { clearExpiration: true, environments: [{ name: 'echo', enabled: true }] }, true);
      assert.equal((await version(client.token)).status, 401);
      assert.equal((await version(await t.token(client.clientId, client.secret))).status, 200);
    });
  });
}
