// What the user use cases need from storage.
import type { RoleAssignment } from '../access/principal.js';
import type { User } from './model.js';

export interface NewUser {
  id: string;
  tenantId: string;
  email: string;
  emailNormalized: string;
  displayName: string;
  /** null until the person sets one through the set-up link */
  passwordHash: string | null;
  setupTokenHash: Buffer | null;
  setupExpiresAt: Date | null;
  /** the set-up link was mailed to the address (using it proves the address) */
  setupLinkMailed?: boolean;
  createdAt: Date;
  createdBy: string | null;
}

export interface PendingEmail {
  email: string;
  tokenHash: Buffer;
  expiresAt: Date;
  /** the link went out through an SMTP server: following it proves the address (else it was
   *  written to the outbox folder, which the operator reads, and proves nothing) */
  mailed: boolean;
}

export type UserStatusFilter = 'active' | 'pending' | 'disabled';
export type LastSignInFilter = { never: true } | { after: Date } | { notAfter: Date };

export interface UserFilter {
  tenantId: string;
  /** an e-mail key, or a LIKE pattern over keys (`%` wildcard) */
  email?: { pattern: string; wildcard: boolean };
  /** as a person reads it: disabled; set-up pending (active, not signing in through SSO, no
   *  password or no authenticator yet); active (the rest) */
  status?: UserStatusFilter;
  /** signs in through an SSO connection (true), or with a password (false) */
  sso?: boolean;
  /** holds this role, in any tenant, through an assignment unexpired at `now` */
  role?: { roleId: string; now: Date };
  /** the last sign-in: none yet; after an instant; not after it (or none) */
  lastSignIn?: LastSignInFilter;
  offset: number;
  limit: number;
}

export interface NewAssignment extends RoleAssignment {
  principalId: string;
  createdAt: Date;
}

export interface UserStore {
  /** throws DuplicateKeyError('user.email') when a user of the same tenant has the address */
  insertUser(user: NewUser): Promise<void>;
  insertRoleAssignments(assignments: NewAssignment[]): Promise<void>;
  findUser(id: string): Promise<User | undefined>;
  /** The address's sign-in account: the one that proved it, else the oldest not superseded. */
  findUserByEmail(emailNormalized: string): Promise<User | undefined>;
  /** Every account with the address that has not given way, in findUserByEmail's order (the
   *  proven one first, then the oldest): at most one per tenant. */
  findUsersByEmail(emailNormalized: string): Promise<User[]>;
  /** The account that proved the address, in any tenant. */
  findProvenUser(emailNormalized: string): Promise<User | undefined>;
  /** Serializes changes to the users of one tenant until the transaction ends (two administrators
   *  disabling each other at once: the second finds itself disabled). */
  lockTenantUsers(tenantId: string): Promise<void>;
  /** Locks the user's row until the transaction ends (changes to one user are serialized). */
  lockUser(id: string): Promise<User | undefined>;
  listUsers(filter: UserFilter): Promise<User[]>;
  deleteRoleAssignment(userId: string, assignmentId: string): Promise<boolean>;
  setDisabled(id: string, disabledAt: Date | null, at: Date, by: string | null): Promise<void>;
  /** Clears the password, authenticator, recovery codes and passkeys, forgets recognised browsers, and sets a new set-up link.
   *  `mailed`: the new link is mailed to the address (using it proves the address) */
  resetSignIn(id: string, setupTokenHash: Buffer, setupExpiresAt: Date, at: Date, by: string | null, mailed?: boolean): Promise<void>;
  /** The new address a user asked for, with its link's digest, while one waits. */
  findPendingEmail(id: string): Promise<PendingEmail | undefined>;
  /** Records (or with null, forgets) the new address a user asked for. */
  setPendingEmail(id: string, pending: PendingEmail | null, at: Date): Promise<void>;
  /**
   * The user's address becomes `email` (its key `emailNormalized`), not proven yet (proveEmail
   * follows when the link was mailed), and the pending one is forgotten, with any reset link
   * mailed to the old address. DuplicateKeyError 'user.email' (another user of its tenant has it).
   */
  changeEmail(id: string, email: string, emailNormalized: string, at: Date): Promise<void>;
  /**
   * The account proved its address (users/email-proof.ts says when): marked proven, and every
   * other account with the address that nobody proved gives way (its set-up link stops, its
   * sessions and tokens end, it signs in no more); those are returned. DuplicateKeyError
   * 'user.provenEmail' when another account proved it first.
   */
  proveEmail(id: string, emailNormalized: string, at: Date): Promise<{ id: string; tenantId: string }[]>;
  /** Deletes the user with its role assignments, recovery codes and passkeys. */
  deleteUser(id: string): Promise<void>;
}
