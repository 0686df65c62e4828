// Recovery codes: ten single-use codes shown once at TOTP enrolment, for a lost authenticator.
// Each is 70 random bits in Crockford base32 (no I, L, O, U), shown as xxxxx-xxxxx-xxxx; stored
// as SHA-256 digests (high entropy: no slow hash needed, as for client secrets). Input is
// compared case-insensitively, with dashes and spaces ignored, and O/I/L read as 0/1/1.
import { createHash, randomBytes } from 'node:crypto';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 14;

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(LENGTH);
    const chars = [...bytes].map((b) => ALPHABET[b & 31]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5, 10)}-${chars.slice(10)}`;
  });
}

/** The canonical form of what a person typed, or undefined if it cannot be a code. */
export function canonicalRecoveryCode(input: string): string | undefined {
  const s = input.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  return s.length === LENGTH && [...s].every((c) => ALPHABET.includes(c)) ? s : undefined;
}

export function hashRecoveryCode(code: string): Buffer {
  const canonical = canonicalRecoveryCode(code);
  if (canonical === undefined) throw new Error('not a recovery code');
  return createHash('sha256').update(canonical, 'utf8').digest();
}
