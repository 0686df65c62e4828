// User passwords: argon2id (a memory-hard KDF, as NIST SP 800-63B and OWASP advise for secrets
// a person chooses). Never on the token path: clients use high-entropy secrets and SHA-256.
import { hash, verify } from '@node-rs/argon2';

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  return verify(passwordHash, password).catch(() => false);
}

/** The hashing and checking of passwords, as one object handed to the sign-in (services.ts): the
 *  work each attempt does is then observable (test/signin/password-work.test.ts counts it), as
 *  the promise that every refusal costs the same argon2 work needs. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
}

export const argon2Hasher: PasswordHasher = { hash: hashPassword, verify: verifyPassword };
