// API clients (client id + secret) and the rules that do not need storage.
import { badInput } from '../errors.js';
import type { RoleAssignment } from '../access/principal.js';
import { randomHex } from '../crypto/random.js';
import { UUID_PATTERN } from '../ids.js';

export interface ClientSecretInfo {
  id: string;
  /** prefix and last four characters; the secret itself is never shown again */
  hint: string;
  createdAt: Date;
  /** end of the rotation grace period; null for the current secret */
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface Client {
  id: string;
  tenantId: string;
  clientId: string;
  name: string;
  environment: string;
  createdAt: Date;
  updatedAt: Date;
  createdBy: string | null;
  updatedBy: string | null;
  revokedAt: Date | null;
  roleAssignments: RoleAssignment[];
  /** secrets that still work (current, and one in its grace period) */
  secrets: ClientSecretInfo[];
  /** last time any of its secrets obtained a token (buffered; see last-used.ts) */
  lastUsedAt: Date | null;
}

/** A secret that can still obtain tokens at `now`. */
export function secretIsLive(s: Pick<ClientSecretInfo, 'revokedAt' | 'expiresAt'>, now: Date): boolean {
  return s.revokedAt === null && (s.expiresAt === null || s.expiresAt > now);
}

export const MAX_NAME_LENGTH = 200;
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

export function normalizeClientName(raw: string): string {
  const name = raw.normalize('NFC').trim();
  if (name.length === 0) throw badInput('name must not be empty', { field: 'name' });
  if (name.length > MAX_NAME_LENGTH) throw badInput(`name must be at most ${MAX_NAME_LENGTH} characters`, { field: 'name' });
  // eslint-disable-next-line no-control-regex -- control characters are what is being rejected
  if (/[\u0000-\u001f\u007f]/.test(name)) throw badInput('name must not contain control characters', { field: 'name' });
  return name;
}

export function validateGracePeriod(seconds: number | null | undefined): number {
  if (seconds === null || seconds === undefined) return 0;
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_GRACE_SECONDS) {
    throw badInput(`gracePeriodSeconds must be from 0 to ${MAX_GRACE_SECONDS} (7 days)`, { field: 'gracePeriodSeconds' });
  }
  return seconds;
}

/** The public login identifier: 128 random bits as 32 hex digits. */
export function generateClientId(): string {
  return randomHex(16);
}

/** `id` arguments take the UUID or the client_id. */
export function parseClientRef(ref: string): { id: string } | { clientId: string } {
  if (UUID_PATTERN.test(ref)) return { id: ref.toLowerCase() };
  // a NUL byte cannot be stored or compared in PostgreSQL text: reject it here, not as INTERNAL
  if (ref.length === 0 || ref.length > 128 || ref.includes('\u0000')) throw badInput('id must be a client UUID or client_id', { field: 'id' });
  return { clientId: ref };
}
