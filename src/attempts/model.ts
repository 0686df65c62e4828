// Attempts at guessing something (a password, a code, a device's user code), counted so that
// guessing becomes hopeless while the owner is never kept out for long (docs/users.md,
// "Throttles"). Each count has a key (what it counts: an address, an account from an address, a
// recognised browser, ...) and a rule.
//
// An attempt is counted BEFORE the secret is checked, by one statement that counts it under each
// of its keys only if that key's rule allows another one now (store.ts, reserveAttempts; gate.ts
// gives back the others when one refuses). So of any number of attempts made at once, no more
// than the rule allows are ever checked; the others are answered "wait" unchecked. A success
// gives its attempt back (or clears the count).
//
// Two kinds of rule:
// - `doubling`: `free` attempts, then each one waits after the last: 30 s, doubling, never more
//   than 15 minutes; the count starts again after `resetSeconds` without an attempt.
// - `window`: `free` attempts within a window that begins at the first one and lasts
//   `resetSeconds`; then none until the window ends, and attempts refused meanwhile are not
//   counted, so the wait cannot be drawn out: it ends when the window does.

export interface AttemptRule {
  free: number;
  after: 'doubling' | 'window';
  resetSeconds: number;
}

export const FIRST_DELAY_SECONDS = 30;
export const MAX_DELAY_SECONDS = 15 * 60;
/** a `doubling` count with no attempt for this long starts again from zero */
export const QUIET_SECONDS = 60 * 60;

/** What each key counts, and its rule. */
export const ATTEMPT_RULES = {
  /** one address, whatever the account (sign-in): one address trying many accounts */
  address: { free: 20, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** one account's passwords (the address typed) from one address, by a browser not recognised for it */
  account: { free: 5, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** one account's second-factor codes from one address, by a browser not recognised for it */
  code: { free: 5, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** one account's passwords from every browser not recognised for it: guessing spread over
   *  many addresses is bounded, and the owner waits at most one window (an hour) */
  accountAll: { free: 100, after: 'window', resetSeconds: 60 * 60 },
  /** one account's second-factor codes from every browser not recognised for it: only someone
   *  who has the password gets that far, so the bound is tight and holds while they keep trying */
  secondFactor: { free: 10, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** the same codes over 30 days: 6 digits are about 20 bits, so at most 100 guesses in 30 days
   *  (NIST SP 800-63B 5.2.2), however patiently the waits above are sat out; an Administrator's
   *  reset or unlock of the sign-in starts it again (users/service.ts) */
  secondFactorMonth: { free: 100, after: 'window', resetSeconds: 30 * 24 * 60 * 60 },
  /** a browser that signed in to the account before (its own allowance: nobody else's failures
   *  count against it, and none of the counts above apply to it, up to BROWSER_CEILING) */
  browser: { free: 5, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** wrong device user codes from one address */
  userCode: { free: 10, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** password reset requests from one address, whatever the account (each may queue a mail) */
  resetAddress: { free: 10, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** password reset requests for one e-mail address, from anywhere: a mailbox is not flooded */
  resetAccount: { free: 3, after: 'doubling', resetSeconds: QUIET_SECONDS },
  /** address changes one account asks for (each mails a link to the address it names) */
  emailChange: { free: 5, after: 'window', resetSeconds: 60 * 60 },
  /** address-change mails to one address, from any account: a mailbox is not flooded */
  emailChangeTo: { free: 10, after: 'window', resetSeconds: 60 * 60 },
  /** DNS checks of one tenant's SSO domains asked for by hand ("Check now", checkSSODomain) */
  domainCheck: { free: 20, after: 'window', resetSeconds: 60 * 60 },
  /** IdP metadata fetched from a URL on one tenant's behalf (getSSOConnectionConfig and
   *  updateSSOConnection with a metadataURL, refreshSSOConnectionMetadata); the scheduled
   *  refresh is not counted */
  metadataFetch: { free: 30, after: 'window', resetSeconds: 60 * 60 },
  /** device logins started from one address (each writes a row, unauthenticated) */
  deviceStart: { free: 30, after: 'doubling', resetSeconds: QUIET_SECONDS },
} as const satisfies Record<string, AttemptRule>;

export type AttemptKind = keyof typeof ATTEMPT_RULES;

/** A recognised browser with this many failures in its count is treated as any other browser
 *  until a sign-in succeeds in it (OWASP: a device cookie is locked out after N failures), so a
 *  lost or shared machine does not get unbounded guesses at the pace of its own delays. */
export const BROWSER_CEILING = 10;

/** A count under one key. */
export interface AttemptCount {
  attempts: number;
  firstAt: Date;
  lastAt: Date;
}

export function attemptKey(kind: AttemptKind, value: string): string {
  return `${kind}:${value}`;
}

/**
 * Every count of one account (`emailKey` of its address) that failures of its factors make, as
 * signin/service.ts builds them: the account-wide ones, and the account's from each address
 * (`account:<account>|<address prefix>`, `code:...`). What an Administrator's unlock clears
 * (users/service.ts unlockSignIn); the address's own count (`address:`, any account) and the
 * recognised browsers' are not the account's.
 *
 * A per-address count is matched by its prefix and a last part without `|`: an address prefix
 * (oauth/address-prefix.ts) holds none, while an account's domain may (the address shape allows
 * it), so `a@x.io|evil.com`'s counts are not `a@x.io`'s. (A proxy's non-address text with a `|`
 * in it is left to its hour.)
 */
export function accountCounts(account: string): { keys: string[]; prefixes: string[] } {
  return {
    keys: [attemptKey('accountAll', account), attemptKey('secondFactor', account), attemptKey('secondFactorMonth', account)],
    prefixes: [attemptKey('account', `${account}|`), attemptKey('code', `${account}|`)],
  };
}

/** Whether the count no longer holds at `now` (it starts again from zero). */
export function isStale(rule: AttemptRule, count: AttemptCount, now: Date): boolean {
  const from = rule.after === 'window' ? count.firstAt : count.lastAt;
  return now.getTime() - from.getTime() >= rule.resetSeconds * 1000;
}

/** The delay after `attempts` attempts under a `doubling` rule, in seconds (0 within `free`). */
export function delaySeconds(rule: AttemptRule, attempts: number): number {
  if (attempts < rule.free) return 0;
  return Math.min(FIRST_DELAY_SECONDS * 2 ** Math.min(attempts - rule.free, 20), MAX_DELAY_SECONDS);
}

/** Seconds until another attempt may be counted; 0 when one may now. */
export function waitSeconds(rule: AttemptRule, count: AttemptCount | undefined, now: Date): number {
  if (!count || isStale(rule, count, now) || count.attempts < rule.free) return 0;
  const until =
    rule.after === 'window' ? count.firstAt.getTime() + rule.resetSeconds * 1000 : count.lastAt.getTime() + delaySeconds(rule, count.attempts) * 1000;
  return Math.max(0, Math.ceil((until - now.getTime()) / 1000));
}

/** The kinds whose counts matter longer than an hour or so: purged by their own cut (purge.ts). */
export const LONG_KINDS: readonly AttemptKind[] = ['secondFactorMonth'];

/** The longest a count of any other kind can matter: counts older than this may be deleted. */
export const LONGEST_RESET_SECONDS = Math.max(
  ...Object.entries(ATTEMPT_RULES)
    .filter(([kind]) => !LONG_KINDS.includes(kind as AttemptKind))
    .map(([, r]) => r.resetSeconds),
);
