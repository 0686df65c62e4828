// What a new password must be (NIST SP 800-63B, 5.1.1.2): long enough, not too long to hash, and
// not one that attackers try first. No composition rules (they make passwords worse, not
// stronger), no expiry. Checked when a password is set, never at sign-in.
import { dictionary } from '@zxcvbn-ts/language-common';
import { characterCount } from '../text.js';

/** With a second factor always required, NIST asks for 8; 12 is what a modern policy sets. */
export const PASSWORD_MIN = 12;
/** Long passphrases welcome; the bound keeps hashing cheap to refuse. */
export const PASSWORD_MAX = 256;

/** The ~49,000 most common passwords of breach corpora (zxcvbn-ts's list), compared case-insensitively. */
const COMMON = new Set((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));

/**
 * What is wrong with a new password, in words a person can act on, or undefined. `context` holds
 * values a password must not be (the e-mail address, its local part, the service name).
 */
export function passwordProblem(password: string, context: readonly string[] = []): string | undefined {
  const n = characterCount(password.normalize('NFC'));
  if (n < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters (a few unrelated words make a good one).`;
  if (n > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  const lower = password.normalize('NFKC').toLowerCase();
  if (COMMON.has(lower)) return 'This password is one of the most common ones; choose another.';
  if (/^(.)\1*$/u.test(lower)) return 'A password of one repeated character is too easy to guess.';
  for (const c of context) {
    const value = c.normalize('NFKC').toLowerCase();
    if (value.length >= 4 && (lower === value || lower.includes(value)))
      return 'Do not use your e-mail address or the service name in your password.';
  }
  return undefined;
}
