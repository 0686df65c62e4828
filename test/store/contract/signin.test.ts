// SignInStore contract (src/signin/store.ts), on every engine: the sign-in and set-up records
// with whether the account is active, and the one-statement writes the sign-in flow relies on
// under concurrency, each run many times at once: a TOTP step accepted once, a recovery code used
// once, a set-up link redeemed once, an authenticator enrolled once (with the winner's codes), a
// sealed secret replaced once. Recognised browsers are per account.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../../src/tenants/model.js';
import { at, childOf, type Contract, fulfilled, HOUR, newUser, openContract, race, RACERS, sha256, T0, trues, twoTenants } from './harness.js';
import { engines } from '../../helpers/engines.js';

for (const engine of engines()) {
  describe(`SignInStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    const codes = (user: string, n = 3) => Array.from({ length: n }, (_, i) => sha256(`${user} code ${i}`));

    it('findSignInRecord and findSignInRecordById: the account as sign-in needs it, active only while it and its tenant are', async () => {
      const t = await childOf(c.store, a);
      const u = await newUser(c.store, t.id, { email: `Sign.In-${t.id}@Example.com`, emailNormalized: `sign.in-${t.id}@example.com` });
      const expected = {
        id: u.id,
        tenantId: t.id,
        email: u.email,
        emailNormalized: u.emailNormalized,
        passwordHash: '$argon2id$test',
        totpSecretSealed: null,
        totpLastStep: null,
        active: true,
        hasPasskeys: false,
      };
      assert.deepEqual(await c.store.signIn.findSignInRecord(u.emailNormalized), expected);
      assert.deepEqual(await c.store.signIn.findSignInRecordById(u.id), expected);
      assert.equal(await c.store.signIn.findSignInRecord('nobody@example.com'), undefined);
      assert.equal(await c.store.signIn.findSignInRecordById(randomUUID()), undefined);
      await c.store.users.setDisabled(u.id, at(1), at(1), 'admin');
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.active, false, 'a disabled user');
      await c.store.users.setDisabled(u.id, null, at(2), 'admin');
      await c.store.tenants.updateTenant(t.id, { enabled: false, updatedAt: at(3) });
      assert.equal((await c.store.signIn.findSignInRecord(u.emailNormalized))?.active, false, 'a disabled tenant');
    });

    it('findSetupRecord: the account a set-up link digest belongs to', async () => {
      const t = await childOf(c.store, a);
      const u = await newUser(c.store, t.id, {
        passwordHash: null,
        setupTokenHash: sha256(`${t.id} link`),
        setupExpiresAt: at(HOUR),
        setupLinkMailed: true,
      });
      assert.deepEqual(await c.store.signIn.findSetupRecord(sha256(`${t.id} link`)), {
        id: u.id,
        tenantId: t.id,
        email: u.email,
        emailNormalized: u.emailNormalized,
        setupExpiresAt: at(HOUR),
        active: true,
        mailed: true,
        verified: false,
        claimedElsewhere: false,
      });
      assert.equal(await c.store.signIn.findSetupRecord(sha256('no such link')), undefined);
      await c.store.tenants.updateTenant(t.id, { enabled: false, updatedAt: at(1) });
      assert.equal((await c.store.signIn.findSetupRecord(sha256(`${t.id} link`)))?.active, false);
    });

    it('advanceTotpStep accepts a step only if it is newer than the stored one, compared as numbers', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, b.id);
      const steps: [number, boolean][] = [
        [5, true],
        [5, false],
        [4, false],
        [99, true],
        [100, true],
        [99, false],
      ];
      for (const [step, accepted] of steps) assert.equal(await c.store.signIn.advanceTotpStep(u.id, step), accepted, `step ${step}`);
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.totpLastStep, 100);
      assert.equal((await c.store.signIn.findSignInRecordById(v.id))?.totpLastStep, null, 'another user’s step is untouched');
      assert.equal(await c.store.signIn.advanceTotpStep(randomUUID(), 1), false);
    });

    it('advanceTotpStep: of requests with one code at once, one wins; of different steps at once, the newest stays', async () => {
      const u = await newUser(c.store, a.id);
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.signIn.advanceTotpStep(u.id, 59_000_000)))), 1);
      const accepted = fulfilled(await race(RACERS, (i) => c.store.signIn.advanceTotpStep(u.id, 59_000_001 + i)));
      assert.ok(trues(accepted) >= 1);
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.totpLastStep, 59_000_000 + RACERS, 'never moved back');
    });

    it('useRecoveryCode: a code of that user, once, even when tried many times at once', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, b.id);
      assert.equal(await c.store.signIn.enrolTotp(u.id, 'v2.k.u', 1, codes(u.id), T0, T0), true);
      assert.equal(await c.store.signIn.enrolTotp(v.id, 'v2.k.v', 1, codes(v.id), T0, T0), true);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(u.id), 3);
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.signIn.useRecoveryCode(u.id, codes(u.id)[1]!, at(1))))), 1);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(u.id), 2);
      assert.equal(await c.store.signIn.useRecoveryCode(u.id, codes(v.id)[0]!, at(2)), false, 'another user’s code');
      assert.equal(await c.store.signIn.useRecoveryCode(u.id, sha256('made up'), at(2)), false);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(v.id), 3, 'the other user’s codes are all unused');
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(randomUUID()), 0);
    });

    it('redeemSetupLink: sets the password once while the link holds; of many at once, one wins', async () => {
      const link = sha256(randomUUID());
      const u = await newUser(c.store, a.id, { passwordHash: null, setupTokenHash: link, setupExpiresAt: at(HOUR) });
      assert.equal(await c.store.signIn.redeemSetupLink(u.id, sha256('wrong link'), 'pw-wrong', at(1)), false, 'another digest');
      assert.equal(await c.store.signIn.redeemSetupLink(u.id, link, 'pw-late', at(HOUR)), false, 'an expired link');
      const won = fulfilled(await race(RACERS, (i) => c.store.signIn.redeemSetupLink(u.id, link, `pw-${i}`, at(2))));
      assert.equal(trues(won), 1);
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.passwordHash, `pw-${won.indexOf(true)}`, 'the winner’s password');
      assert.equal(await c.store.signIn.findSetupRecord(link), undefined, 'the link is spent');
      const user = await c.store.users.findUser(u.id);
      assert.deepEqual([user?.passwordSet, user?.setupExpiresAt, user?.updatedAt], [true, null, at(2)]);

      const disabledLink = sha256(randomUUID());
      const d = await newUser(c.store, a.id, { passwordHash: null, setupTokenHash: disabledLink, setupExpiresAt: at(HOUR) });
      await c.store.users.setDisabled(d.id, at(1), at(1), 'admin');
      assert.equal(await c.store.signIn.redeemSetupLink(d.id, disabledLink, 'pw', at(2)), false, 'a disabled user');
      assert.equal((await c.store.users.findUser(d.id))?.passwordSet, false);
    });

    it('redeemSetupLink: nothing while the user’s tenant is disabled (the user is not active then)', async () => {
      const t = await childOf(c.store, a);
      const link = sha256(randomUUID());
      const u = await newUser(c.store, t.id, { passwordHash: null, setupTokenHash: link, setupExpiresAt: at(HOUR) });
      await c.store.tenants.updateTenant(t.id, { enabled: false, updatedAt: at(1) });
      assert.equal((await c.store.signIn.findSetupRecord(link))?.active, false);
      assert.equal(await c.store.signIn.redeemSetupLink(u.id, link, 'pw', at(2)), false);
    });

    it('enrolTotp: once, under a race, with the winner’s secret and codes', async () => {
      const u = await newUser(c.store, a.id);
      const won = fulfilled(await race(RACERS, (i) => c.store.signIn.enrolTotp(u.id, `v2.k.${i}`, 1000 + i, codes(`${u.id} ${i}`, 2), at(5), T0)));
      assert.equal(trues(won), 1);
      const w = won.indexOf(true);
      const record = await c.store.signIn.findSignInRecordById(u.id);
      assert.deepEqual([record?.totpSecretSealed, record?.totpLastStep], [`v2.k.${w}`, 1000 + w]);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(u.id), 2, 'the winner’s codes only');
      const loser = (w + 1) % RACERS;
      assert.equal(await c.store.signIn.useRecoveryCode(u.id, codes(`${u.id} ${loser}`, 2)[0]!, at(6)), false, 'a loser’s code was not written');
      assert.equal(await c.store.signIn.useRecoveryCode(u.id, codes(`${u.id} ${w}`, 2)[0]!, at(6)), true);
    });

    it('enrolTotp writes nothing without a password, over an authenticator, or after a reset since the step began', async () => {
      const noPassword = await newUser(c.store, a.id, { passwordHash: null });
      assert.equal(await c.store.signIn.enrolTotp(noPassword.id, 'v2.k.x', 1, codes(noPassword.id), T0, T0), false);
      assert.equal((await c.store.users.findUser(noPassword.id))?.totpEnrolled, false);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(noPassword.id), 0);

      const enrolled = await newUser(c.store, a.id);
      assert.equal(await c.store.signIn.enrolTotp(enrolled.id, 'v2.k.first', 1, codes('first'), T0, T0), true);
      assert.equal(await c.store.signIn.enrolTotp(enrolled.id, 'v2.k.second', 2, codes('second', 5), at(1), T0), false);
      assert.equal((await c.store.signIn.findSignInRecordById(enrolled.id))?.totpSecretSealed, 'v2.k.first');
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(enrolled.id), 3);

      // the enrolment step began at 1000; the account was reset at 2000, and the person set a
      // password again through the new link
      const reset = await newUser(c.store, a.id);
      const since = at(1000);
      const link = sha256(`${reset.id} again`);
      await c.store.users.resetSignIn(reset.id, link, at(HOUR), at(2000), 'admin');
      assert.equal(await c.store.signIn.redeemSetupLink(reset.id, link, 'pw', at(2500)), true);
      assert.equal(await c.store.signIn.enrolTotp(reset.id, 'v2.k.stale', 1, codes('stale'), at(3000), since), false, 'begun before the reset');
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(reset.id), 0);
      assert.equal(await c.store.signIn.enrolTotp(reset.id, 'v2.k.fresh', 1, codes('fresh'), at(3000), at(2000)), true, 'begun after it');
    });

    it('recognised browsers: per account, until their end; renamed together; the ended ones deleted and counted', async () => {
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, b.id);
      const browser = sha256(randomUUID());
      const renamed = sha256(randomUUID());
      const lost = sha256(randomUUID());
      const far = 30 * 24 * HOUR;
      await c.store.signIn.recogniseBrowser(browser, u.id, T0, at(far + HOUR));
      assert.equal(await c.store.signIn.isRecognisedBrowser(browser, u.id, at(far)), true);
      assert.equal(await c.store.signIn.isRecognisedBrowser(browser, v.id, at(far)), false, 'not for another account');
      assert.equal(await c.store.signIn.isRecognisedBrowser(browser, u.id, at(far + HOUR)), false, 'not at its end');
      await c.store.signIn.recogniseBrowser(browser, u.id, at(far), at(far + 2 * HOUR));
      assert.equal(await c.store.signIn.isRecognisedBrowser(browser, u.id, at(far + HOUR)), true, 'a new sign-in extends it');
      await c.store.signIn.recogniseBrowser(browser, v.id, T0, at(far + 2 * HOUR));
      await c.store.signIn.recogniseBrowser(lost, u.id, T0, at(far + HOUR));
      await c.store.signIn.renameBrowser(browser, renamed);
      for (const user of [u, v]) {
        assert.equal(await c.store.signIn.isRecognisedBrowser(renamed, user.id, at(far)), true);
        assert.equal(await c.store.signIn.isRecognisedBrowser(browser, user.id, at(far)), false);
      }
      assert.equal(await c.store.signIn.isRecognisedBrowser(lost, u.id, at(far)), true, 'another browser keeps its own');
      assert.equal(await c.store.signIn.deleteExpiredBrowsers(at(far)), 0);
      assert.equal(await c.store.signIn.deleteExpiredBrowsers(at(far + HOUR)), 1, 'the lost one ended');
      assert.equal(await c.store.signIn.isRecognisedBrowser(renamed, u.id, at(far + HOUR)), true);
    });

    it('listSealedTotpSecrets and replaceSealedTotpSecret: re-sealing after a key rotation, once per secret under a race', async () => {
      const [old, current, legacy, none] = [
        await newUser(c.store, a.id),
        await newUser(c.store, a.id),
        await newUser(c.store, b.id),
        await newUser(c.store, b.id),
      ];
      await c.store.signIn.enrolTotp(old.id, 'v2.0ld0ld00.iv.body.tag', 1, codes('resealed', 1), T0, T0);
      await c.store.signIn.enrolTotp(current.id, 'v2.c0ffee00.iv.body.tag', 1, codes('resealed', 1), T0, T0);
      await c.store.signIn.enrolTotp(legacy.id, 'v1.iv.body.tag', 1, codes('resealed', 1), T0, T0);
      const mine = new Set([old.id, current.id, legacy.id, none.id]);
      const listed = (await c.store.signIn.listSealedTotpSecrets('c0ffee00')).filter((x) => mine.has(x.userId));
      assert.deepEqual(
        listed.sort((x, y) => x.sealed.localeCompare(y.sealed)),
        [
          { userId: legacy.id, sealed: 'v1.iv.body.tag' },
          { userId: old.id, sealed: 'v2.0ld0ld00.iv.body.tag' },
        ],
        'those not sealed under the key; none for an account without TOTP',
      );
      const won = fulfilled(
        await race(RACERS, (i) => c.store.signIn.replaceSealedTotpSecret(old.id, 'v2.0ld0ld00.iv.body.tag', `v2.c0ffee00.${i}.body.tag`)),
      );
      assert.equal(trues(won), 1);
      assert.equal((await c.store.signIn.findSignInRecordById(old.id))?.totpSecretSealed, `v2.c0ffee00.${won.indexOf(true)}.body.tag`);
      assert.equal(await c.store.signIn.replaceSealedTotpSecret(legacy.id, 'v1.stale', 'v2.c0ffee00.x'), false, 'not what it is now');
      assert.equal((await c.store.signIn.findSignInRecordById(legacy.id))?.totpSecretSealed, 'v1.iv.body.tag');
      assert.deepEqual(
        (await c.store.signIn.listSealedTotpSecrets('c0ffee00')).filter((x) => mine.has(x.userId)).map((x) => x.userId),
        [legacy.id],
      );
    });
    it('changePassword: replaces the password it was given as current, of an active user only', async () => {
      const u = await newUser(c.store, a.id);
      assert.equal(await c.store.signIn.changePassword(u.id, '$argon2id$test', '$argon2id$changed', at(HOUR)), true);
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.passwordHash, '$argon2id$changed');
      // a second change from the password that was current before: it is not any more
      assert.equal(await c.store.signIn.changePassword(u.id, '$argon2id$test', '$argon2id$stale', at(HOUR)), false, 'changed meanwhile');
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.passwordHash, '$argon2id$changed');
      const unset = await newUser(c.store, a.id, { passwordHash: null });
      assert.equal(
        await c.store.signIn.changePassword(unset.id, '$argon2id$test', '$argon2id$x', at(HOUR)),
        false,
        'no password yet: the set-up link sets it',
      );
      assert.equal((await c.store.signIn.findSignInRecordById(unset.id))?.passwordHash, null);
      const disabled = await newUser(c.store, a.id);
      await c.store.users.setDisabled(disabled.id, at(HOUR), at(HOUR), null);
      assert.equal(await c.store.signIn.changePassword(disabled.id, '$argon2id$test', '$argon2id$x', at(HOUR)), false);
      assert.equal((await c.store.signIn.findSignInRecordById(disabled.id))?.passwordHash, '$argon2id$test');
    });

    it('changePassword: of changes racing from the same password, exactly one wins', async () => {
      const u = await newUser(c.store, a.id);
      const won = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          c.store.transaction((tx) => tx.signIn.changePassword(u.id, '$argon2id$test', `$argon2id$racer${i}`, at(HOUR))),
        ),
      );
      assert.equal(won.filter(Boolean).length, 1);
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.passwordHash, `$argon2id$racer${won.indexOf(true)}`);
    });
    it('replaceTotp: of replacements racing from the same authenticator, exactly one wins', async () => {
      const u = await newUser(c.store, a.id);
      assert.equal(await c.store.signIn.enrolTotp(u.id, 'sealed-old', 3, codes(u.id), T0, T0), true);
      const won = await Promise.all(
        Array.from({ length: 10 }, (_, i) => c.store.transaction((tx) => tx.signIn.replaceTotp(u.id, 'sealed-old', `sealed-racer${i}`, 5, at(HOUR)))),
      );
      assert.equal(won.filter(Boolean).length, 1);
      assert.equal((await c.store.signIn.findSignInRecordById(u.id))?.totpSecretSealed, `sealed-racer${won.indexOf(true)}`);
    });
    it('replaceTotp and replaceRecoveryCodes: only for an active user with an authenticator', async () => {
      const u = await newUser(c.store, a.id);
      assert.equal(await c.store.signIn.replaceTotp(u.id, 'sealed-old', 'sealed-new', 5, at(HOUR)), false, 'no authenticator yet');
      assert.equal(await c.store.signIn.replaceRecoveryCodes(u.id, codes(u.id), at(HOUR)), false);
      assert.equal(await c.store.signIn.enrolTotp(u.id, 'sealed-old', 3, codes(u.id), T0, T0), true);
      assert.equal(await c.store.signIn.useRecoveryCode(u.id, codes(u.id)[0]!, at(HOUR)), true);
      assert.equal(await c.store.signIn.replaceTotp(u.id, 'sealed-other', 'sealed-new', 5, at(HOUR)), false, 'not the one it is now');
      assert.equal(await c.store.signIn.replaceTotp(u.id, 'sealed-old', 'sealed-new', 5, at(HOUR)), true);
      const r = await c.store.signIn.findSignInRecordById(u.id);
      assert.deepEqual([r?.totpSecretSealed, r?.totpLastStep], ['sealed-new', 5]);
      const fresh = [sha256('fresh 1'), sha256('fresh 2')];
      assert.equal(await c.store.signIn.replaceRecoveryCodes(u.id, fresh, at(HOUR)), true);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(u.id), 2);
      assert.equal(await c.store.signIn.useRecoveryCode(u.id, codes(u.id)[1]!, at(HOUR)), false, 'the old codes are gone');
      assert.equal(await c.store.signIn.useRecoveryCode(u.id, fresh[0]!, at(HOUR)), true);
      await c.store.users.setDisabled(u.id, at(HOUR), at(HOUR), null);
      assert.equal(await c.store.signIn.replaceTotp(u.id, 'sealed-new', 'sealed-later', 9, at(HOUR)), false, 'disabled');
      assert.equal(await c.store.signIn.replaceRecoveryCodes(u.id, codes(u.id), at(HOUR)), false);
      assert.equal(await c.store.signIn.countUnusedRecoveryCodes(u.id), 1);
    });
  });
}
