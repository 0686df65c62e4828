// The two kinds of identifier on the wire, checked in one place: tenant ids (decimal integers
// carried as text, within PostgreSQL bigint) and UUIDs.
import { badInput } from './errors.js';
import { quoted } from './text.js';

export const TENANT_ID_PATTERN = /^[1-9][0-9]{0,17}$/;
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID exactly as this service writes one (lower case): ids inside our own tokens. */
export function isCanonicalUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value) && value === value.toLowerCase();
}

export function checkTenantId(id: string, field: string): string {
  if (!TENANT_ID_PATTERN.test(id)) throw badInput(`${quoted(id)} is not a tenant id`, { field });
  return id;
}

export function checkUuid(raw: string, field: string): string {
  if (!UUID_PATTERN.test(raw)) throw badInput(`${field} must be a UUID`, { field });
  return raw.toLowerCase();
}
