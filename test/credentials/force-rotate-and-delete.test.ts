import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, CREATE_CLIENT, createClient, rowCounts, seedTenant } from '../helpers/seed.js';

const FORCE = `mutation($id: ID!) {
  forceRotateClientSecret(id: $id) { client { id client_id tenant_id secrets { id hint expires_at } } client_secret }
}`;

const ROTATE = `mutation($id: ID!, $secret: String, $grace: Int) {
  rotateClientSecret(id: $id, secret: $secret, gracePeriodSeconds: $grace) { client { id } client_secret }
}`;

const DELETE = `mutation($id: ID!) {
  deleteClient(id: $id) { id name client_id tenant_id roles revoked_at updated_at secrets { id } }
}`;

const hintOf = (secret: string) => `gatehouse_cs_…${secret.slice(-4)}`;

function assertInvalidClient(res: Response, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.text}`);
  assert.equal(res.body.error, 'invalid_client', what);
  assert.match(String(res.headers['www-authenticate']), /^Basic/, what);
}

function assertInvalidToken(res: Response, what: string): void {
  assert.equal(res.status, 401, `${what}: ${res.text}`);
  assert.match(String(res.headers['www-authenticate']), /^Bearer .*error="invalid_token"/, what);
}

function errorCode(res: Response): string | undefined {
  return res.body?.errors?.[0]?.extensions?.code;
}

for (const engine of engines()) {
  describe(`forceRotateClientSecret and deleteClient (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    async function version(token: string): Promise<Response> {
      return t.request({ method: 'GET', url: '/assets/version', headers: { authorization: `Bearer ${token}` } });
    }

    /** a token's next call on both kinds of API endpoint */
    async function assertTokenWorks(token: string, what: string): Promise<void> {
      assert.equal((await version(token)).status, 200, what);
      const res = await t.gql(token, `{ clients(perPage: 1) { id } }`);
      assert.equal(res.status, 200, `${what}: ${res.text}`);
      assert.equal(res.body.errors, undefined, `${what}: ${res.text}`);
    }

    async function assertTokenRejected(token: string, what: string): Promise<void> {
      assertInvalidToken(await version(token), `${what} (/assets/version)`);
      const res = await t.gql(token, `{ clients { id } }`);
      assertInvalidToken(res, `${what} (/graphql)`);
      assert.equal(errorCode(res), 'UNAUTHENTICATED');
      assert.equal(res.body.data, undefined);
    }

    async function secretRows(clientUuid: string) {
      return t.db.kysely
        .selectFrom('client_secrets')
        .select(['id', 'expires_at', 'revoked_at'])
        .where('client_id', '=', clientUuid)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    }

    async function clientRow(clientUuid: string) {
      return t.db.kysely.selectFrom('clients').selectAll().where('id', '=', clientUuid).executeTakeFirstOrThrow();
    }

    describe('forceRotateClientSecret', () => {
      it('an Administrator of the tenant force-rotates: the old secret and its tokens stop at once, the new secret works', async () => {
        const tenant = await seedTenant(t, '1');
        const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
        const victim = await createClient(t, await t.rootToken(), 'leaked', { tenant });
        const oldToken = await t.token(victim.clientId, victim.secret);
        await assertTokenWorks(oldToken, 'token before force rotation');
        t.clock.advance(1000);
        const res = await t.gql(admin.token, FORCE, { id: victim.id });
        assert.equal(res.body.errors, undefined, res.text);
        const { client, client_secret } = res.body.data.forceRotateClientSecret;
        assert.match(client_secret, /^gatehouse_cs_[0-9A-Za-z]{49}$/);
        assert.notEqual(client_secret, victim.secret);
        assert.equal(client.id, victim.id);
        assert.equal(client.client_id, victim.clientId);
        assert.deepEqual(
          client.secrets.map((s: { hint: string; expires_at: string | null }) => [s.hint, s.expires_at]),
          [[hintOf(client_secret), null]],
        );
        assertInvalidClient(await t.tokenResponse(victim.clientId, victim.secret), 'old secret after force rotation');
        await assertTokenRejected(oldToken, 'token of the old secret');
        const newToken = await t.token(victim.clientId, client_secret);
        await assertTokenWorks(newToken, 'token of the new secret');
        // the old secret's rows are revoked, not merely expired
        const rows = await secretRows(victim.id);
        assert.equal(rows.length, 2);
        assert.equal(rows.filter((r) => r.revoked_at === null).length, 1);
        // audited, without the secret
        const audit = await t.db.kysely
          .selectFrom('audit_events')
          .selectAll()
          .where('target_id', '=', victim.id)
          .where('action', '=', 'client.secret_force_rotated')
          .execute();
        assert.equal(audit.length, 1);
        assert.equal(audit[0]!.actor_id, admin.id);
        assert.ok(!JSON.stringify(audit[0]!.details).includes(client_secret));
      });

      it('force-rotates by client_id, and also ends a secret in its grace period and the tokens of both', async () => {
        const tenant = await seedTenant(t, '1');
        const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
        const c = await createClient(t, await t.rootToken(), 'leaked-during-grace', { tenant });
        const tokenOfFirst = await t.token(c.clientId, c.secret);
        const rotated = await t.gql(admin.token, ROTATE, { id: c.id, secret: c.secret, grace: 3600 });
        assert.equal(rotated.body.errors, undefined, rotated.text);
        const second = rotated.body.data.rotateClientSecret.client_secret as string;
        const tokenOfSecond = await t.token(c.clientId, second);
        assert.ok(await t.token(c.clientId, c.secret)); // still in grace
        const res = await t.gql(admin.token, FORCE, { id: c.clientId });
        assert.equal(res.body.errors, undefined, res.text);
        const forced = res.body.data.forceRotateClientSecret;
        assert.equal(forced.client.client_id, c.clientId);
        assert.equal(forced.client.secrets.length, 1);
        assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'the grace secret after force rotation');
        assertInvalidClient(await t.tokenResponse(c.clientId, second), 'the current secret after force rotation');
        await assertTokenRejected(tokenOfFirst, 'token of the grace secret');
        await assertTokenRejected(tokenOfSecond, 'token of the replaced current secret');
        await assertTokenWorks(await t.token(c.clientId, forced.client_secret), 'token of the forced secret');
      });

      it('a partner Administrator force-rotates in a child tenant through X-Tenant-Context', async () => {
        const partner = await seedTenant(t, '1', { isPartner: true });
        const child = await seedTenant(t, partner);
        const partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
        const c = await createClient(t, await t.rootToken(), 'child-client', { tenant: child });
        const oldToken = await t.token(c.clientId, c.secret);
        const res = await t.gql(partnerAdmin.token, FORCE, { id: c.id }, { tenant: child });
        assert.equal(res.body.errors, undefined, res.text);
        assert.equal(res.body.data.forceRotateClientSecret.client.tenant_id, child);
        assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'old secret');
        await assertTokenRejected(oldToken, 'old token');
        assert.ok(await t.token(c.clientId, res.body.data.forceRotateClientSecret.client_secret));
        // without the header it acts in the partner tenant, where the child's client is not found
        const before = await rowCounts(t);
        const home = await t.gql(partnerAdmin.token, FORCE, { id: c.id });
        assert.equal(errorCode(home), 'NOT_FOUND', home.text);
        assert.deepEqual(await rowCounts(t), before);
      });

      it('an Operations client of tenant 1 force-rotates only clients it could have created, in any tenant', async () => {
        const ops = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
        const partner = await seedTenant(t, '1', { isPartner: true });
        const grandchild = await seedTenant(t, partner);
        const plain = await seedTenant(t, '1');
        // a client holding a tenant role: Operations could not give it that role, so it may not
        // take it over (it can revoke it with deleteClient); nothing changes
        for (const tenant of ['1', partner, grandchild, plain]) {
          const c = await createClient(t, await t.rootToken(), `ops-target-${tenant}`, { tenant });
          const before = await rowCounts(t);
          const res = await t.gql(ops.token, FORCE, { id: c.id }, { tenant });
          assert.equal(res.body.errors?.[0]?.extensions.code, 'FORBIDDEN', `${tenant}: ${res.text}`);
          assert.deepEqual(await rowCounts(t), before);
          assert.ok(await t.token(c.clientId, c.secret), `the secret in ${tenant} keeps working`);
        }
        // a fellow Operations client: allowed, and the old secret and its tokens end at once
        const peer = await clientWithRoles(t, '1', [ROLE_IDS.Operations]);
        const res = await t.gql(ops.token, FORCE, { id: peer.id }, { tenant: '1' });
        assert.equal(res.body.errors, undefined, res.text);
        assertInvalidClient(await t.tokenResponse(peer.clientId, peer.secret), 'old Operations secret');
        await assertTokenRejected(peer.token, 'old Operations token');
        assert.ok(await t.token(peer.clientId, res.body.data.forceRotateClientSecret.client_secret));
      });

      it('refuses Analyst, Responder, Auditor and Support: FORBIDDEN, nothing written, the secret keeps working', async () => {
        const tenant = await seedTenant(t, '1', { supportEnabled: true });
        const target = await createClient(t, await t.rootToken(), 'force-target', { tenant });
        const targetToken = await t.token(target.clientId, target.secret);
        const callers: { label: string; token: string; tenant?: string }[] = [];
        for (const role of [ROLE_IDS.Analyst, ROLE_IDS.Responder, ROLE_IDS.Auditor]) {
          callers.push({ label: role, token: (await clientWithRoles(t, tenant, [role])).token });
        }
        // Support reads this tenant (support is enabled) but changes nothing
        const support = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
        callers.push({ label: 'Support', token: support.token, tenant });
        // and a tenant without support access, which Support does not even reach
        const closed = await seedTenant(t, '1');
        const closedClient = await createClient(t, await t.rootToken(), 'force-closed-target', { tenant: closed });
        const rowsBefore = await secretRows(target.id);
        const before = await rowCounts(t);
        for (const caller of callers) {
          for (const id of [target.id, target.clientId]) {
            const res = await t.gql(caller.token, FORCE, { id }, { tenant: caller.tenant });
            assert.equal(errorCode(res), 'FORBIDDEN', `${caller.label}: ${res.text}`);
            assert.equal(res.body.data?.forceRotateClientSecret ?? null, null);
          }
        }
        // a Support client facing a tenant without support access is refused as well
        const res = await t.gql(support.token, FORCE, { id: closedClient.id }, { tenant: closed });
        assert.equal(errorCode(res), 'FORBIDDEN', res.text);
        assert.ok(await t.token(closedClient.clientId, closedClient.secret));
        assert.deepEqual(await rowCounts(t), before);
        assert.deepEqual(await secretRows(target.id), rowsBefore);
        assert.ok(await t.token(target.clientId, target.secret));
        await assertTokenWorks(targetToken, "the target's token");
      });
    });

    describe('deleteClient', () => {
      it('deletes by UUID: returns the Client with revoked_at set; its secret and issued tokens stop at once', async () => {
        const tenant = await seedTenant(t, '1');
        const c = await createClient(t, await t.rootToken(), 'delete-by-uuid', { tenant });
        const token = await t.token(c.clientId, c.secret);
        await assertTokenWorks(token, 'token before delete');
        t.clock.advance(1000);
        const res = await t.gql(await t.rootToken(), DELETE, { id: c.id }, { tenant });
        assert.equal(res.body.errors, undefined, res.text);
        const deleted = res.body.data.deleteClient;
        assert.equal(deleted.id, c.id);
        assert.equal(deleted.client_id, c.clientId);
        assert.equal(deleted.name, 'delete-by-uuid');
        assert.equal(deleted.tenant_id, tenant);
        assert.equal(deleted.revoked_at, t.clock.now().toISOString());
        assert.deepEqual(deleted.secrets, []);
        assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'secret of a deleted client');
        await assertTokenRejected(token, 'token of a deleted client');
        const row = await clientRow(c.id);
        assert.ok(row.revoked_at);
        assert.equal((await secretRows(c.id)).filter((s) => s.revoked_at === null).length, 0);
        const audit = await t.db.kysely
          .selectFrom('audit_events')
          .select('action')
          .where('target_id', '=', c.id)
          .where('action', '=', 'client.deleted')
          .execute();
        assert.equal(audit.length, 1);
      });

      it('deletes by client_id, and ends tokens of a secret in its grace period too', async () => {
        const tenant = await seedTenant(t, '1');
        const admin = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
        const c = await createClient(t, await t.rootToken(), 'delete-by-client-id', { tenant });
        const first = await t.token(c.clientId, c.secret);
        const rotated = await t.gql(admin.token, ROTATE, { id: c.id, secret: c.secret, grace: 3600 });
        const second = rotated.body.data.rotateClientSecret.client_secret as string;
        const secondToken = await t.token(c.clientId, second);
        const res = await t.gql(admin.token, DELETE, { id: c.clientId });
        assert.equal(res.body.errors, undefined, res.text);
        assert.equal(res.body.data.deleteClient.id, c.id);
        assert.ok(res.body.data.deleteClient.revoked_at);
        assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'grace secret of a deleted client');
        assertInvalidClient(await t.tokenResponse(c.clientId, second), 'current secret of a deleted client');
        await assertTokenRejected(first, 'token of the grace secret');
        await assertTokenRejected(secondToken, 'token of the current secret');
      });

      it('a deleted client deleting, rotating or listing with its own token is refused', async () => {
        const tenant = await seedTenant(t, '1');
        const self = await clientWithRoles(t, tenant, [ROLE_IDS.Administrator]);
        const res = await t.gql(self.token, DELETE, { id: self.id });
        assert.equal(res.body.errors, undefined, res.text);
        await assertTokenRejected(self.token, "the deleted client's own token");
        assertInvalidToken(await t.gql(self.token, ROTATE, { id: self.id, secret: self.secret }), 'rotate after delete');
      });

      it('deleting twice is NOT_FOUND, by UUID and by client_id, and writes nothing', async () => {
        const tenant = await seedTenant(t, '1');
        const c = await createClient(t, await t.rootToken(), 'delete-twice', { tenant });
        const first = await t.gql(await t.rootToken(), DELETE, { id: c.id }, { tenant });
        assert.equal(first.body.errors, undefined, first.text);
        const rowBefore = await clientRow(c.id);
        const before = await rowCounts(t);
        const unknown = await t.gql(await t.rootToken(), DELETE, { id: randomUUID() }, { tenant });
        assert.equal(errorCode(unknown), 'NOT_FOUND');
        for (const id of [c.id, c.clientId]) {
          t.clock.advance(1000);
          const res = await t.gql(await t.rootToken(), DELETE, { id }, { tenant });
          assert.equal(res.body.data.deleteClient, null);
          assert.equal(errorCode(res), 'NOT_FOUND', res.text);
          assert.deepEqual(res.body.errors, unknown.body.errors);
          // nor can a deleted client be rotated
          const force = await t.gql(await t.rootToken(), FORCE, { id }, { tenant });
          assert.equal(errorCode(force), 'NOT_FOUND', force.text);
          const rotate = await t.gql(await t.rootToken(), ROTATE, { id, secret: c.secret }, { tenant });
          assert.equal(errorCode(rotate), 'NOT_FOUND', rotate.text);
        }
        assert.deepEqual(await rowCounts(t), before);
        assert.deepEqual(await clientRow(c.id), rowBefore); // revoked_at keeps the first deletion's time
        assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), 'secret of a deleted client');
      });

      it('frees the name of a deleted client for reuse', async () => {
        const tenant = await seedTenant(t, '1');
        const token = await t.rootToken();
        const old = await createClient(t, token, 'reusable', { tenant });
        const dup = await t.gql(token, CREATE_CLIENT, { name: 'reusable' }, { tenant });
        assert.equal(errorCode(dup), 'CONFLICT');
        assert.equal((await t.gql(token, DELETE, { id: old.id }, { tenant })).body.errors, undefined);
        const fresh = await createClient(t, token, 'reusable', { tenant });
        assert.notEqual(fresh.id, old.id);
        assert.notEqual(fresh.clientId, old.clientId);
        assert.ok(await t.token(fresh.clientId, fresh.secret));
        assertInvalidClient(await t.tokenResponse(old.clientId, old.secret), 'the deleted namesake');
        const list = await t.gql(token, `{ clients(name: "reusable") { id } }`, undefined, { tenant });
        assert.deepEqual(list.body.data.clients, [{ id: fresh.id }]);
        // and the old one still cannot be deleted again by its client_id
        assert.equal(errorCode(await t.gql(token, DELETE, { id: old.clientId }, { tenant })), 'NOT_FOUND');
      });

      it('answers a client of another tenant with NOT_FOUND, like a nonexistent id, and leaves it unchanged', async () => {
        const tenantA = await seedTenant(t, '1');
        const tenantB = await seedTenant(t, '1');
        const adminA = await clientWithRoles(t, tenantA, [ROLE_IDS.Administrator]);
        const victim = await createClient(t, await t.rootToken(), 'foreign', { tenant: tenantB });
        const victimToken = await t.token(victim.clientId, victim.secret);
        const rowBefore = await clientRow(victim.id);
        const secretsBefore = await secretRows(victim.id);
        const before = await rowCounts(t);
        for (const doc of [DELETE, FORCE]) {
          const ref: Response[] = [];
          for (const id of [victim.id, victim.clientId, randomUUID(), 'e'.repeat(32)]) {
            ref.push(await t.gql(adminA.token, doc, { id }));
            // the root Administrator reaches tenant B, but acts in tenant A here
            ref.push(await t.gql(await t.rootToken(), doc, { id }, { tenant: tenantA }));
          }
          for (const res of ref) {
            assert.equal(res.status, 200, res.text);
            assert.equal(errorCode(res), 'NOT_FOUND', res.text);
            assert.deepEqual(res.body.errors, ref[0]!.body.errors);
          }
        }
        assert.deepEqual(await rowCounts(t), before);
        assert.deepEqual(await clientRow(victim.id), rowBefore);
        assert.deepEqual(await secretRows(victim.id), secretsBefore);
        assert.ok(await t.token(victim.clientId, victim.secret));
        await assertTokenWorks(victimToken, "the foreign client's token");
      });

      it('refuses Responder and Auditor: FORBIDDEN, nothing written', async () => {
        const tenant = await seedTenant(t, '1');
        const target = await createClient(t, await t.rootToken(), 'delete-target', { tenant });
        const targetToken = await t.token(target.clientId, target.secret);
        for (const role of [ROLE_IDS.Responder, ROLE_IDS.Auditor]) {
          const weak = await clientWithRoles(t, tenant, [role]);
          const rowBefore = await clientRow(target.id);
          const before = await rowCounts(t);
          for (const id of [target.id, target.clientId]) {
            const res = await t.gql(weak.token, DELETE, { id });
            assert.equal(res.body.data.deleteClient, null);
            assert.equal(errorCode(res), 'FORBIDDEN', res.text);
          }
          // not even itself
          const own = await t.gql(weak.token, DELETE, { id: weak.id });
          assert.equal(errorCode(own), 'FORBIDDEN', own.text);
          assert.deepEqual(await rowCounts(t), before);
          assert.deepEqual(await clientRow(target.id), rowBefore);
        }
        await assertTokenWorks(targetToken, "the target's token");
      });
    });

    it('forceRotateClientSecret and deleteClient reject a malformed id with BAD_USER_INPUT and change nothing', async () => {
      const tenant = await seedTenant(t, '1');
      const c = await createClient(t, await t.rootToken(), 'bad-id-target', { tenant });
      const before = await rowCounts(t);
      for (const doc of [FORCE, DELETE]) {
        for (const id of ['', 'x'.repeat(129), `${c.clientId}\u0000`, `${c.id}\u0000`]) {
          const res = await t.gql(await t.rootToken(), doc, { id }, { tenant });
          assert.equal(errorCode(res), 'BAD_USER_INPUT', `${JSON.stringify(id)}: ${res.text}`);
        }
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.ok(await t.token(c.clientId, c.secret));
    });

    describe('concurrency', () => {
      it('concurrent rotate and forceRotate on one client never leave two current secrets', async () => {
        const tenant = await seedTenant(t, '1');
        const token = await t.rootToken();
        for (let round = 0; round < 6; round++) {
          const c = await createClient(t, token, `race-${round}`, { tenant });
          // start them in alternating order, by UUID and by client_id
          const id = round % 2 === 0 ? c.id : c.clientId;
          const startRotate = () => t.gql(token, ROTATE, { id, secret: c.secret, grace: 3600 }, { tenant });
          const startForce = () => t.gql(token, FORCE, { id }, { tenant });
          let rotateP: Promise<Response>;
          let forceP: Promise<Response>;
          if (round % 2 === 0) {
            rotateP = startRotate();
            forceP = startForce();
          } else {
            forceP = startForce();
            rotateP = startRotate();
          }
          const [rotate, force] = await Promise.all([rotateP, forceP]);
          // the force rotation always succeeds; the rotation either ran first or finds its secret revoked
          assert.equal(force.body.errors, undefined, force.text);
          if (rotate.body.errors) assert.equal(errorCode(rotate), 'BAD_USER_INPUT', rotate.text);
          const now = t.clock.now();
          const live = (await secretRows(c.id)).filter((s) => s.revoked_at === null && (s.expires_at === null || s.expires_at > now));
          assert.equal(live.filter((s) => s.expires_at === null).length, 1, `round ${round}: current secrets`);
          assert.equal(live.length, 1, `round ${round}: live secrets`);
          // in either order the forced secret is the only one that works
          const forced = force.body.data.forceRotateClientSecret.client_secret as string;
          assert.ok(await t.token(c.clientId, forced));
          assertInvalidClient(await t.tokenResponse(c.clientId, c.secret), `round ${round}: original secret`);
          if (!rotate.body.errors) {
            assertInvalidClient(
              await t.tokenResponse(c.clientId, rotate.body.data.rotateClientSecret.client_secret),
              `round ${round}: secret of the losing rotation`,
            );
          }
        }
      });

      it('concurrent force rotations leave exactly one current secret', async () => {
        const tenant = await seedTenant(t, '1');
        const token = await t.rootToken();
        const c = await createClient(t, token, 'force-race', { tenant });
        const results = await Promise.all([1, 2, 3, 4].map(() => t.gql(token, FORCE, { id: c.id }, { tenant })));
        for (const r of results) assert.equal(r.body.errors, undefined, r.text);
        const live = (await secretRows(c.id)).filter((s) => s.revoked_at === null);
        assert.equal(live.length, 1);
        assert.equal(live[0]!.expires_at, null);
        const working: string[] = [];
        for (const r of results) {
          const secret = r.body.data.forceRotateClientSecret.client_secret as string;
          if ((await t.tokenResponse(c.clientId, secret)).status === 200) working.push(secret);
        }
        assert.equal(working.length, 1);
      });
    });
  });
}
