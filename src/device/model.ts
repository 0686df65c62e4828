// Device authorization (RFC 8628; docs/users.md, "Device login"): a CLI or a notebook asks for a
// device code and a user code; the person confirms the user code in a browser, signs in as the
// account the CLI named, and approves; the CLI, polling, receives that person's token once.
import { randomInt } from 'node:crypto';
import { type Refusal, refusal } from '../errors.js';
import { emailKey } from '../users/model.js';

/** RFC 8628 section 6.1: 20 consonants (no vowels: no words), upper case, shown XXXX-XXXX. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;
/** how long a device code works, and the polling interval the CLI starts with */
export const DEVICE_CODE_SECONDS = 600;
export const POLL_INTERVAL_SECONDS = 5;
/** what slow_down adds to the interval (RFC 8628 section 3.5) */
export const SLOW_DOWN_SECONDS = 5;
/** the public clients that may start a device login (they hold no secret) */
export const PUBLIC_CLIENTS = ['gatehouse-cli'] as const;

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'issued';

export interface DeviceAuthorization {
  deviceCodeHash: Buffer;
  /** canonical: 8 letters, no dash */
  userCode: string;
  clientId: string;
  /** the e-mail key of the account the CLI named */
  loginHint: string;
  status: DeviceStatus;
  userId: string | null;
  intervalSeconds: number;
  lastPolledAt: Date | null;
  createdAt: Date;
  expiresAt: Date;
  /** the address the CLI started from (shown on the approval page); null for older codes */
  requestedFrom: string | null;
}

/** What a poll comes to; the device-code grant (oauth/grants/device-code.ts) turns each into its RFC 8628 answer. */
export type PollResult =
  | { kind: 'pending' }
  | { kind: 'slow_down'; interval: number }
  | { kind: 'expired' }
  | { kind: 'denied' }
  /** unknown code, another client's code, or a token already issued for it */
  | { kind: 'invalid' }
  /** approved by a user who is still active: its id and home tenant */
  | { kind: 'approved'; userId: string; tenantId: string };

/** Whether an authorization may be decided by this account: the one the CLI named, only. */
export function isForAccount(a: Pick<DeviceAuthorization, 'loginHint'>, email: string): boolean {
  return emailKey(email) === a.loginHint;
}

/** A signed-in person who is not the account the CLI named (403). */
export function wrongAccount(email: string): Refusal {
  return refusal(
    403,
    `Your command line asked to sign in as a different account than ${email}. Sign out, then open the link again and sign in as the account you named at the command line.`,
  );
}

export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** As people read it: XXXX-XXXX. */
export function displayUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** The most characters a typed code may have, spaces and dashes included (the page's field takes no more). */
export const USER_CODE_INPUT_MAX = 64;

/** What a person typed, as a canonical code (case, spaces and dashes ignored), or undefined:
 *  also for anything longer than USER_CODE_INPUT_MAX, whatever it holds. */
export function canonicalUserCode(input: string): string | undefined {
  if (input.length > USER_CODE_INPUT_MAX) return undefined;
  const typed = input.replace(/[\s-]/g, '');
  // ASCII letters only, before case is folded: Unicode folds some other letters onto the
  // alphabet's (a long s upper-cases to S)
  if (!/^[A-Za-z]*$/.test(typed)) return undefined;
  const code = typed.toUpperCase();
  return code.length === USER_CODE_LENGTH && [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined;
}
