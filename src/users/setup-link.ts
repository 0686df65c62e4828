// The one-time set-up link of a new (or reset) user: 256 random bits, stored only as a SHA-256
// digest, valid until it is used or expires. It carries the person to /login/setup, where they
// set a password and enrol TOTP.
import { createHash, randomBytes } from 'node:crypto';

export const SETUP_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function generateSetupToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashSetupToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The link a person opens. The token travels in the query string, which the request log never
 *  records (logger.ts logs paths only). */
export function setupUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/login/setup?token=${token}`;
}
