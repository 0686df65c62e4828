// A browser session (docs/users.md, "Sessions"). Anonymous while a person is signing in (it then
// carries the sign-in flow's state and the CSRF token of its forms); signed in once every factor
// has passed, under a new id. Valid while it is used (idle time-out), up to an absolute limit, and
// only while its user is active and was not cut off (disabled, reset) after it signed in.
import { timingSafeEqual } from 'node:crypto';

/** Where a sign-in stands: which factor is asked next, for whom. */
export type SignInStep =
  | { step: 'email' }
  /** `userId` is empty for an address without an account (the password step fails as for a wrong password) */
  | { step: 'password'; userId: string; email: string }
  /** `passkeys`: the account has passkeys (one may answer in place of a code) */
  | { step: 'totp'; userId: string; passkeys?: boolean }
  /** `pendingSecret`: the authenticator being enrolled, sealed, until a first code confirms it;
   *  `since`: when the step began (ISO): a reset of the account after it voids the step */
  | { step: 'enrol'; userId: string; since: string; pendingSecret?: string }
  /** a set-up link was opened: the first password is asked (the hex digest of the link's token) */
  | { step: 'setup'; userId: string; setupTokenHash: string }
  /** a password reset link was opened: a new password is asked (the hex digest of the link's token) */
  | { step: 'reset'; userId: string; resetTokenHash: string }
  /** the address belongs to an SSO connection: the person signs in at its IdP (docs/sso.md) */
  | { step: 'sso'; connectionId: string; email: string };

/** Why a sign-in is under way for one account only (its address was named elsewhere): the
 *  pages say so, and the e-mail step refuses any other address before a password is asked. */
export interface SignInFor {
  email: string;
  /** a device login waiting for approval: its user code, as shown at the command line */
  deviceUserCode?: string;
}

export interface SessionState {
  signIn?: SignInStep;
  /** the one account this sign-in is for, if any */
  signInFor?: SignInFor;
  /** a set-up link opened while signed in: kept until the person confirms switching accounts
   *  (the hex digest of the link's token, and whose link it is) */
  pendingSetup?: { setupTokenHash: string; email: string };
  /** where to go once signed in (a path of this service) */
  returnTo?: string;
  /** a signed-in person replacing their authenticator (the account page): the new key, sealed,
   *  until a first code from it confirms it */
  /** a new authenticator waiting for its first code (signin/service.ts), sealed; since when (ISO time) */
  reenrol?: { pendingSecret: string; since?: string };
  /** a passkey challenge waiting for the browser's answer (signin/webauthn.ts): taken out when
   *  answered (one answer per challenge); 'register' on the account page, 'signIn' at a sign-in
   *  step; for one account (`userId`) or any (null); made at `issuedAt` (ISO) */
  passkeyChallenge?: { challenge: string; purpose: 'register' | 'signIn'; userId: string | null; issuedAt: string };
  /** a message for the next console page, shown once (what a redirect after a change reports;
   *  never a secret) */
  notice?: string;
}

/** What a writer changes in a session's state: its own keys, nothing else (the rest stays as the
 *  database has it, whatever another request of the session wrote meanwhile). */
export interface SessionStatePatch {
  set?: Partial<SessionState>;
  remove?: (keyof SessionState)[];
}

export interface Session {
  idHash: Buffer;
  /** null while anonymous */
  userId: string | null;
  signedInAt: Date | null;
  state: SessionState;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

/** A session as a list of someone's sessions shows it: when, never its CSRF token or state. */
export type SessionSummary = Pick<Session, 'idHash' | 'userId' | 'signedInAt' | 'createdAt' | 'lastSeenAt' | 'expiresAt'>;

/** A session and the secret its cookie carries (only ever returned when it is new). */
export interface IssuedSession {
  secret: string;
  session: Session;
}

/** What the sign-in flows (signin/, sso/) do with sessions; SessionService does it. */
export interface SessionLifecycle {
  /** a new anonymous session, for the forms of a sign-in */
  start(state?: SessionState): Promise<IssuedSession>;
  /** sets and removes the keys a step means; every other key of the session stays */
  patchState(session: Session, patch: SessionStatePatch): Promise<void>;
  /** takes one key out of the state: its value to the one request that took it (single use) */
  takeState<K extends keyof SessionState>(session: Session, key: K): Promise<SessionState[K] | undefined>;
  /** the anonymous session goes on under a new id (a step raised trust); undefined if it is gone */
  rotate(previous: Session, state: SessionState): Promise<IssuedSession | undefined>;
  /** every factor passed: a signed-in session under a new id */
  signIn(previous: Session | undefined, userId: string, returnTo?: string, notice?: string): Promise<IssuedSession>;
  end(session: Session): Promise<void>;
}

export interface SessionTimeouts {
  /** ends a session not used for this long */
  idleSeconds: number;
  /** ends any session this long after it began (sign-in starts a new one) */
  absoluteSeconds: number;
}

/** Whether a form's CSRF token is the session's (constant time). */
export function csrfMatches(session: Pick<Session, 'csrfToken'>, presented: unknown): boolean {
  if (typeof presented !== 'string') return false;
  // compared as bytes: a string of the same length in characters may differ in bytes
  const given = Buffer.from(presented, 'utf8');
  const expected = Buffer.from(session.csrfToken, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A path of this service to return to after sign-in, or undefined (no open redirects). */
export function safeReturnPath(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 512) return undefined;
  // one leading slash, no scheme-relative `//` or `/\`; printable ASCII only (it goes into a
  // Location header; the paths of this service are ASCII, their query encoded)
  if (!/^\/(?![/\\])[\x21-\x7e]*$/.test(raw)) return undefined;
  return raw;
}
