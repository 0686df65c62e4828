// Failed sign-in attempts slow down the next ones, per account and per address (and wrong device
// user codes per address), with a delay that
// doubles and stops growing at 15 minutes: guessing becomes hopeless, and the owner of an account
// under attack waits at most 15 minutes, never a lockout that needs an administrator
// (NIST SP 800-63B 5.2.2). A successful sign-in clears the account's count. The counts live in
// the database, so every process sees them.

/** failures allowed before any delay */
const FREE = { account: 5, address: 20, userCode: 10 } as const;
const FIRST_DELAY_SECONDS = 30;
export const MAX_DELAY_SECONDS = 15 * 60;

export type FailureKind = keyof typeof FREE;

export function failureKey(kind: FailureKind, value: string): string {
  return `${kind}:${value}`;
}

/** Seconds still to wait after `failures` failures, the last at `last`; 0 when an attempt may go ahead. */
export function waitSeconds(kind: FailureKind, failures: number, last: Date, now: Date): number {
  if (failures < FREE[kind]) return 0;
  const delay = Math.min(FIRST_DELAY_SECONDS * 2 ** (failures - FREE[kind]), MAX_DELAY_SECONDS);
  const left = Math.ceil((last.getTime() + delay * 1000 - now.getTime()) / 1000);
  return Math.max(0, left);
}
