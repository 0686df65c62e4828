// Opaque tokens: 256 random bits as base64url (43 characters), which the database knows only by
// their SHA-256. One home for what sessions, set-up links, device codes, SSO tickets, recognised
// browsers and CSRF tokens are: made here, checked for their shape before any lookup (anything
// else names nothing, and never reaches the database), digested here.
import { createHash, randomBytes } from 'node:crypto';

/** the shape of every opaque token: 43 base64url characters (256 bits, no padding) */
export const OPAQUE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A new token: 256 random bits. */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether a value presented (a cookie, a query parameter, a form field) has a token's shape. */
export function isOpaqueToken(value: unknown): value is string {
  return typeof value === 'string' && OPAQUE_TOKEN_PATTERN.test(value);
}

/** What is stored of a token: its SHA-256. */
export function digestOpaqueToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
