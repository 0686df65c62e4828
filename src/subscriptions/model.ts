// Services (what the vendor or a partner offers) and partner subscriptions (a partner's packaging
// of a service, assigned to its child tenants). A retired subscription can no longer be
// assigned; tenants that have it keep it.
import { checkFreeText, checkName, TEXT_LIMITS } from '../text.js';

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

/** A service or subscription name: the common name rules (text.ts); `normalized` is its comparison key. */
export function checkOfferingName(raw: string, field: string): { name: string; normalized: string } {
  const { name, key } = checkName(raw, field);
  return { name, normalized: key };
}

export function checkDescription(raw: string | null | undefined): string | null {
  return checkFreeText(raw, 'description', TEXT_LIMITS.description);
}
