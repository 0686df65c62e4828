// Time-based one-time passwords (RFC 6238, as every authenticator app speaks them): SHA-1, six
// digits, 30 s steps, the previous and next step accepted for clock drift. A code is refused if
// a code of its step or an earlier one was already accepted (the caller keeps the last accepted
// step per user), so a code seen over a shoulder cannot be used twice.
import { Secret, TOTP } from 'otpauth';

export const TOTP_PERIOD_SECONDS = 30;
const DIGITS = 6;
/** steps either side of now that are accepted */
const WINDOW = 1;

export interface TotpSecret {
  /** base32, as an authenticator app takes it typed in */
  base32: string;
  /** the otpauth:// URI a QR code carries */
  uri: string;
}

function totp(base32: string, label = 'user', issuer = 'Gatehouse'): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: DIGITS, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(base32) });
}

/** A new 160-bit secret (RFC 4226's recommendation) for `account` (the e-mail address). */
export function newTotpSecret(account: string, issuer: string): TotpSecret {
  return totpSecret(new Secret({ size: 20 }).base32, account, issuer);
}

/** A secret with the URI an authenticator app reads from a QR code. */
export function totpSecret(base32: string, account: string, issuer: string): TotpSecret {
  return { base32, uri: totp(base32, account, issuer).toString() };
}

/**
 * The time step a code belongs to, if it is valid now and newer than `lastStep` (the last step
 * accepted for this user); undefined otherwise. The caller stores the returned step.
 */
export function acceptTotp(base32: string, code: string, now: Date, lastStep: number | null): number | undefined {
  const digits = code.replace(/[\s-]/g, '');
  if (!/^\d{6}$/.test(digits)) return undefined;
  const delta = totp(base32).validate({ token: digits, timestamp: now.getTime(), window: WINDOW });
  if (delta === null) return undefined;
  const step = Math.floor(now.getTime() / 1000 / TOTP_PERIOD_SECONDS) + delta;
  if (lastStep !== null && step <= lastStep) return undefined;
  return step;
}

/** The code of a step (tests, and nothing else, need to make codes). */
export function totpCodeAt(base32: string, at: Date): string {
  return totp(base32).generate({ timestamp: at.getTime() });
}
