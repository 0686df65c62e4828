// People who sign in (docs/users.md), and the rules on their fields that need no storage.
import type { RoleAssignment } from '../access/principal.js';
import { badInput } from '../errors.js';
import { characterCount, checkLine, checkName, nameKey, quoted, TEXT_LIMITS } from '../text.js';

export type UserStatus = 'active' | 'disabled';

/** verified: this account proved the address; unverified: nobody has yet; claimed_elsewhere:
 *  another account proved it, and this one's set-up link stopped working */
export type EmailStatus = 'verified' | 'unverified' | 'claimed_elsewhere';

export interface User {
  id: string;
  /** home tenant: where the user was created, and the acting tenant when a request names none */
  tenantId: string;
  /** as entered (NFC, trimmed); `emailNormalized` is what is unique and what sign-in compares */
  email: string;
  emailNormalized: string;
  displayName: string;
  status: UserStatus;
  /** whether a password is set (false until the set-up link is used) */
  passwordSet: boolean;
  /** has signed in through an SSO connection: the IdP is their sign-in (docs/sso.md) */
  ssoSignIn: boolean;
  /** whether a TOTP authenticator is enrolled */
  totpEnrolled: boolean;
  /** when the pending set-up link stops working; null when none is pending */
  setupExpiresAt: Date | null;
  /** the address's state (docs/users.md "Invitations and proven addresses"): proven by this
   *  account (set-up through a mailed link, or grandfathered); not proven yet; or proven by
   *  another account, in some tenant, which this one gave way to */
  emailStatus: EmailStatus;
  createdAt: Date;
  updatedAt: Date;
  createdBy: string | null;
  updatedBy: string | null;
  disabledAt: Date | null;
  lastSignInAt: Date | null;
  roleAssignments: RoleAssignment[];
}

export const EMAIL_MAX = TEXT_LIMITS.email;
export const DISPLAY_NAME_MAX = 200;

/** One address: local part, one `@`, a domain with a dot; no spaces, quotes or angle brackets. */
const EMAIL_SHAPE = /^[^\s@"<>()[\]\\,;:]{1,64}@[^\s@"<>()[\]\\,;:_]+\.[^\s@"<>()[\]\\,;:_]+$/u;

export interface Email {
  /** NFC and trimmed, as shown */
  email: string;
  /** the sign-in and uniqueness key: NFKC, lower case */
  key: string;
}

/**
 * An e-mail address as a sign-in name. Compared case-insensitively (every identity provider does,
 * although RFC 5321 leaves the local part's case to the receiving host) after NFKC, so that a
 * full-width or composed spelling is the same account.
 */
export function checkEmail(raw: string, field = 'email'): Email {
  const email = checkLine(raw, field, EMAIL_MAX);
  if (email === null) throw badInput(`${field} must not be empty`, { field });
  const key = emailKey(email);
  // the key must still be one address: compatibility forms (a full-width ＠, a ligature that
  // folds into spaces or punctuation) must not change its shape, nor its length past the bound
  if (!wellShaped(email) || !wellShaped(key) || characterCount(key) > EMAIL_MAX) {
    throw badInput(`${field} ${quoted(email)} is not an e-mail address (expected one like name@example.com)`, { field });
  }
  return { email, key };
}

function wellShaped(address: string): boolean {
  return EMAIL_SHAPE.test(address) && !address.includes('..') && !/^\.|\.@|@\.|\.$/.test(address);
}

/** The comparison key of an address (also for sign-in input that is not checked further): NFKC
 *  and case-folded as names are (text.ts nameKey), so `STRASSE` and `straße`, `ΣΑΣ` and `σας`
 *  meet. */
export function emailKey(email: string): string {
  return nameKey(email.trim());
}

/** A display name: the name rules (one line, whitespace runs collapsed, visible characters);
 *  empty means "none" (the address is shown). */
export function checkDisplayName(raw: string | null | undefined): string {
  if (raw === null || raw === undefined || raw.trim() === '') return '';
  return checkName(raw, 'display_name', DISPLAY_NAME_MAX).name;
}

/** Whether the person still has to finish setting up sign-in (a password, an authenticator). */
export function setupPending(user: Pick<User, 'passwordSet' | 'totpEnrolled'> & { ssoSignIn?: boolean }): boolean {
  return !user.ssoSignIn && (!user.passwordSet || !user.totpEnrolled);
}
