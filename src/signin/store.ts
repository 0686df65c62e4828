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
  /** whether the user has a passkey (the code step offers it) */
  hasPasskeys: boolean;
}

export interface SetupRecord {
  id: string;
  tenantId: string;
  email: string;
  emailNormalized: string;
  setupExpiresAt: Date | null;
  active: boolean;
  /** the link was mailed to the address: using it proves the address */
  mailed: boolean;
  /** the account proved its address already */
  verified: boolean;
  /** another account proved the address: this link no longer works */
  claimedElsewhere: boolean;
}

/** The account of a password reset link (looked up by its digest). */
export interface ResetRecord {
  id: string;
  tenantId: string;
  email: string;
  expiresAt: Date;
  /** the user, its tenant enabled, the address not claimed elsewhere, and a password set */
  active: boolean;
}

export interface SignInStore {
  /** The address's sign-in account (docs/users.md): the one that proved it, else the oldest one
   *  not superseded. Never more than one: a password is checked against that account only. */
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
  /** Stores the digest of a new password reset link of an account that has a password, and its
   *  end (replacing any earlier link); whether it did. */
  setResetLink(userId: string, resetTokenHash: Buffer, expiresAt: Date): Promise<boolean>;
  findResetRecord(resetTokenHash: Buffer): Promise<ResetRecord | undefined>;
  /** Sets the password and ends the reset link, in one statement that holds only while the link
   *  does (this digest, unexpired, the account active with a password): whether it did. */
  redeemResetLink(userId: string, resetTokenHash: Buffer, passwordHash: string, at: Date): Promise<boolean>;
  /** Replaces the password of an account that is active and whose password is still `from` (the
   *  one the person's current password was checked against: of two changes racing from the same
   *  password, one wins, as one after the other); whether it did. */
  changePassword(userId: string, from: string, to: string, at: Date): Promise<boolean>;
  /**
   * Stores the enrolled TOTP secret (sealed), its first accepted step, and new recovery codes
   * (digests), only if the account has a password, no authenticator yet, and was not reset since
   * `since` (when the enrolment step began); false, and nothing written, otherwise.
   */
  enrolTotp(userId: string, sealedSecret: string, step: number, codeHashes: Buffer[], at: Date, since: Date): Promise<boolean>;
  /** Replaces the authenticator of an active user whose authenticator is still `from` (the sealed
   *  secret the replacement began from: of two replacements racing, one wins, as one after the
   *  other) with `to` and its first accepted step; whether it did. */
  replaceTotp(userId: string, from: string, to: string, step: number, at: Date): Promise<boolean>;
  /** Replaces every recovery code of an active user with an authenticator by these (digests);
   *  whether it did (false, nothing written, once the account was reset or disabled). */
  replaceRecoveryCodes(userId: string, codeHashes: Buffer[], at: Date): Promise<boolean>;
  /** How many of the user's recovery codes are still unused. */
  countUnusedRecoveryCodes(userId: string): Promise<number>;
  /** Records that a browser (the digest of its cookie's secret) signed in to the account, until `expiresAt`. */
  recogniseBrowser(browserHash: Buffer, userId: string, at: Date, expiresAt: Date): Promise<void>;
  /** Moves every recognition of one browser secret to another (the browser got a new cookie). */
  renameBrowser(fromHash: Buffer, toHash: Buffer): Promise<void>;
  /** Whether the browser signed in to the account before and is still recognised at `now`. */
  isRecognisedBrowser(browserHash: Buffer, userId: string, now: Date): Promise<boolean>;
  /** Deletes recognitions past their end; how many. */
  deleteExpiredBrowsers(now: Date): Promise<number>;
  /** The enrolled TOTP secrets not sealed in the current format under key `keyId` (for
   *  re-sealing after a key rotation), sealed as stored. */
  listSealedTotpSecrets(notUnderKeyId: string): Promise<{ userId: string; sealed: string }[]>;
  /** Replaces a sealed TOTP secret if it is still `previous` (another process may have re-sealed it); whether it did. */
  replaceSealedTotpSecret(userId: string, previous: string, sealed: string): Promise<boolean>;
}

/** A person's passkey (a WebAuthn credential; docs/users.md "Passkeys"). */
export interface Passkey {
  id: string;
  userId: string;
  /** the credential id as the authenticator gave it, base64url */
  credentialId: string;
  /** the COSE public key (not a secret) */
  publicKey: Buffer;
  /** the signature counter last accepted (0: the authenticator keeps none) */
  counter: number;
  /** the transports the browser reported at registration (hints for the next sign-in) */
  transports: string[];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface PasskeyStore {
  /** The user's passkeys, the oldest first. */
  listPasskeys(userId: string): Promise<Passkey[]>;
  /** The passkey with this credential id, whoever's it is (a sign-in without a password names
   *  the credential before anyone is known). */
  findPasskeyByCredentialId(credentialId: string): Promise<Passkey | undefined>;
  /** Stores a new passkey unless its credential id is registered already (to anyone); whether it did. */
  insertPasskey(passkey: Passkey): Promise<boolean>;
  /** Deletes one of the user's own passkeys (its id and the user's: nobody else's); the passkey
   *  as it was, or undefined if the user has none with this id. */
  deletePasskey(userId: string, id: string): Promise<Passkey | undefined>;
  /**
   * Records a use of the passkey: its new signature counter and when, only if the counter goes
   * forward as the WebAuthn specification requires (greater than the stored one, or both 0: an
   * authenticator that keeps no counter). One statement: of two requests with one response, one
   * wins. Whether it did (false: a counter that did not increase, or the passkey is gone).
   */
  recordPasskeyUse(id: string, counter: number, at: Date): Promise<boolean>;
}
