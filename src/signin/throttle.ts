// Failed sign-in attempts slow down the next ones, with a delay that doubles and stops growing at
// 15 minutes: guessing becomes hopeless, and the owner of an account under attack waits at most
// 15 minutes, never a lockout that needs an administrator (NIST SP 800-63B 5.2.2). Counted:
// - per account and address (5 free): the owner, at another address, is not slowed down by an
//   attacker's failures;
// - per account from anywhere (100 free): guessing spread over many addresses is bounded too;
// - per address (20 free): one address trying many accounts;
// - wrong device user codes per address (10 free);
// - device logins started per address (30 free): the unauthenticated endpoint writes a row each.
// "Account" is the e-mail address typed, normalised, whether or not an account has it, so the
// throttle does not tell which addresses have accounts. A count is forgotten after an hour
// without failures, and a successful sign-in clears the account's counts. The counts live in the
// database, so every process sees them; expired rows are purged (maintenance).

/** failures allowed before any delay */
const FREE = { account: 5, accountAll: 100, address: 20, userCode: 10, deviceStart: 30 } as const;
const FIRST_DELAY_SECONDS = 30;
export const MAX_DELAY_SECONDS = 15 * 60;
/** a count with no failure for this long starts again from zero */
export const QUIET_SECONDS = 60 * 60;

export type FailureKind = keyof typeof FREE;

export function failureKey(kind: FailureKind, value: string): string {
  return `${kind}:${value}`;
}

/** Failures before this instant no longer count (the start of the quiet window). */
export function countsSince(now: Date): Date {
  return new Date(now.getTime() - QUIET_SECONDS * 1000);
}

/** Seconds still to wait after `failures` failures, the last at `last`; 0 when an attempt may go ahead. */
export function waitSeconds(kind: FailureKind, failures: number, last: Date, now: Date): number {
  if (failures < FREE[kind] || last < countsSince(now)) return 0;
  const delay = Math.min(FIRST_DELAY_SECONDS * 2 ** (failures - FREE[kind]), MAX_DELAY_SECONDS);
  const left = Math.ceil((last.getTime() + delay * 1000 - now.getTime()) / 1000);
  return Math.max(0, left);
}
