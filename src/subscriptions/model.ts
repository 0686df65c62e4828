// Services (what the vendor or a partner offers) and partner subscriptions (a partner's packaging
// of a service, assigned to its child tenants). A retired subscription can no longer be
// assigned; tenants that have it keep it.
import { badInput } from '../errors.js';

export interface Service {
  id: string;
  ownerTenantId: string;
  name: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PartnerSubscription {
  id: string;
  partnerTenantId: string;
  serviceId: string;
  name: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
  retiredAt: Date | null;
}

export function checkOfferingName(raw: string, field: string): { name: string; normalized: string } {
  const name = raw.normalize('NFC').trim();
  if (name.length === 0 || name.length > 200) throw badInput(`${field} must be 1 to 200 characters`, { field });
  // eslint-disable-next-line no-control-regex -- control characters are what is being rejected
  if (/[\u0000-\u001f\u007f]/.test(name)) throw badInput(`${field} must not contain control characters`, { field });
  return { name, normalized: name.normalize('NFKC').toLowerCase() };
}

export function checkDescription(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined) return null;
  if (raw.length > 2000) throw badInput('description must be at most 2000 characters', { field: 'description' });
  return raw;
}
