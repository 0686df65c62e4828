// Browser sessions (docs/users.md, "Sessions"), on both engines: a cookie's secret finds its
// session only while it holds (idle and absolute time-outs, its user active and not cut off
// after it signed in, its tenant enabled); signing in ends the anonymous session and starts one
// under a new id; only a digest of the secret is stored.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { csrfMatches, safeReturnPath } from '../../src/sessions/model.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { createTenant } from '../helpers/tenants.js';

const MINUTE = 60_000;

describe('session rules without storage', () => {
  it('a CSRF token matches only itself, in constant time, and nothing of another type', () => {
    const s = { csrfToken: 'a'.repeat(43) };
    assert.equal(csrfMatches(s, 'a'.repeat(43)), true);
    assert.equal(csrfMatches(s, 'a'.repeat(42) + 'b'), false);
    assert.equal(csrfMatches(s, 'a'.repeat(42)), false);
    assert.equal(csrfMatches(s, undefined), false);
    assert.equal(csrfMatches(s, ['a'.repeat(43)]), false);
    assert.equal(csrfMatches(s, 'é'.repeat(43)), false, 'as many characters, more bytes: refused, not thrown');
  });

  it('returns only to paths of this service (no open redirect)', () => {
    assert.equal(safeReturnPath('/console/credentials?x=1'), '/console/credentials?x=1');
    for (const bad of [
      'https://evil.example',
      '//evil.example',
      '/\\evil.example',
      'console',
      '/a\nb',
      '/console?name=é€',
      '/a b',
      '',
      42,
      undefined,
    ]) {
      assert.equal(safeReturnPath(bad), undefined, String(bad));
    }
  });
});

