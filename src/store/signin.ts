// SignInStore on Kysely (both engines).
import type { Kysely } from 'kysely';
import type { SignInStore } from '../signin/store.js';
import { NO_PENDING_EMAIL, signInAccountFirst } from './email-proof.js';
import type { Database } from './schema.js';

export function signInStore(db: Kysely<Database>): SignInStore {
  const record = () =>
    db
      .selectFrom('users as u')
      .innerJoin('tenants as t', 't.id', 'u.tenant_id')
      .select([
        'u.id',
        'u.tenant_id',
        'u.email',
        'u.email_normalized',
        'u.password_hash',
        'u.totp_secret_sealed',
        'u.totp_last_step',
        'u.disabled_at',
        'u.email_superseded_at',
        't.enabled',
      ])
      .select((eb) => eb.exists(eb.selectFrom('passkeys as p').select('p.id').whereRef('p.user_id', '=', 'u.id')).as('has_passkeys'));
  type Row = Awaited<ReturnType<ReturnType<typeof record>['executeTakeFirst']>>;
  const toRecord = (r: Row) =>
    r && {
      id: r.id,
      tenantId: String(r.tenant_id),
      email: r.email,
      emailNormalized: r.email_normalized,
      passwordHash: r.password_hash,
      totpSecretSealed: r.totp_secret_sealed,
      totpLastStep: r.totp_last_step === null ? null : Number(r.totp_last_step),
      // an account that gave way to one that proved the address signs in no more
      active: r.disabled_at === null && r.email_superseded_at === null && r.enabled === true,
      hasPasskeys: r.has_passkeys === true,
    };

  /** A user's recovery codes: these (digests), and no other. */
  const putRecoveryCodes = async (userId: string, codeHashes: Buffer[], at: Date) => {
    await db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
    await db
      .insertInto('user_recovery_codes')
      .values(codeHashes.map((h) => ({ user_id: userId, code_hash: h, created_at: at, used_at: null })))
      .execute();
  };

  return {
    findSignInRecord: async (key) =>
      toRecord(
        await signInAccountFirst(record().where('u.email_normalized', '=', key), 'u')
          .limit(1)
          .executeTakeFirst(),
      ),

    findSignInRecordById: async (id) => toRecord(await record().where('u.id', '=', id).executeTakeFirst()),

    async findSetupRecord(hash) {
      const r = await db
        .selectFrom('users as u')
        .innerJoin('tenants as t', 't.id', 'u.tenant_id')
        .select([
          'u.id',
          'u.tenant_id',
          'u.email',
          'u.email_normalized',
          'u.setup_expires_at',
          'u.disabled_at',
          'u.setup_link_mailed',
          'u.email_verified_at',
          'u.email_superseded_at',
          't.enabled',
        ])
        .where('u.setup_token_hash', '=', hash)
        .executeTakeFirst();
      return (
        r && {
          id: r.id,
          tenantId: String(r.tenant_id),
          email: r.email,
          emailNormalized: r.email_normalized,
          setupExpiresAt: r.setup_expires_at,
          active: r.disabled_at === null && r.enabled === true,
          mailed: r.setup_link_mailed,
          verified: r.email_verified_at !== null,
          claimedElsewhere: r.email_superseded_at !== null,
        }
      );
    },

    async advanceTotpStep(userId, step) {
      const r = await db
        .updateTable('users')
        .set({ totp_last_step: String(step) })
        .where('id', '=', userId)
        .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', String(step))]))
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async useRecoveryCode(userId, codeHash, at) {
      const r = await db
        .updateTable('user_recovery_codes')
        .set({ used_at: at })
        .where('user_id', '=', userId)
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async redeemSetupLink(userId, setupTokenHash, passwordHash, at) {
      const r = await db
        .updateTable('users')
        .set({
          password_hash: passwordHash,
          setup_token_hash: null,
          setup_expires_at: null,
          reset_token_hash: null,
          reset_expires_at: null,
          updated_at: at,
        })
        .where('id', '=', userId)
        .where('setup_token_hash', '=', setupTokenHash)
        .where('setup_expires_at', '>', at)
        .where('disabled_at', 'is', null)
        .where('email_superseded_at', 'is', null)
        // active as findSetupRecord says: the user's tenant enabled too (it may be disabled between the two)
        .where((eb) => eb.exists(eb.selectFrom('tenants as t').select('t.id').whereRef('t.id', '=', 'users.tenant_id').where('t.enabled', '=', true)))
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async setResetLink(userId, hash, expiresAt) {
      const r = await db
        .updateTable('users')
        .set({ reset_token_hash: hash, reset_expires_at: expiresAt })
        .where('id', '=', userId)
        .where('password_hash', 'is not', null)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async findResetRecord(hash) {
      const r = await db
        .selectFrom('users as u')
        .innerJoin('tenants as t', 't.id', 'u.tenant_id')
        .select(['u.id', 'u.tenant_id', 'u.email', 'u.reset_expires_at', 'u.password_hash', 'u.disabled_at', 'u.email_superseded_at', 't.enabled'])
        .where('u.reset_token_hash', '=', hash)
        .executeTakeFirst();
      if (!r?.reset_expires_at) return undefined;
      return {
        id: r.id,
        tenantId: String(r.tenant_id),
        email: r.email,
        expiresAt: r.reset_expires_at,
        active: r.disabled_at === null && r.email_superseded_at === null && r.enabled === true && r.password_hash !== null,
      };
    },

    async redeemResetLink(userId, hash, passwordHash, at) {
      // one conditional statement, as redeemSetupLink: of two uses racing, one wins
      const r = await db
        .updateTable('users')
        // every session and token from before ends (whoever caused the reset may hold one), and a
        // new address asked for before
        .set({
          password_hash: passwordHash,
          reset_token_hash: null,
          reset_expires_at: null,
          ...NO_PENDING_EMAIL,
          tokens_valid_after: at,
          updated_at: at,
          updated_by: userId,
        })
        .where('id', '=', userId)
        .where('reset_token_hash', '=', hash)
        .where('reset_expires_at', '>', at)
        .where('password_hash', 'is not', null)
        .where('disabled_at', 'is', null)
        .where('email_superseded_at', 'is', null)
        .where((eb) => eb.exists(eb.selectFrom('tenants as t').select('t.id').whereRef('t.id', '=', 'users.tenant_id').where('t.enabled', '=', true)))
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async changePassword(userId, from, to, at) {
      // one conditional statement: the row as it is when updated (PostgreSQL reads it again after
      // waiting for a concurrent change's lock), so a change racing another from the same password loses
      const r = await db
        .updateTable('users')
        .set({ password_hash: to, reset_token_hash: null, reset_expires_at: null, updated_at: at, updated_by: userId })
        .where('id', '=', userId)
        .where('password_hash', '=', from)
        .where('disabled_at', 'is', null)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async enrolTotp(userId, sealedSecret, step, codeHashes, at, since) {
      // one conditional statement: of two sessions racing to enrol, one wins; a session parked at
      // this step before a reset (or before another enrolment) writes nothing
      const updated = await db
        .updateTable('users')
        .set({ totp_secret_sealed: sealedSecret, totp_last_step: String(step), updated_at: at })
        .where('id', '=', userId)
        .where('totp_secret_sealed', 'is', null)
        .where('password_hash', 'is not', null)
        .where((eb) => eb.or([eb('tokens_valid_after', 'is', null), eb('tokens_valid_after', '<=', since)]))
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await putRecoveryCodes(userId, codeHashes, at);
      return true;
    },

    async replaceTotp(userId, from, to, step, at) {
      // one conditional statement, as changePassword: a replacement racing another loses
      const r = await db
        .updateTable('users')
        .set({ totp_secret_sealed: to, totp_last_step: String(step), updated_at: at, updated_by: userId })
        .where('id', '=', userId)
        .where('totp_secret_sealed', '=', from)
        .where('disabled_at', 'is', null)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async replaceRecoveryCodes(userId, codeHashes, at) {
      const updated = await db
        .updateTable('users')
        .set({ updated_at: at, updated_by: userId })
        .where('id', '=', userId)
        .where('totp_secret_sealed', 'is not', null)
        .where('disabled_at', 'is', null)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await putRecoveryCodes(userId, codeHashes, at);
      return true;
    },

    async countUnusedRecoveryCodes(userId) {
      const r = await db
        .selectFrom('user_recovery_codes')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async recogniseBrowser(browserHash, userId, at, expiresAt) {
      await db
        .insertInto('recognised_browsers')
        .values({ browser_hash: browserHash, user_id: userId, recognised_at: at, expires_at: expiresAt })
        .onConflict((oc) => oc.columns(['browser_hash', 'user_id']).doUpdateSet({ recognised_at: at, expires_at: expiresAt }))
        .execute();
    },

    async renameBrowser(fromHash, toHash) {
      await db.updateTable('recognised_browsers').set({ browser_hash: toHash }).where('browser_hash', '=', fromHash).execute();
    },

    async isRecognisedBrowser(browserHash, userId, now) {
      const r = await db
        .selectFrom('recognised_browsers')
        .select('user_id')
        .where('browser_hash', '=', browserHash)
        .where('user_id', '=', userId)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return r !== undefined;
    },

    async deleteExpiredBrowsers(now) {
      const r = await db.deleteFrom('recognised_browsers').where('expires_at', '<=', now).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async listSealedTotpSecrets(notUnderKeyId) {
      // the database leaves out what is already sealed under the key: a start after no rotation reads nothing
      const rows = await db
        .selectFrom('users')
        .select(['id', 'totp_secret_sealed'])
        .where('totp_secret_sealed', 'is not', null)
        .where('totp_secret_sealed', 'not like', `v2.${notUnderKeyId}.%`)
        .execute();
      return rows.map((r) => ({ userId: r.id, sealed: r.totp_secret_sealed! }));
    },

    async replaceSealedTotpSecret(userId, previous, sealed) {
      const r = await db
        .updateTable('users')
        .set({ totp_secret_sealed: sealed })
        .where('id', '=', userId)
        .where('totp_secret_sealed', '=', previous)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1;
    },
  };
}
