// A browser that signed in to an account before (OWASP's "device cookie"): after every complete
// sign-in the browser keeps a long-lived cookie whose secret (256 random bits) the database knows
// by its SHA-256, per account. In a later sign-in to that account the browser is recognised and
// makes its attempts under its own allowance: failures from elsewhere, however many, do not keep
// it out, and its own do not count against the account (docs/users.md, "Throttles").
import { createHash, randomBytes } from 'node:crypto';

/** how long a browser stays recognised after its last sign-in */
export const RECOGNISED_DAYS = 90;

export const BROWSER_SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newBrowserSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function hashBrowserSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}
