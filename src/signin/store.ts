// What the sign-in use cases need from storage, beyond sessions.
export interface SignInRecord {
  id: string;
  tenantId: string;
  email: string;
  emailNormalized: string;
  passwordHash: string | null;
  totpSecretSealed: string | null;
  totpLastStep: number | null;
  /** false when the user is disabled or its tenant is */
  active: boolean;
}

export interface SetupRecord {
  id: string;
  tenantId: string;
  email: string;
  setupExpiresAt: Date | null;
  active: boolean;
}

export interface SignInStore {
  findSignInRecord(emailNormalized: string): Promise<SignInRecord | undefined>;
  findSignInRecordById(userId: string): Promise<SignInRecord | undefined>;
  findSetupRecord(setupTokenHash: Buffer): Promise<SetupRecord | undefined>;
  /** Records the TOTP step just accepted, only if it is newer than the stored one (two requests with one code: one wins). */
  advanceTotpStep(userId: string, step: number): Promise<boolean>;
  /** Marks a recovery code used, only if it is unused; whether it was. */
  useRecoveryCode(userId: string, codeHash: Buffer, at: Date): Promise<boolean>;
  /** Sets the password and ends the set-up link, in one statement that holds only while the link
   *  does (this digest, unexpired, the user active): whether it did. One use, even under a race. */
  redeemSetupLink(userId: string, setupTokenHash: Buffer, passwordHash: string, at: Date): Promise<boolean>;
  /**
   * Stores the enrolled TOTP secret (sealed), its first accepted step, and new recovery codes
   * (digests), only if the account has a password, no authenticator yet, and was not reset since
   * `since` (when the enrolment step began); false, and nothing written, otherwise.
   */
  enrolTotp(userId: string, sealedSecret: string, step: number, codeHashes: Buffer[], at: Date, since: Date): Promise<boolean>;
  /** Failures recorded under a key, and when the last was. */
  findFailures(key: string): Promise<{ failures: number; lastFailureAt: Date } | undefined>;
  /** One more failure under the key; a count whose last failure is before `countsSince` starts again at 1. */
  recordFailure(key: string, at: Date, countsSince: Date): Promise<void>;
  clearFailures(key: string): Promise<void>;
  /** The enrolled TOTP secrets not sealed in the current format under key `keyId` (for
   *  re-sealing after a key rotation), sealed as stored. */
  listSealedTotpSecrets(notUnderKeyId: string): Promise<{ userId: string; sealed: string }[]>;
  /** Replaces a sealed TOTP secret if it is still `previous` (another process may have re-sealed it); whether it did. */
  replaceSealedTotpSecret(userId: string, previous: string, sealed: string): Promise<boolean>;
  /** Deletes counts whose last failure is before `before` (they no longer count); how many. */
  deleteStaleFailures(before: Date): Promise<number>;
}
