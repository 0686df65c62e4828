// UserStore contract (src/users/store.ts), on every engine: users listed through their tenant
// only, the unique rule user.email across every tenant (one of many at once wins), the locks
// (two administrators disabling each other at once: one of them ends disabled, not both; one
// change of a user at a time), and the writes that reach one user only: disabling, reset, delete.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { ROLE_IDS } from '../../../src/access/roles.js';
import type { Tenant } from '../../../src/tenants/model.js';
import type { NewUser } from '../../../src/users/store.js';
import {
  at,
  childOf,
  type Contract,
  fulfilled,
  HOUR,
  newUser,
  oneWinsOthersDuplicate,
  openContract,
  race,
  RACERS,
  raceTransactions,
  rejectsDuplicate,
  sha256,
  T0,
  trues,
  twoTenants,
  TX_RACERS,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

for (const engine of engines()) {
  describe(`UserStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    it('findUser and findUserByEmail read a user as inserted; unknown ones are undefined', async () => {
      const u = await newUser(c.store, a.id, {
        email: 'Ada@Example.com',
        emailNormalized: 'ada@example.com',
        displayName: 'Ada',
        passwordHash: null,
        setupTokenHash: sha256('ada link'),
        setupExpiresAt: at(HOUR),
        createdAt: at(1),
        createdBy: 'admin',
      });
      const expected = {
        id: u.id,
        tenantId: a.id,
        email: 'Ada@Example.com',
        emailNormalized: 'ada@example.com',
        displayName: 'Ada',
        status: 'active',
        passwordSet: false,
        ssoSignIn: false,
        totpEnrolled: false,
        setupExpiresAt: at(HOUR),
        emailStatus: 'unverified',
        createdAt: at(1),
        updatedAt: at(1),
        createdBy: 'admin',
        updatedBy: 'admin',
        disabledAt: null,
        lastSignInAt: null,
        roleAssignments: [],
      };
      assert.deepEqual(await c.store.users.findUser(u.id), expected);
      assert.deepEqual(await c.store.users.findUserByEmail('ada@example.com'), expected);
      assert.equal(await c.store.users.findUser(randomUUID()), undefined);
      assert.equal(await c.store.users.findUserByEmail('Ada@Example.com'), undefined, 'looked up by its key only');
    });

    it('user.email: one address is one account per tenant; of one address taken at once in a tenant, one insert wins', async () => {
      const u = await newUser(c.store, a.id);
      await rejectsDuplicate(newUser(c.store, a.id, { email: u.email }), 'user.email');
      const email = `race-${randomUUID()}@example.com`;
      const results = await race(RACERS, () => newUser(c.store, b.id, { email }));
      oneWinsOthersDuplicate(results, 'user.email');
      assert.equal((await c.store.users.findUserByEmail(email))?.tenantId, b.id);
    });

    it('user.provenEmail: accounts of several tenants share an address until one proves it; then that one is the address’s account', async () => {
      const email = `shared-${randomUUID()}@example.com`;
      const older = await newUser(c.store, a.id, { email, createdAt: at(1) });
      const newer = await newUser(c.store, b.id, { email, createdAt: at(2) });
      const third = await newUser(c.store, (await childOf(c.store, a)).id, { email, createdAt: at(3) });
      const key = older.emailNormalized;
      assert.equal((await c.store.users.findUserByEmail(key))?.id, older.id, 'none proven: the oldest');
      assert.equal(await c.store.users.findProvenUser(key), undefined);
      const superseded = await c.store.transaction((tx) => tx.users.proveEmail(newer.id, key, at(4)));
      assert.deepEqual(superseded.map((s) => s.id).sort(), [older.id, third.id].sort());
      assert.equal((await c.store.users.findUserByEmail(key))?.id, newer.id, 'the proven one');
      assert.equal((await c.store.users.findProvenUser(key))?.id, newer.id);
      assert.equal((await c.store.users.findUser(older.id))?.emailStatus, 'claimed_elsewhere');
      assert.equal((await c.store.users.findUser(newer.id))?.emailStatus, 'verified');
      assert.equal((await c.store.signIn.findSignInRecord(key))?.id, newer.id);
      assert.equal((await c.store.signIn.findSignInRecordById(older.id))?.active, false, 'an account that gave way signs in no more');
      // a fourth account, made after the proof, cannot prove the address too
      const late = await newUser(c.store, (await childOf(c.store, b)).id, { email, createdAt: at(5) });
      await rejectsDuplicate(
        c.store.transaction((tx) => tx.users.proveEmail(late.id, key, at(6))),
        'user.provenEmail',
      );
    });

    it('proveEmail proves the account only as the caller saw it: its address still the key, not given way; else nobody gives way', async () => {
      const email = `seen-${randomUUID()}@example.com`;
      const moved = await newUser(c.store, a.id, { email: `moved-${randomUUID()}@example.com` });
      const other = await newUser(c.store, b.id, { email });
      assert.deepEqual(await c.store.transaction((tx) => tx.users.proveEmail(moved.id, email, at(1))), [], 'its address is not the key');
      assert.equal((await c.store.users.findUser(moved.id))?.emailStatus, 'unverified');
      assert.equal((await c.store.users.findUser(other.id))?.emailStatus, 'unverified', 'nobody gave way');
      const owner = await newUser(c.store, (await childOf(c.store, a)).id, { email });
      await c.store.transaction((tx) => tx.users.proveEmail(owner.id, email, at(2)));
      assert.equal((await c.store.users.findUser(other.id))?.emailStatus, 'claimed_elsewhere');
      assert.deepEqual(await c.store.transaction((tx) => tx.users.proveEmail(other.id, email, at(3))), [], 'one that gave way proves nothing');
      assert.equal((await c.store.users.findUser(other.id))?.emailStatus, 'claimed_elsewhere');
      assert.equal((await c.store.users.findUser(owner.id))?.emailStatus, 'verified');
      assert.deepEqual(await c.store.transaction((tx) => tx.users.proveEmail(owner.id, email, at(4))), [], 'proving again changes nothing');
    });

    it('a new address waits with its link (and whether it was mailed) until confirmed; then it is the account’s, unproven until proveEmail', async () => {
      const email = `new-${randomUUID()}@example.com`;
      const u = await newUser(c.store, a.id);
      const squatter = await newUser(c.store, b.id, { email });
      assert.equal(await c.store.users.findPendingEmail(u.id), undefined);
      const folder = { email, tokenHash: sha256(`${u.id} folder`), expiresAt: at(HOUR), mailed: false };
      await c.store.users.setPendingEmail(u.id, folder, at(1));
      assert.deepEqual(await c.store.users.findPendingEmail(u.id), folder);
      const pending = { email, tokenHash: sha256(`${u.id} change`), expiresAt: at(HOUR), mailed: true };
      await c.store.users.setPendingEmail(u.id, pending, at(1));
      assert.deepEqual(await c.store.users.findPendingEmail(u.id), pending, 'a newer request replaces the older');
      await c.store.transaction((tx) => tx.users.changeEmail(u.id, email, email, at(2)));
      const changed = await c.store.users.findUser(u.id);
      assert.deepEqual([changed?.email, changed?.emailNormalized, changed?.emailStatus], [email, email, 'unverified']);
      assert.equal(await c.store.users.findPendingEmail(u.id), undefined, 'the pending address is forgotten');
      assert.equal((await c.store.users.findUser(squatter.id))?.emailStatus, 'unverified', 'a change alone supersedes nobody');
      const superseded = await c.store.transaction((tx) => tx.users.proveEmail(u.id, email, at(3)));
      assert.deepEqual(superseded, [{ id: squatter.id, tenantId: b.id }]);
      assert.equal((await c.store.users.findUser(squatter.id))?.emailStatus, 'claimed_elsewhere');
      // another account cannot take it over the same way
      const other = await newUser(c.store, (await childOf(c.store, b)).id);
      await c.store.transaction((tx) => tx.users.changeEmail(other.id, email, email, at(4)));
      await rejectsDuplicate(
        c.store.transaction((tx) => tx.users.proveEmail(other.id, email, at(5))),
        'user.provenEmail',
      );
    });

    it('a new address waiting dies with a reset, a password reset, a disabling, and when the account gives way', async () => {
      const pending = (u: NewUser) => ({
        email: `away-${u.id}@example.com`,
        tokenHash: sha256(`${u.id} pending`),
        expiresAt: at(HOUR),
        mailed: true,
      });
      const wait = async (u: NewUser) => {
        await c.store.users.setPendingEmail(u.id, pending(u), at(1));
        assert.deepEqual(await c.store.users.findPendingEmail(u.id), pending(u));
      };
      const reset = await newUser(c.store, a.id);
      await wait(reset);
      await c.store.users.resetSignIn(reset.id, sha256(`${reset.id} link`), at(HOUR), at(2), 'admin');
      assert.equal(await c.store.users.findPendingEmail(reset.id), undefined, 'reset');

      const forgot = await newUser(c.store, a.id);
      await wait(forgot);
      const link = sha256(`${forgot.id} reset`);
      assert.equal(await c.store.signIn.setResetLink(forgot.id, link, at(HOUR)), true);
      assert.equal(await c.store.signIn.redeemResetLink(forgot.id, link, '$argon2id$new', at(2)), true);
      assert.equal(await c.store.users.findPendingEmail(forgot.id), undefined, 'password reset');

      const disabled = await newUser(c.store, a.id);
      await wait(disabled);
      await c.store.users.setDisabled(disabled.id, null, at(2), 'admin');
      assert.ok(await c.store.users.findPendingEmail(disabled.id), 'enabling (a no-op here) keeps it');
      await c.store.users.setDisabled(disabled.id, at(3), at(3), 'admin');
      assert.equal(await c.store.users.findPendingEmail(disabled.id), undefined, 'disabling');

      const email = `gives-way-${randomUUID()}@example.com`;
      const gaveWay = await newUser(c.store, a.id, { email });
      await wait(gaveWay);
      const owner = await newUser(c.store, b.id, { email });
      await c.store.transaction((tx) => tx.users.proveEmail(owner.id, email, at(4)));
      assert.equal(await c.store.users.findPendingEmail(gaveWay.id), undefined, 'gave way');
    });

    it('listUsers: the users of one tenant only, filtered by address, by creation then id, a page at a time', async () => {
      const ta = await childOf(c.store, a);
      const tb = await childOf(c.store, b);
      const mine: NewUser[] = [];
      for (let i = 0; i < 4; i++) mine.push(await newUser(c.store, ta.id, { email: `p${i}-${ta.id}@a.example`, createdAt: at(i) }));
      const tie = await newUser(c.store, ta.id, { email: `tie-${ta.id}@b.example`, createdAt: at(2) });
      await newUser(c.store, tb.id, { email: `p0-${tb.id}@a.example`, createdAt: at(0) });
      const role = { id: randomUUID(), tenantId: ta.id, roleId: ROLE_IDS.Analyst, expiresAt: null };
      await c.store.users.insertRoleAssignments([{ ...role, principalId: mine[1]!.id, createdAt: T0 }]);
      const list = async (filter: Partial<Parameters<typeof c.store.users.listUsers>[0]> = {}) =>
        c.store.users.listUsers({ tenantId: ta.id, offset: 0, limit: 100, ...filter });
      const ordered = [mine[0]!, mine[1]!, ...[mine[2]!, tie].sort((x, y) => x.id.localeCompare(y.id)), mine[3]!].map((u) => u.id);
      const all = await list();
      assert.deepEqual(
        all.map((u) => u.id),
        ordered,
        'not the other tenant’s user',
      );
      assert.deepEqual(all.find((u) => u.id === mine[1]!.id)?.roleAssignments, [role]);
      assert.deepEqual(
        (await list({ offset: 1, limit: 2 })).map((u) => u.id),
        ordered.slice(1, 3),
      );
      assert.deepEqual(
        (await list({ email: { pattern: `p%@a.example`, wildcard: true } })).map((u) => u.id),
        mine.map((u) => u.id),
      );
      assert.deepEqual(
        (await list({ email: { pattern: mine[3]!.emailNormalized, wildcard: false } })).map((u) => u.id),
        [mine[3]!.id],
      );
      assert.deepEqual(await list({ tenantId: ta.id, email: { pattern: `p0-${tb.id}@a.example`, wildcard: false } }), []);
    });

    it('listUsers: by status, way of signing in, a role unexpired at the time given, and last sign-in', async () => {
      const t = await childOf(c.store, a);
      const active = await newUser(c.store, t.id, { createdAt: at(0) });
      const noPassword = await newUser(c.store, t.id, { passwordHash: null, createdAt: at(1) });
      const disabled = await newUser(c.store, t.id, { createdAt: at(2) });
      const viaSso = await newUser(c.store, t.id, { passwordHash: null, createdAt: at(3) });
      await c.store.signIn.enrolTotp(active.id, 'sealed', 1, [Buffer.from(randomUUID())], T0, T0);
      await c.store.signIn.enrolTotp(disabled.id, 'sealed', 1, [Buffer.from(randomUUID())], T0, T0);
      await c.store.users.setDisabled(disabled.id, at(HOUR), at(HOUR), null);
      const connection = randomUUID();
      await c.store.sso.insertConnection({
        id: connection,
        tenantId: t.id,
        name: `idp ${t.id}`,
        type: 'saml',
        status: 'Created',
        createdBy: 'admin',
        createdAt: T0,
      });
      await c.store.sso.insertIdentity(connection, `sso-${t.id}`, viaSso.id, T0);
      await c.store.sessions.recordSignIn(active.id, at(2 * HOUR));
      await c.store.sessions.recordSignIn(viaSso.id, at(-100 * 24 * HOUR));
      const role = (roleId: string, principalId: string, expiresAt: Date | null) => ({
        id: randomUUID(),
        tenantId: t.id,
        roleId,
        expiresAt,
        principalId,
        createdAt: T0,
      });
      await c.store.users.insertRoleAssignments([
        role(ROLE_IDS.Auditor, active.id, null),
        role(ROLE_IDS.Auditor, noPassword.id, at(HOUR)),
        role(ROLE_IDS.Responder, disabled.id, null),
      ]);
      const ids = async (filter: Partial<Parameters<typeof c.store.users.listUsers>[0]>) =>
        (await c.store.users.listUsers({ tenantId: t.id, offset: 0, limit: 100, ...filter })).map((u) => u.id);
      assert.deepEqual(await ids({ status: 'active' }), [active.id, viaSso.id], 'SSO needs no password');
      assert.deepEqual(await ids({ status: 'pending' }), [noPassword.id]);
      assert.deepEqual(await ids({ status: 'disabled' }), [disabled.id]);
      assert.deepEqual(await ids({ sso: true }), [viaSso.id]);
      assert.deepEqual(await ids({ sso: false }), [active.id, noPassword.id, disabled.id]);
      assert.deepEqual(await ids({ role: { roleId: ROLE_IDS.Auditor, now: T0 } }), [active.id, noPassword.id]);
      assert.deepEqual(await ids({ role: { roleId: ROLE_IDS.Auditor, now: at(HOUR) } }), [active.id], 'expired at that time');
      assert.deepEqual(await ids({ lastSignIn: { never: true } }), [noPassword.id, disabled.id]);
      assert.deepEqual(await ids({ lastSignIn: { after: at(HOUR) } }), [active.id]);
      assert.deepEqual(await ids({ lastSignIn: { notAfter: at(-90 * 24 * HOUR) } }), [noPassword.id, disabled.id, viaSso.id]);
      assert.deepEqual(await ids({ status: 'active', sso: false, role: { roleId: ROLE_IDS.Auditor, now: T0 } }), [active.id], 'together');
    });

    it('lockTenantUsers: of two administrators disabling each other at once, exactly one ends disabled', async () => {
      const pairs = await Promise.all(
        Array.from({ length: TX_RACERS / 2 }, async () => {
          const t = await childOf(c.store, a);
          return { t, admins: [await newUser(c.store, t.id), await newUser(c.store, t.id)] as const };
        }),
      );
      // what disableUser does: lock the tenant's users, check the caller, then disable the other
      const results = fulfilled(
        await raceTransactions(c, pairs.length * 2, async (tx, i) => {
          const { t, admins } = pairs[Math.floor(i / 2)]!;
          const [actor, target] = i % 2 ? [admins[1], admins[0]] : [admins[0], admins[1]];
          await tx.users.lockTenantUsers(t.id);
          if ((await tx.users.findUser(actor.id))?.status !== 'active') return false;
          await tx.users.setDisabled(target.id, at(HOUR), at(HOUR), actor.id);
          return true;
        }),
      );
      for (const [k, { admins }] of pairs.entries()) {
        assert.equal(trues(results.slice(2 * k, 2 * k + 2)), 1, `pair ${k}: one disabled the other`);
        const states = await Promise.all(admins.map(async (u) => (await c.store.users.findUser(u.id))?.status));
        assert.deepEqual(states.sort(), ['active', 'disabled'], `pair ${k}: one administrator is left`);
      }
    });

    it('lockUser holds the user until the transaction ends: of many changes checked against it at once, one applies', async () => {
      const u = await newUser(c.store, a.id);
      assert.equal(await c.store.users.lockUser(randomUUID()), undefined);
      const changed = fulfilled(
        await raceTransactions(c, TX_RACERS, async (tx, i) => {
          const locked = await tx.users.lockUser(u.id);
          if (locked?.status !== 'active') return false;
          await tx.users.setDisabled(u.id, at(i + 1), at(i + 1), `admin ${i}`);
          return true;
        }),
      );
      assert.equal(trues(changed), 1);
      const after = await c.store.users.findUser(u.id);
      assert.equal(after?.updatedBy, `admin ${changed.indexOf(true)}`);
    });

    it('deleteRoleAssignment deletes that user’s assignment only, and says whether it did', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, b.id);
      const mine = { id: randomUUID(), tenantId: a.id, roleId: ROLE_IDS.Analyst, expiresAt: null, principalId: u.id, createdAt: T0 };
      const theirs = { id: randomUUID(), tenantId: b.id, roleId: ROLE_IDS.Analyst, expiresAt: null, principalId: v.id, createdAt: T0 };
      await c.store.users.insertRoleAssignments([mine, theirs]);
      assert.equal(await c.store.users.deleteRoleAssignment(u.id, theirs.id), false, 'not another user’s');
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.users.deleteRoleAssignment(u.id, mine.id)))), 1);
      assert.deepEqual((await c.store.users.findUser(u.id))?.roleAssignments, []);
      assert.equal((await c.store.users.findUser(v.id))?.roleAssignments.length, 1);
    });

    it('setDisabled disables and re-enables one user; an operator (no principal) is recorded as no one', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, a.id);
      await c.store.users.setDisabled(u.id, at(HOUR), at(HOUR), 'admin-1');
      const off = await c.store.users.findUser(u.id);
      assert.deepEqual([off?.status, off?.disabledAt, off?.updatedAt, off?.updatedBy], ['disabled', at(HOUR), at(HOUR), 'admin-1']);
      await c.store.users.setDisabled(u.id, null, at(2 * HOUR), null);
      const on = await c.store.users.findUser(u.id);
      assert.deepEqual([on?.status, on?.disabledAt, on?.updatedAt, on?.updatedBy], ['active', null, at(2 * HOUR), null]);
      assert.deepEqual((await c.store.users.findUser(v.id))?.updatedAt, T0, 'another user is untouched');
    });

    it('resetSignIn clears the password, authenticator, recovery codes and recognised browsers of that user, with a new link', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, a.id);
      for (const user of [u, v]) {
        assert.equal(await c.store.signIn.enrolTotp(user.id, 'v2.k.sealed', 1, [sha256(`${user.id} 1`), sha256(`${user.id} 2`)], T0, T0), true);
        await c.store.signIn.recogniseBrowser(sha256('browser'), user.id, T0, at(HOUR));
      }
      await c.store.users.resetSignIn(u.id, sha256('new link'), at(3 * HOUR), at(1000), 'admin');
      const reset = await c.store.users.findUser(u.id);
      assert.deepEqual(
        [reset?.passwordSet, reset?.totpEnrolled, reset?.setupExpiresAt, reset?.updatedAt, reset?.updatedBy],
        [false, false, at(3 * HOUR), at(1000), 'admin'],
      );
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(u.id), 0);
      assert.equal(await c.store.signIn.isRecognisedBrowser(sha256('browser'), u.id, at(1000)), false);
      assert.equal((await c.store.signIn.findSetupRecord(sha256('new link')))?.id, u.id);
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.totpLastStep, null);
      // the other user keeps everything
      const kept = await c.store.users.findUser(v.id);
      assert.deepEqual([kept?.passwordSet, kept?.totpEnrolled], [true, true]);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(v.id), 2);
      assert.equal(await c.store.signIn.isRecognisedBrowser(sha256('browser'), v.id, at(1000)), true);
    });

    it('deleteUser deletes the user with its assignments, codes and sessions, and nothing of another', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, a.id);
      for (const user of [u, v]) {
        await c.store.users.insertRoleAssignments([
          { id: randomUUID(), tenantId: a.id, roleId: ROLE_IDS.Analyst, expiresAt: null, principalId: user.id, createdAt: T0 },
        ]);
        await c.store.signIn.enrolTotp(user.id, 'v2.k.sealed', 1, [sha256(`${user.id} code`)], T0, T0);
        await c.store.sessions.insertSession({
          idHash: sha256(`${user.id} session`),
          userId: user.id,
          signedInAt: T0,
          state: {},
          csrfToken: 'csrf',
          createdAt: T0,
          lastSeenAt: T0,
          expiresAt: at(HOUR),
        });
      }
      await c.store.users.deleteUser(u.id);
      assert.equal(await c.store.users.findUser(u.id), undefined);
      assert.equal(await c.store.users.findUserByEmail(u.emailNormalized), undefined);
      assert.deepEqual(await c.store.principals.findAssignments('user', u.id), []);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(u.id), 0);
      assert.equal(await c.store.sessions.findSession(sha256(`${u.id} session`)), undefined);
      assert.equal((await c.store.users.findUser(v.id))?.roleAssignments.length, 1);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(v.id), 1);
      assert.ok(await c.store.sessions.findSession(sha256(`${v.id} session`)));
      // its address is free again
      await newUser(c.store, b.id, { email: u.email });
    });
  });
}
