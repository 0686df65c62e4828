// SessionStore contract (src/sessions/store.ts), on every engine: a session read back with what
// decides whether it still holds (its user's and tenant's state, the later cut-off), writes that
// reach one session (or one user's) only, deletion that says whether it happened (of many at
// once, one did), and the clean-up of ended sessions.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { Session } from '../../../src/sessions/model.js';
import type { Tenant } from '../../../src/tenants/model.js';
import {
  at,
  childOf,
  type Contract,
  fulfilled,
  HOUR,
  MINUTE,
  newUser,
  openContract,
  race,
  RACERS,
  sha256,
  T0,
  trues,
  twoTenants,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

const session = (userId: string | null, over: Partial<Session> = {}): Session => ({
  idHash: sha256(randomUUID()),
  userId,
  signedInAt: userId ? T0 : null,
  state: {},
  csrfToken: randomUUID(),
  createdAt: T0,
  lastSeenAt: T0,
  expiresAt: at(8 * HOUR),
  ...over,
});

for (const engine of engines()) {
  describe(`SessionStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    it('findSession reads a session as inserted; an anonymous one has no user; an unknown one is undefined', async () => {
      const anonymous = session(null, { state: { signIn: { step: 'email' }, returnTo: '/console', notice: 'é ✓' } });
      await c.store.sessions.insertSession(anonymous);
      assert.deepEqual(await c.store.sessions.findSession(anonymous.idHash), { ...anonymous, user: null });
      const u = await newUser(c.store, a.id);
      const signedIn = session(u.id);
      await c.store.sessions.insertSession(signedIn);
      assert.deepEqual(await c.store.sessions.findSession(signedIn.idHash), {
        ...signedIn,
        user: { disabledAt: null, emailSupersededAt: null, tokensValidAfter: null, tenantEnabled: true },
      });
      assert.equal(await c.store.sessions.findSession(sha256('no such session')), undefined);
    });

    it('findSession tells the user’s state: disabled, the later of its own and its tenant’s cut-off, its tenant disabled', async () => {
      const t = await childOf(c.store, a);
      const u = await newUser(c.store, t.id);
      const s = session(u.id);
      await c.store.sessions.insertSession(s);
      await c.store.users.setDisabled(u.id, at(HOUR), at(HOUR), 'admin');
      assert.deepEqual((await c.store.sessions.findSession(s.idHash))?.user, {
        disabledAt: at(HOUR),
        emailSupersededAt: null,
        tokensValidAfter: at(HOUR),
        tenantEnabled: true,
      });
      await c.store.users.setDisabled(u.id, null, at(2 * HOUR), 'admin');
      await c.store.tenants.updateTenant(t.id, { enabled: false, tokensValidAfter: at(3 * HOUR), updatedAt: at(3 * HOUR) });
      assert.deepEqual((await c.store.sessions.findSession(s.idHash))?.user, {
        disabledAt: null,
        emailSupersededAt: null,
        tokensValidAfter: at(3 * HOUR),
        tenantEnabled: false,
      });
      await c.store.tenants.updateTenant(t.id, { enabled: true, updatedAt: at(4 * HOUR) });
      await c.store.users.resetSignIn(u.id, sha256(`${u.id} link`), at(9 * HOUR), at(5 * HOUR), 'admin');
      assert.deepEqual((await c.store.sessions.findSession(s.idHash))?.user, {
        disabledAt: null,
        emailSupersededAt: null,
        tokensValidAfter: at(5 * HOUR),
        tenantEnabled: true,
      });
      // another account proved the address: this one gave way
      const other = await newUser(c.store, a.id, { email: u.email });
      await c.store.transaction((tx) => tx.users.proveEmail(other.id, u.emailNormalized, at(6 * HOUR)));
      assert.equal(await c.store.sessions.findSession(s.idHash), undefined, 'its sessions end with it');
      const later = session(u.id);
      await c.store.sessions.insertSession(later);
      assert.deepEqual((await c.store.sessions.findSession(later.idHash))?.user, {
        disabledAt: null,
        emailSupersededAt: at(6 * HOUR),
        tokensValidAfter: at(6 * HOUR),
        tenantEnabled: true,
      });
    });

    it('touchSession and patchSessionState change that session only', async () => {
      const u = await newUser(c.store, a.id);
      const mine = session(u.id);
      const other = session(u.id, { state: { returnTo: '/kept' } });
      await c.store.sessions.insertSession(mine);
      await c.store.sessions.insertSession(other);
      await c.store.sessions.touchSession(mine.idHash, at(MINUTE));
      await c.store.sessions.patchSessionState(mine.idHash, {
        set: { signIn: { step: 'totp', userId: u.id }, pendingSetup: { setupTokenHash: 'ab', email: 'x@y.z' } },
      });
      const read = await c.store.sessions.findSession(mine.idHash);
      assert.deepEqual(
        [read?.lastSeenAt, read?.state],
        [at(MINUTE), { signIn: { step: 'totp', userId: u.id }, pendingSetup: { setupTokenHash: 'ab', email: 'x@y.z' } }],
      );
      assert.deepEqual([read?.createdAt, read?.expiresAt, read?.csrfToken], [T0, at(8 * HOUR), mine.csrfToken]);
      const untouched = await c.store.sessions.findSession(other.idHash);
      assert.deepEqual([untouched?.lastSeenAt, untouched?.state], [T0, { returnTo: '/kept' }]);
    });

    it('patchSessionState sets and removes its own keys only: keys written meanwhile by another request stay', async () => {
      const s = session(null, { state: { returnTo: '/start', notice: 'old' } });
      const other = session(null, { state: { returnTo: '/kept' } });
      await c.store.sessions.insertSession(s);
      await c.store.sessions.insertSession(other);
      // many requests at once, each writing its own key from a copy read before any of them
      await Promise.all([
        c.store.sessions.patchSessionState(s.idHash, { set: { signIn: { step: 'email' } } }),
        c.store.sessions.patchSessionState(s.idHash, { set: { reenrol: { pendingSecret: 'sealed', since: T0.toISOString() } } }),
        c.store.sessions.patchSessionState(s.idHash, { set: { pendingSetup: { setupTokenHash: 'ab', email: 'x@y.z' } } }),
        c.store.sessions.patchSessionState(s.idHash, { remove: ['notice'] }),
      ]);
      assert.deepEqual((await c.store.sessions.findSession(s.idHash))?.state, {
        returnTo: '/start',
        signIn: { step: 'email' },
        reenrol: { pendingSecret: 'sealed', since: T0.toISOString() },
        pendingSetup: { setupTokenHash: 'ab', email: 'x@y.z' },
      });
      // a key set again is replaced whole; removing and setting at once; a key absent is no error
      await c.store.sessions.patchSessionState(s.idHash, {
        set: { signIn: { step: 'sso', connectionId: 'c', email: 'a@b.c' }, notice: 'Saved: it’s “quoted”.' },
        remove: ['returnTo', 'pendingSetup', 'signInFor'],
      });
      assert.deepEqual((await c.store.sessions.findSession(s.idHash))?.state, {
        signIn: { step: 'sso', connectionId: 'c', email: 'a@b.c' },
        reenrol: { pendingSecret: 'sealed', since: T0.toISOString() },
        notice: 'Saved: it’s “quoted”.',
      });
      assert.deepEqual((await c.store.sessions.findSession(other.idHash))?.state, { returnTo: '/kept' });
      // a session that is gone: nothing happens
      await c.store.sessions.patchSessionState(sha256('no such session'), { set: { notice: 'x' } });
    });

    it('takeSessionStateKey returns the key once and removes it, the rest kept: of many takes at once, one gets it', async () => {
      const s = session(null, { state: { returnTo: '/kept', notice: 'Saved: it’s “quoted”.' } });
      await c.store.sessions.insertSession(s);
      const taken = fulfilled(await race(RACERS, () => c.store.sessions.takeSessionStateKey(s.idHash, 'notice')));
      assert.deepEqual(
        taken.filter((v) => v !== undefined),
        ['Saved: it’s “quoted”.'],
      );
      assert.deepEqual((await c.store.sessions.findSession(s.idHash))?.state, { returnTo: '/kept' });
      assert.equal(await c.store.sessions.takeSessionStateKey(s.idHash, 'notice'), undefined);
      // an object value comes back as it was written
      await c.store.sessions.patchSessionState(s.idHash, { set: { pendingSetup: { setupTokenHash: 'ab', email: 'x@y.z' } } });
      assert.deepEqual(await c.store.sessions.takeSessionStateKey(s.idHash, 'pendingSetup'), { setupTokenHash: 'ab', email: 'x@y.z' });
      assert.equal(await c.store.sessions.takeSessionStateKey(sha256('no such session'), 'notice'), undefined);
    });

    it('deleteSession says whether there was such a session: of many at once, one deleted it', async () => {
      const s = session(null);
      const kept = session(null);
      await c.store.sessions.insertSession(s);
      await c.store.sessions.insertSession(kept);
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.sessions.deleteSession(s.idHash)))), 1);
      assert.equal(await c.store.sessions.deleteSession(s.idHash), false);
      assert.equal(await c.store.sessions.findSession(s.idHash), undefined);
      assert.ok(await c.store.sessions.findSession(kept.idHash));
    });

    it('deleteUserSessions ends every session of that user and no other', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, b.id);
      const mine = [session(u.id), session(u.id)];
      const theirs = session(v.id);
      const anonymous = session(null);
      for (const s of [...mine, theirs, anonymous]) await c.store.sessions.insertSession(s);
      await c.store.sessions.deleteUserSessions(u.id);
      for (const s of mine) assert.equal(await c.store.sessions.findSession(s.idHash), undefined);
      assert.ok(await c.store.sessions.findSession(theirs.idHash));
      assert.ok(await c.store.sessions.findSession(anonymous.idHash));
    });

    it('recordSignIn stamps that user’s last sign-in only', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, a.id);
      await c.store.sessions.recordSignIn(u.id, at(HOUR));
      assert.deepEqual((await c.store.users.findUser(u.id))?.lastSignInAt, at(HOUR));
      assert.equal((await c.store.users.findUser(v.id))?.lastSignInAt, null);
    });

    it('deleteExpiredSessions deletes those past their end or idle since before the idle cut-off, and counts them', async () => {
      // the sessions of this test start a day later; those of the others have all ended by then
      const day = 24 * HOUR;
      await c.store.sessions.deleteExpiredSessions(at(day), at(day));
      const live = session(null, { createdAt: at(day), lastSeenAt: at(day + 50 * MINUTE), expiresAt: at(day + 8 * HOUR) });
      const ended = session(null, { createdAt: at(day), lastSeenAt: at(day + 50 * MINUTE), expiresAt: at(day + HOUR - 1) });
      const idle = session(null, { createdAt: at(day), lastSeenAt: at(day + 10 * MINUTE - 1), expiresAt: at(day + 8 * HOUR) });
      for (const s of [live, ended, idle]) await c.store.sessions.insertSession(s);
      const now = at(day + HOUR);
      const idleSince = at(day + 10 * MINUTE);
      assert.equal(await c.store.sessions.deleteExpiredSessions(at(day + 30 * MINUTE), at(day)), 0, 'nothing has ended yet');
      assert.equal(await c.store.sessions.deleteExpiredSessions(now, idleSince), 2);
      assert.ok(await c.store.sessions.findSession(live.idHash), 'a session in use, before its end, stays');
      assert.equal(await c.store.sessions.findSession(ended.idHash), undefined);
      assert.equal(await c.store.sessions.findSession(idle.idHash), undefined);
      assert.equal(await c.store.sessions.deleteExpiredSessions(now, idleSince), 0, 'counted once');
    });
    it('listUserSessions: the user’s sessions only, the most recently seen first; deleteOtherUserSessions keeps the one named', async () => {
      const u = await newUser(c.store, a.id);
      const other = await newUser(c.store, b.id);
      const older = session(u.id, { lastSeenAt: at(MINUTE) });
      const newer = session(u.id, { lastSeenAt: at(2 * MINUTE), state: { notice: 'é' } });
      const third = session(u.id, { lastSeenAt: at(30) });
      const theirs = session(other.id);
      for (const s of [older, newer, third, theirs, session(null)]) await c.store.sessions.insertSession(s);
      // summaries: when, never a session's CSRF token or state
      const summary = ({ csrfToken: _c, state: _s, ...rest }: typeof older) => rest;
      assert.deepEqual(await c.store.sessions.listUserSessions(u.id), [newer, older, third].map(summary));
      assert.equal(await c.store.sessions.deleteOtherUserSessions(u.id, older.idHash), 2);
      assert.deepEqual(await c.store.sessions.listUserSessions(u.id), [older].map(summary));
      assert.deepEqual(await c.store.sessions.listUserSessions(other.id), [theirs].map(summary), 'another user’s untouched');
      assert.equal(await c.store.sessions.deleteOtherUserSessions(u.id, older.idHash), 0);
    });
  });
}