for (const engine of engines()) {
  describe(`sessions (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_SESSION_IDLE: '1800', GATEHOUSE_SESSION_MAX: '43200' } });
    });
    after(() => t.close());

    const sessions = () => t.service.services.sessions;
    async function newUser(email: string, tenant?: string): Promise<string> {
      const res = await t.gql(
        await t.rootToken(),
        'mutation($e: String!) { createUser(email: $e) { user { id } } }',
        { e: email },
        tenant ? { tenant } : {},
      );
      assert.equal(res.status, 200, res.text);
      return res.body.data.createUser.user.id;
    }

    it('stores only a digest of the secret, and finds the session by the secret alone', async () => {
      const { secret, session } = await sessions().start({ signIn: { step: 'email' } });
      assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
      const rows = await t.db.kysely.selectFrom('sessions').select(['id_hash', 'csrf_token']).execute();
      const row = rows.find((r) => Buffer.from(r.id_hash).equals(createHash('sha256').update(secret).digest()));
      assert.ok(row, 'the row is keyed by the digest');
      assert.ok(!rows.some((r) => Buffer.from(r.id_hash).toString('base64url') === secret));
      const found = await sessions().find(secret);
      assert.deepEqual(found?.state, { signIn: { step: 'email' } });
      assert.equal(found?.csrfToken, session.csrfToken);
      for (const wrong of [undefined, '', 'x', secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A'), `${secret}A`]) {
        assert.equal(await sessions().find(wrong), undefined, String(wrong));
      }
    });

    it('signing in ends the anonymous session and starts one under a new id (no fixation)', async () => {
      const userId = await newUser('fixation@example.com');
      const anonymous = await sessions().start();
      const anonSession = (await sessions().find(anonymous.secret))!;
      const signed = await sessions().signIn(anonSession, userId, '/console');
      assert.notEqual(signed.secret, anonymous.secret);
      assert.notEqual(signed.session.csrfToken, anonSession.csrfToken, 'a new CSRF token too');
      assert.equal(await sessions().find(anonymous.secret), undefined, 'the old id is gone');
      const found = await sessions().find(signed.secret);
      assert.equal(found?.userId, userId);
      assert.deepEqual(found?.state, { returnTo: '/console' });
      const row = await t.db.kysely.selectFrom('users').select('last_sign_in_at').where('id', '=', userId).executeTakeFirstOrThrow();
      assert.deepEqual(row.last_sign_in_at, t.clock.now());
      await sessions().end(found!);
      assert.equal(await sessions().find(signed.secret), undefined, 'sign-out ends it');
    });

    it('ends after 30 idle minutes, is kept alive by use, and ends 12 hours after sign-in regardless', async () => {
      const userId = await newUser('timeouts@example.com');
      const { secret } = await sessions().signIn(undefined, userId);
      t.clock.advance(29 * MINUTE);
      assert.ok(await sessions().find(secret), 'used at 29 minutes');
      t.clock.advance(29 * MINUTE);
      assert.ok(await sessions().find(secret), 'used again 29 minutes later: the idle clock restarted');
      t.clock.advance(31 * MINUTE);
      assert.equal(await sessions().find(secret), undefined, '31 idle minutes: ended');

      const busy = await sessions().signIn(undefined, userId);
      for (let m = 0; m < 12 * 60; m += 20) {
        t.clock.advance(20 * MINUTE);
        if (m + 20 < 12 * 60) assert.ok(await sessions().find(busy.secret), `busy at ${m + 20} minutes`);
      }
      assert.equal(await sessions().find(busy.secret), undefined, '12 hours: ended however busy');
    });

    it('a person’s own sessions: the live ones only; ending the others keeps this one, with its audit event', async () => {
      const userId = await newUser('own-sessions@example.com');
      const idle = await sessions().signIn(undefined, userId);
      t.clock.advance(31 * MINUTE);
      const here = await sessions().signIn(undefined, userId);
      const there = await sessions().signIn(undefined, userId);
      const someoneElse = await sessions().signIn(undefined, await newUser('someone-else@example.com'));
      const mine = (await sessions().find(here.secret))!;
      const listed = await sessions().ofUser(mine);
      assert.deepEqual(
        listed.map((s) => s.idHash.toString('hex')).sort(),
        [here, there].map((s) => s.session.idHash.toString('hex')).sort(),
        'not the idle one',
      );
      assert.equal(await sessions().endOthers(mine, { id: userId, tenantId: '1' }), 2, 'the live other and the idle one');
      assert.ok(await sessions().find(here.secret), 'this one goes on');
      assert.equal(await sessions().find(there.secret), undefined);
      assert.equal(await sessions().find(idle.secret), undefined);
      assert.ok(await sessions().find(someoneElse.secret), 'another person’s untouched');
      const event = await t.db.kysely
        .selectFrom('audit_events')
        .select(['actor_id', 'target_id', 'details'])
        .where('action', '=', 'user.sessions_ended')
        .executeTakeFirstOrThrow();
      assert.equal(event.actor_id, userId);
      assert.equal(event.target_id, userId);
      assert.deepEqual(typeof event.details === 'string' ? JSON.parse(event.details) : event.details, { ended: 2 });
      await assert.rejects(sessions().endOthers(mine, { id: '00000000-0000-4000-8000-000000000000', tenantId: '1' }), 'only its own user’s');
    });

    it('an anonymous session (a sign-in under way) lasts 15 minutes at most', async () => {
      const { secret } = await sessions().start();
      t.clock.advance(14 * MINUTE);
      assert.ok(await sessions().find(secret));
      t.clock.advance(2 * MINUTE);
      assert.equal(await sessions().find(secret), undefined);
    });

    it("a disabled, reset or deleted user's session ends at once; enabling again does not revive it", async () => {
      const userId = await newUser('cut@example.com');
      const first = await sessions().signIn(undefined, userId);
      t.clock.advance(1000);
      await t.gql(await t.rootToken(), 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: userId });
      assert.equal(await sessions().find(first.secret), undefined, 'disabled');
      await t.gql(await t.rootToken(), 'mutation($id: ID!) { enableUser(id: $id) { id } }', { id: userId });
      assert.equal(await sessions().find(first.secret), undefined, 'still ended after enabling');

      t.clock.advance(1000);
      const second = await sessions().signIn(undefined, userId);
      assert.ok(await sessions().find(second.secret));
      t.clock.advance(1000);
      await t.gql(await t.rootToken(), 'mutation($id: ID!) { resetUserSignIn(id: $id) { setup_url } }', { id: userId });
      assert.equal(await sessions().find(second.secret), undefined, 'reset');

      t.clock.advance(1000);
      const third = await sessions().signIn(undefined, userId);
      await t.gql(await t.rootToken(), 'mutation($id: ID!) { deleteUser(id: $id) { id } }', { id: userId });
      assert.equal(await sessions().find(third.secret), undefined, 'deleted');
    });

    it("a session ends when its user's tenant is disabled, and is deleted", async () => {
      const tenant = await createTenant(t, '1');
      const userId = await newUser('tenant-cut@example.com', tenant);
      const { secret } = await sessions().signIn(undefined, userId);
      assert.ok(await sessions().find(secret));
      t.clock.advance(1000);
      const update = 'mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { enabled } }';
      const off = await t.gql(await t.rootToken(), update, { id: tenant, u: { disable: true } }, { path: '/public/query' });
      assert.equal(off.body.data?.updateTenant.enabled, false, off.text);
      assert.equal(await sessions().find(secret), undefined);
      const left = await t.db.kysely.selectFrom('sessions').select('user_id').where('user_id', '=', userId).execute();
      assert.deepEqual(left, [], 'the ended session is deleted: nothing can revive it');
    });
  });
}
