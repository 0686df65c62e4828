import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { generateSecret } from '../../src/credentials/secret.js';
import { ROOT_CLIENT_ID, startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, createClient, rowCounts, seedTenant } from '../helpers/seed.js';

const ROTATE = `mutation($id: ID!, $secret: String, $grace: Int) {
  rotateClientSecret(id: $id, secret: $secret, gracePeriodSeconds: $grace) {
    client { id name client_id tenant_id updated_at updated_by secrets { id hint created_at expires_at } }
    client_secret
  }
}`;

const SECRETS = `query($ids: [String]) { clients(clientIDs: $ids) { id secrets { id hint created_at expires_at } } }`;

const hintOf = (secret: string) => `gatehouse_cs_…${secret.slice(-4)}`;

function assertInvalidClient(res: Response, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.text}`);
  assert.equal(res.body.error, 'invalid_client', what);
  assert.match(String(res.headers['www-authenticate']), /^Basic/, what);
}

function errorCode(res: Response): string | undefined {
  return res.body?.errors?.[0]?.extensions?.code;
}

for (const engine of engines()) {
  describe(`rotateClientSecret (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    /** rotate as the root Administrator acting in `tenant` */
    async function rotate(tenant: string, variables: { id: string; secret?: string | null; grace?: number }): Promise<Response> {
      return t.gql(await t.rootToken(), ROTATE, variables, { tenant });
    }

    async function rotated(tenant: string, variables: { id: string; secret?: string | null; grace?: number }) {
      const res = await rotate(tenant, variables);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.rotateClientSecret as { client: any; client_secret: string };
    }

    /** the Client.secrets field of one client, read by the root Administrator */
    async function liveSecrets(
      tenant: string,
      clientId: string,
    ): Promise<{ id: string; hint: string; created_at: string; expires_at: string | null }[]> {
      const res = await t.gql(await t.rootToken(), SECRETS, { ids: [clientId] }, { tenant });
      assert.equal(res.body.errors, undefined, res.text);
      assert.equal(res.body.data.clients.length, 1, res.text);
      return res.body.data.clients[0].secrets;
    }

    async function secretRows(clientUuid: string) {
      return t.db.kysely
        .selectFrom('client_secrets')
        .select(['id', 'hint', 'created_at', 'expires_at', 'revoked_at'])
        .where('client_id', '=', clientUuid)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    }

    async function version(token: string): Promise<Response> {
      return t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${token}` } });
    }

    it('rotates by UUID: same client and client_id, a new secret returned once that works', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-by-uuid', { tenant });
      t.clock.advance(1000);
      const { client, client_secret } = await rotated(tenant, { id: c.id, secret: c.secret });
      assert.match(client_secret, /^gatehouse_cs_[0-9A-Za-z]{49}$/);
      assert.notEqual(client_secret, c.secret);
      assert.equal(client.id, c.id);
      assert.equal(client.client_id, c.clientId);
      assert.equal(client.name, 'rotate-by-uuid');
      assert.equal(client.tenant_id, tenant);
      assert.equal(client.updated_at, t.clock.now().toISOString());
      assert.equal(client.secrets.length, 1);
      assert.equal(client.secrets[0].hint, hintOf(client_secret));
      assert.equal(client.secrets[0].expires_at, null);
      // the new secret obtains tokens under the same client_id
      assert.ok(await t.token(c.clientId, client_secret));
      // and is never shown again
      const list = await t.gql(
        await t.rootToken(),
        `{ clients { id name client_id secrets { id hint created_at expires_at last_used_at } } }`,
        undefined,
        { tenant },
      );
      assert.equal(list.status, 200);
      assert.ok(list.text.includes(c.clientId));
      assert.ok(!list.text.includes(client_secret));
      assert.ok(!list.text.includes(c.secret));
    });

    it('rotates by client_id, and the client_id stays the same', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-by-client-id', { tenant });
      const { client, client_secret } = await rotated(tenant, { id: c.clientId, secret: c.secret });
      assert.equal(client.id, c.id);
      assert.equal(client.client_id, c.clientId);
      assert.ok(await t.token(c.clientId, client_secret));
      // and again by client_id, now with the new current secret
      const again = await rotated(tenant, { id: c.clientId, secret: client_secret });
      assert.equal(again.client.client_id, c.clientId);
      assert.ok(await t.token(c.clientId, again.client_secret));
    });

    it("rejects a wrong, empty, missing or another client's secret with BAD_USER_INPUT and changes nothing", async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-wrong-secret', { tenant });
      const other = await createClient(t, await t.rootToken(), 'rotate-wrong-secret-other', { tenant });
      const rowsBefore = await secretRows(c.id);
      const before = await rowCounts(t);
      const attempts: { label: string; secret: string | null | undefined }[] = [
        { label: 'well-formed but wrong', secret: generateSecret() },
        { label: 'mangled current secret', secret: c.secret.slice(0, -1) + (c.secret.endsWith('a') ? 'b' : 'a') },
        { label: 'not our format', secret: 'definitely-not-the-secret-of-this-client-0123456789' },
        { label: 'empty', secret: '' },
        { label: 'null', secret: null },
        { label: 'omitted', secret: undefined },
        { label: "another client's secret", secret: other.secret },
      ];
      for (const { label, secret } of attempts) {
        for (const id of [c.id, c.clientId]) {
          const res = await rotate(tenant, { id, ...(secret !== undefined ? { secret } : {}) });
          assert.equal(res.status, 200, `${label}: ${res.text}`);
          assert.equal(res.body.data.rotateClientSecret, null, label);
          assert.equal(errorCode(res), 'BAD_USER_INPUT', `${label}: ${res.text}`);
          if (typeof secret === 'string' && secret !== '') assert.ok(!res.text.includes(secret), `${label}: the secret is echoed`);
        }
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.deepEqual(await secretRows(c.id), rowsBefore);
      // both clients keep working with their own secrets
      assert.ok(await t.token(c.clientId, c.secret));
      assert.ok(await t.token(other.clientId, other.secret));
    });

    it('rejects a malformed id (empty, over 128 characters, with a NUL) with BAD_USER_INPUT and changes nothing', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-bad-id', { tenant });
      const before = await rowCounts(t);
      for (const id of ['', 'x'.repeat(129), `${c.clientId}\u0000`, '\u0000']) {
        const res = await rotate(tenant, { id, secret: c.secret });
        assert.equal(errorCode(res), 'BAD_USER_INPUT', `${JSON.stringify(id)}: ${res.text}`);
        assert.equal(res.body.data?.rotateClientSecret ?? null, null);
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.ok(await t.token(c.clientId, c.secret));
    });

    it('without a grace period the old secret stops at once, but tokens obtained with it keep working', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-no-grace', { tenant });
      const oldToken = await t.token(c.clientId, c.secret);
      const { client, client_secret } = await rotated(tenant, { id: c.id, secret: c.secret });
      assert.equal(client.secrets.length, 1);
      assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'old secret right after rotation');
      assert.ok(await t.token(c.clientId, client_secret));
      // plain rotation is not revocation: the token obtained before still works
      assert.equal((await version(oldToken)).status, 200);
      const res = await t.gql(oldToken, `{ clients { id client_id } }`);
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.data.clients.some((x: { client_id: string }) => x.client_id === c.clientId));
      // an explicit gracePeriodSeconds of 0 behaves the same
      const again = await rotated(tenant, { id: c.id, secret: client_secret, grace: 0 });
      assertInvalidClient(await t.tokenResponse(c.clientId, client_secret), 'old secret after rotation with grace 0');
      assert.ok(await t.token(c.clientId, again.client_secret));
      assert.equal((await version(oldToken)).status, 200);
    });

    it('with gracePeriodSeconds=3600 both secrets work until the grace period ends, then only the new one', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-grace', { tenant });
      t.clock.advance(1000); // the new secret is created after the first
      const rotatedAt = t.clock.now();
      const graceEnd = new Date(rotatedAt.getTime() + 3600_000).toISOString();
      const { client, client_secret } = await rotated(tenant, { id: c.id, secret: c.secret, grace: 3600 });
      assert.equal(client.secrets.length, 2);
      const [oldInfo, newInfo] = client.secrets;
      assert.equal(oldInfo.hint, hintOf(c.secret));
      assert.equal(oldInfo.expires_at, graceEnd);
      assert.equal(newInfo.hint, hintOf(client_secret));
      assert.equal(newInfo.expires_at, null);
      assert.ok(await t.token(c.clientId, c.secret));
      assert.ok(await t.token(c.clientId, client_secret));
      t.clock.advance(3599_000);
      assert.ok(await t.token(c.clientId, c.secret));
      assert.ok(await t.token(c.clientId, client_secret));
      assert.equal((await liveSecrets(tenant, c.clientId)).length, 2);
      t.clock.advance(1000); // now exactly at the end of the grace period
      assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'old secret at the end of the grace period');
      assert.ok(await t.token(c.clientId, client_secret));
      const live = await liveSecrets(tenant, c.clientId);
      assert.deepEqual(
        live.map((s) => [s.hint, s.expires_at]),
        [[hintOf(client_secret), null]],
      );
      t.clock.advance(600_000);
      assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'old secret ten minutes later');
    });

    it('keeps at most two live secrets: rotating again during grace ends the first, the middle one stays in grace', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-twice', { tenant });
      const s1 = c.secret;
      const s2 = (await rotated(tenant, { id: c.id, secret: s1, grace: 3600 })).client_secret;
      t.clock.advance(60_000);
      const secondAt = t.clock.now();
      const { client, client_secret: s3 } = await rotated(tenant, { id: c.id, secret: s2, grace: 3600 });
      const expected = [
        [hintOf(s2), new Date(secondAt.getTime() + 3600_000).toISOString()],
        [hintOf(s3), null],
      ];
      assert.deepEqual(
        client.secrets.map((s: { hint: string; expires_at: string | null }) => [s.hint, s.expires_at]),
        expected,
      );
      assert.deepEqual(
        (await liveSecrets(tenant, c.clientId)).map((s) => [s.hint, s.expires_at]),
        expected,
      );
      assertInvalidClient(await t.tokenResponse(c.clientId, s1), 'the first secret after the second rotation');
      assert.ok(await t.token(c.clientId, s2));
      assert.ok(await t.token(c.clientId, s3));
      // in the database: three secrets, two of them live, one current
      const now = t.clock.now();
      const rows = await secretRows(c.id);
      assert.equal(rows.length, 3);
      const live = rows.filter((r) => r.revoked_at === null && (r.expires_at === null || r.expires_at > now));
      assert.equal(live.length, 2);
      assert.equal(live.filter((r) => r.expires_at === null).length, 1);
      // the middle one ends at its own grace end
      t.clock.advance(3600_000);
      assertInvalidClient(await t.tokenResponse(c.clientId, s2), 'the middle secret after its grace period');
      assert.ok(await t.token(c.clientId, s3));
    });

    it('only the current secret may rotate: the one in its grace period is refused', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-with-grace-secret', { tenant });
      const s2 = (await rotated(tenant, { id: c.id, secret: c.secret, grace: 3600 })).client_secret;
      const rowsBefore = await secretRows(c.id);
      const before = await rowCounts(t);
      for (const grace of [undefined, 0, 3600]) {
        const res = await rotate(tenant, { id: c.id, secret: c.secret, ...(grace !== undefined ? { grace } : {}) });
        assert.equal(errorCode(res), 'BAD_USER_INPUT', res.text);
        assert.equal(res.body.data?.rotateClientSecret ?? null, null);
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.deepEqual(await secretRows(c.id), rowsBefore);
      // both still work, the old one until its grace end
      assert.ok(await t.token(c.clientId, c.secret));
      assert.ok(await t.token(c.clientId, s2));
    });

    it('rejects gracePeriodSeconds below 0 or above 604800 with BAD_USER_INPUT, and accepts 604800', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-grace-range', { tenant });
      const before = await rowCounts(t);
      for (const grace of [-1, -3600, 604801, 2_000_000_000]) {
        const res = await rotate(tenant, { id: c.id, secret: c.secret, grace });
        assert.equal(errorCode(res), 'BAD_USER_INPUT', `${grace}: ${res.text}`);
        assert.equal(res.body.data?.rotateClientSecret ?? null, null);
      }
      // not an integer: rejected by the GraphQL layer before anything runs
      const fraction = await rotate(tenant, { id: c.id, secret: c.secret, grace: 1.5 });
      assert.equal(errorCode(fraction), 'BAD_USER_INPUT', fraction.text);
      assert.deepEqual(await rowCounts(t), before);
      assert.ok(await t.token(c.clientId, c.secret));
      t.clock.advance(1000); // the new secret is created after the first
      const { client, client_secret } = await rotated(tenant, { id: c.id, secret: c.secret, grace: 604800 });
      assert.equal(client.secrets[0].hint, hintOf(c.secret));
      assert.equal(client.secrets[0].expires_at, new Date(t.clock.now().getTime() + 604800_000).toISOString());
      assert.ok(await t.token(c.clientId, c.secret));
      assert.ok(await t.token(c.clientId, client_secret));
    });

    it('lets a client rotate its own secret with its own token, even with only the Responder role', async () => {
      const tenant = await seedTenant(t, '1');
      const responder = await clientWithRoles(t, tenant, [ROLE_IDS.Responder]);
      // by client_id, acting in its home tenant without X-Tenant-Context
      const res = await t.gql(responder.token, ROTATE, { id: responder.clientId, secret: responder.secret });
      assert.equal(res.body.errors, undefined, res.text);
      const s2 = res.body.data.rotateClientSecret.client_secret as string;
      assert.equal(res.body.data.rotateClientSecret.client.client_id, responder.clientId);
      assert.equal(res.body.data.rotateClientSecret.client.updated_by, responder.id);
      assertInvalidClient(await t.tokenResponse(responder.clientId, responder.secret), "the Responder's old secret");
      assert.ok(await t.token(responder.clientId, s2));
      // by UUID, with X-Tenant-Context naming its own tenant, still with the token of the first secret
      const res2 = await t.gql(responder.token, ROTATE, { id: responder.id, secret: s2, grace: 60 }, { tenant });
      assert.equal(res2.body.errors, undefined, res2.text);
      const s3 = res2.body.data.rotateClientSecret.client_secret as string;
      assert.ok(await t.token(responder.clientId, s2));
      assert.ok(await t.token(responder.clientId, s3));
      // proving possession is still required for one's own secret
      const before = await rowCounts(t);
      const wrong = await t.gql(responder.token, ROTATE, { id: responder.id, secret: generateSecret() });
      assert.equal(errorCode(wrong), 'BAD_USER_INPUT', wrong.text);
      assert.deepEqual(await rowCounts(t), before);
    });

    it('refuses an Auditor or Responder rotating another client: FORBIDDEN, nothing written', async () => {
      const tenant = await seedTenant(t, '1');
      const target = await createClient(t, await t.rootToken(), 'rotate-target', { tenant });
      for (const role of [ROLE_IDS.Auditor, ROLE_IDS.Responder]) {
        const weak = await clientWithRoles(t, tenant, [role]);
        const rowsBefore = await secretRows(target.id);
        const before = await rowCounts(t);
        for (const id of [target.id, target.clientId]) {
          // even with the right secret in hand
          const res = await t.gql(weak.token, ROTATE, { id, secret: target.secret });
          assert.equal(res.body.data?.rotateClientSecret ?? null, null);
          assert.equal(errorCode(res), 'FORBIDDEN', res.text);
        }
        assert.deepEqual(await rowCounts(t), before);
        assert.deepEqual(await secretRows(target.id), rowsBefore);
      }
      assert.ok(await t.token(target.clientId, target.secret));
    });

    it('answers a client of another tenant with NOT_FOUND, identical to a nonexistent id, and changes nothing', async () => {
      const tenantA = await seedTenant(t, '1');
      const tenantB = await seedTenant(t, '1');
      const adminA = await clientWithRoles(t, tenantA, [ROLE_IDS.Administrator]);
      const victim = await createClient(t, await t.rootToken(), 'rotate-victim', { tenant: tenantB });
      const rowsBefore = await secretRows(victim.id);
      const before = await rowCounts(t);
      const answers: Response[] = [];
      for (const id of [victim.id, victim.clientId, randomUUID(), 'f'.repeat(32)]) {
        answers.push(await t.gql(adminA.token, ROTATE, { id, secret: victim.secret }));
        // the root Administrator reaches tenant B, but acts in tenant A here
        answers.push(await rotate(tenantA, { id, secret: victim.secret }));
      }
      for (const res of answers) {
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.data?.rotateClientSecret ?? null, null);
        assert.equal(errorCode(res), 'NOT_FOUND', res.text);
        assert.deepEqual(res.body.errors, answers[0]!.body.errors);
        assert.deepEqual(res.body.error, answers[0]!.body.error);
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.deepEqual(await secretRows(victim.id), rowsBefore);
      assert.ok(await t.token(victim.clientId, victim.secret));
    });

    it('writes one client.secret_rotated audit row per rotation, never containing a secret', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'rotate-audited', { tenant });
      const root = await t.db.kysely.selectFrom('clients').select('id').where('client_id', '=', ROOT_CLIENT_ID).executeTakeFirstOrThrow();
      const s2 = (await rotated(tenant, { id: c.id, secret: c.secret })).client_secret;
      t.clock.advance(1000);
      const s3 = (await rotated(tenant, { id: c.clientId, secret: s2, grace: 600 })).client_secret;
      // a refused rotation writes no audit row
      await rotate(tenant, { id: c.id, secret: c.secret });
      const rows = await t.db.kysely
        .selectFrom('audit_events')
        .selectAll()
        .where('target_id', '=', c.id)
        .where('action', '=', 'client.secret_rotated')
        .orderBy('occurred_at')
        .execute();
      assert.equal(rows.length, 2);
      for (const [i, row] of rows.entries()) {
        assert.equal(String(row.tenant_id), tenant);
        assert.equal(row.actor_kind, 'client');
        assert.equal(row.actor_id, root.id);
        assert.equal(row.target_kind, 'client');
        const text = JSON.stringify(row.details);
        for (const secret of [c.secret, s2, s3]) assert.ok(!text.includes(secret), `audit row ${i} contains a secret`);
      }
      // what it may carry is the hint of the new secret
      const details = rows.map((r) => (typeof r.details === 'string' ? JSON.parse(r.details) : r.details));
      assert.equal(details[0].secret_hint, hintOf(s2));
      assert.equal(details[1].secret_hint, hintOf(s3));
      // nowhere in the audit table or the logs
      const all = JSON.stringify(await t.db.kysely.selectFrom('audit_events').selectAll().execute());
      const logs = t.logs.join('\n');
      for (const secret of [c.secret, s2, s3]) {
        assert.ok(!all.includes(secret), 'a secret is in audit_events');
        assert.ok(!logs.includes(secret), 'a secret is in the logs');
      }
    });
  });
}
