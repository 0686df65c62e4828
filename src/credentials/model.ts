// API clients (client id + secret) and the rules that do not need storage.
import { badInput } from '../errors.js';
import { checkName, type Name } from '../text.js';
import type { RoleAssignment } from '../access/principal.js';
import type { RoleName } from '../access/roles.js';
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

/** A client whose secret was presented at the token endpoint and matched one of its live secrets. */
export interface AuthenticatedClient {
  clientUuid: string;
  clientId: string;
  tenantId: string;
  secretId: string;
  /** role names held through live assignments: what a token request may ask for as scope */
  roles: RoleName[];
}

/** A secret that can still obtain tokens at `now`. */
export function secretIsLive(s: Pick<ClientSecretInfo, 'revokedAt' | 'expiresAt'>, now: Date): boolean {
  return s.revokedAt === null && (s.expiresAt === null || s.expiresAt > now);
}

/**
 * The client as it stands at `now`: a secret that expired since the client was read (a cached
 * listing, read-cache.ts) is left out. The same object when nothing expired.
 */
export function asOf(client: Client, now: Date): Client {
  if (client.secrets.every((s) => secretIsLive(s, now))) return client;
  return { ...client, secrets: client.secrets.filter((s) => secretIsLive(s, now)) };
}

export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

/** A client name: the common name rules (text.ts); unique among the tenant's live clients by its key. */
export function normalizeClientName(raw: string): Name {
  return checkName(raw, 'name');
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

/** Longest client_id accepted anywhere (generated ones are 32; a bootstrap one may be up to 128). */
export const MAX_CLIENT_ID_LENGTH = 128;

/** Whether a client_id could exist: anything else is refused without a lookup (a NUL byte cannot
 *  even be compared in PostgreSQL text). */
export function possibleClientId(clientId: string): boolean {
  return clientId.length > 0 && clientId.length <= MAX_CLIENT_ID_LENGTH && !clientId.includes('\u0000');
}

/** `id` arguments take the UUID or the client_id. */
export function parseClientRef(ref: string): { id: string } | { clientId: string } {
  if (UUID_PATTERN.test(ref)) return { id: ref.toLowerCase() };
  if (!possibleClientId(ref)) throw badInput('id must be a client UUID or client_id', { field: 'id' });
  return { clientId: ref };
}
