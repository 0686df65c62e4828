import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { createClient, seedTenant, type SeededClient } from '../helpers/seed.js';

const CLIENT = `query($ids: [String]) { clients(clientIDs: $ids) { id last_used_at secrets { id hint expires_at last_used_at } } }`;

const ROTATE = `mutation($id: ID!, $secret: String, $grace: Int) {
  rotateClientSecret(id: $id, secret: $secret, gracePeriodSeconds: $grace) { client { id } client_secret }
}`;

const hintOf = (secret: string) => `gatehouse_cs_…${secret.slice(-4)}`;

for (const engine of engines()) {
  describe(`last_used_at (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    async function seeded(name: string): Promise<SeededClient> {
      const tenant = await seedTenant(t, '1');
      return createClient(t, await t.rootToken(), name, { tenant });
    }

    /** the Client as the root Administrator reads it */
    async function read(
      c: SeededClient,
    ): Promise<{ last_used_at: string | null; secrets: { id: string; hint: string; expires_at: string | null; last_used_at: string | null }[] }> {
      const res = await t.gql(await t.rootToken(), CLIENT, { ids: [c.clientId] }, { tenant: c.tenantId });
      assert.equal(res.body.errors, undefined, res.text);
      assert.equal(res.body.data.clients.length, 1);
      return res.body.data.clients[0];
    }

    /** client_secrets.last_used_at straight from the database, oldest secret first */
    async function stored(c: SeededClient): Promise<(Date | null)[]> {
      const rows = await t.db.kysely
        .selectFrom('client_secrets')
        .select('last_used_at')
        .where('client_id', '=', c.id)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map((r) => r.last_used_at);
    }

    it('is null before any token is obtained', async () => {
      const c = await seeded('never-used');
      await t.service.lastUsed.flush();
      const client = await read(c);
      assert.equal(client.last_used_at, null);
      assert.equal(client.secrets.length, 1);
      assert.equal(client.secrets[0]!.last_used_at, null);
      assert.deepEqual(await stored(c), [null]);
      // a failed token request is not a use
      const res = await t.tokenResponse(c.clientId, c.secret.slice(0, -2) + 'zz');
      assert.equal(res.status, 401);
      await t.service.lastUsed.flush();
      assert.equal((await read(c)).last_used_at, null);
      // nor is one with the right secret that is refused all the same (no token was issued)
      for (const extra of [{ scope: 'Administrator' }, { resource: 'https://elsewhere.example' }]) {
        const refused = await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/token',
          headers: { authorization: 'Basic ' + Buffer.from(`${c.clientId}:${c.secret}`).toString('base64'), 'content-type': 'application/json' },
          payload: { grant_type: 'client_credentials', ...extra },
        });
        assert.equal(refused.status, 400, refused.text);
      }
      await t.service.lastUsed.flush();
      assert.equal((await read(c)).last_used_at, null);
      assert.deepEqual(await stored(c), [null]);
    });

    it('a token request writes nothing; the flush writes the clock time to the secret and the client', async () => {
      const c = await seeded('used-once');
      t.clock.advance(5000);
      const usedAt = t.clock.now();
      assert.ok(await t.token(c.clientId, c.secret));
      // the token endpoint did not write: still null in the database
      assert.deepEqual(await stored(c), [null]);
      t.clock.advance(7000); // the flush happens later; the time of use is what is stored
      await t.service.lastUsed.flush();
      assert.deepEqual(await stored(c), [usedAt]);
      const client = await read(c);
      assert.equal(client.last_used_at, usedAt.toISOString());
      assert.equal(client.secrets[0]!.last_used_at, usedAt.toISOString());
    });

    it('records each of two live secrets (rotation with grace) on its own', async () => {
      const c = await seeded('two-secrets');
      t.clock.advance(1000); // the new secret is created after the first
      const res = await t.gql(await t.rootToken(), ROTATE, { id: c.id, secret: c.secret, grace: 3600 }, { tenant: c.tenantId });
      assert.equal(res.body.errors, undefined, res.text);
      const newSecret = res.body.data.rotateClientSecret.client_secret as string;
      t.clock.advance(10_000);
      const oldUsedAt = t.clock.now();
      assert.ok(await t.token(c.clientId, c.secret));
      t.clock.advance(10_000);
      const newUsedAt = t.clock.now();
      assert.ok(await t.token(c.clientId, newSecret));
      assert.deepEqual(await stored(c), [null, null]);
      await t.service.lastUsed.flush();
      assert.deepEqual(await stored(c), [oldUsedAt, newUsedAt]);
      const client = await read(c);
      const bySecret = Object.fromEntries(client.secrets.map((s) => [s.hint, s.last_used_at]));
      assert.deepEqual(bySecret, { [hintOf(c.secret)]: oldUsedAt.toISOString(), [hintOf(newSecret)]: newUsedAt.toISOString() });
      assert.equal(client.last_used_at, newUsedAt.toISOString());
      // a later use of the old secret moves the client's time, and only that secret's
      t.clock.advance(10_000);
      const oldAgain = t.clock.now();
      assert.ok(await t.token(c.clientId, c.secret));
      await t.service.lastUsed.flush();
      assert.deepEqual(await stored(c), [oldAgain, newUsedAt]);
      assert.equal((await read(c)).last_used_at, oldAgain.toISOString());
    });

    it('many token requests between flushes make one write with the latest time', async () => {
      const c = await seeded('busy');
      const secretId = (await read(c)).secrets[0]!.id;
      const spy = mock.method(t.service.store.credentials, 'recordSecretUse');
      try {
        let last = t.clock.now();
        for (let i = 0; i < 8; i++) {
          t.clock.advance(1500);
          last = t.clock.now();
          assert.ok(await t.token(c.clientId, c.secret));
        }
        assert.equal(spy.mock.callCount(), 0, 'token requests wrote to the database');
        assert.deepEqual(await stored(c), [null]);
        await t.service.lastUsed.flush();
        assert.equal(spy.mock.callCount(), 1);
        const uses = spy.mock.calls[0]!.arguments[0].filter((u) => u.secretId === secretId);
        assert.deepEqual(uses, [{ secretId, at: last }]);
        assert.deepEqual(await stored(c), [last]);
        // nothing pending: a second flush writes nothing
        await t.service.lastUsed.flush();
        assert.equal(spy.mock.callCount(), 1);
      } finally {
        spy.mock.restore();
      }
    });

    it('writes the uses of many secrets at once, each keeping its greatest time', async () => {
      const a = await seeded('batch-a');
      const b = await seeded('batch-b');
      const [secretA] = await t.db.kysely.selectFrom('client_secrets').select('id').where('client_id', '=', a.id).execute();
      const [secretB] = await t.db.kysely.selectFrom('client_secrets').select('id').where('client_id', '=', b.id).execute();
      const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, s));
      // more uses than one statement takes, most for secrets that no longer exist
      const unknown = Array.from({ length: 2500 }, (_, i) => ({ secretId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, at: at(1) }));
      await t.service.store.credentials.recordSecretUse([{ secretId: secretA!.id, at: at(30) }, ...unknown, { secretId: secretB!.id, at: at(20) }]);
      await t.service.store.credentials.recordSecretUse([
        { secretId: secretA!.id, at: at(10) },
        { secretId: secretB!.id, at: at(40) },
      ]);
      assert.deepEqual(await stored(a), [at(30)]);
      assert.deepEqual(await stored(b), [at(40)]);
    });

    it('keeps the greatest time when an older time is flushed later', async () => {
      const c = await seeded('out-of-order');
      const secretId = (await read(c)).secrets[0]!.id;
      t.clock.advance(60_000);
      const newer = t.clock.now();
      assert.ok(await t.token(c.clientId, c.secret));
      await t.service.lastUsed.flush();
      assert.deepEqual(await stored(c), [newer]);
      // an older use flushed afterwards (say, by a process whose buffer was late) loses
      const older = new Date(newer.getTime() - 30_000);
      t.clock.set(older);
      try {
        assert.ok(await t.token(c.clientId, c.secret));
      } finally {
        t.clock.set(newer);
      }
      await t.service.lastUsed.flush();
      assert.deepEqual(await stored(c), [newer]);
      // the same through the store directly, as another process would write it
      await t.service.store.credentials.recordSecretUse([{ secretId, at: new Date(newer.getTime() - 1000) }]);
      assert.deepEqual(await stored(c), [newer]);
      assert.equal((await read(c)).last_used_at, newer.toISOString());
      // and a newer time still wins
      t.clock.advance(1000);
      const newest = t.clock.now();
      assert.ok(await t.token(c.clientId, c.secret));
      await t.service.lastUsed.flush();
      assert.deepEqual(await stored(c), [newest]);
      assert.equal((await read(c)).last_used_at, newest.toISOString());
    });
  });
}
