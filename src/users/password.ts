// User passwords: argon2id (a memory-hard KDF, as NIST SP 800-63B and OWASP advise for secrets
// a person chooses). Never on the token path: clients use high-entropy secrets and SHA-256.
import { hash, verify } from '@node-rs/argon2';

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  return verify(passwordHash, password).catch(() => false);
}
