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
  /** Stores the enrolled TOTP secret (sealed), its first accepted step, and new recovery codes (digests), replacing old ones. */
  enrolTotp(userId: string, sealedSecret: string, step: number, codeHashes: Buffer[], at: Date): Promise<void>;
  /** Failures recorded under a key, and when the last was. */
  findFailures(key: string): Promise<{ failures: number; lastFailureAt: Date } | undefined>;
  recordFailure(key: string, at: Date): Promise<void>;
  clearFailures(key: string): Promise<void>;
}
