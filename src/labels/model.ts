// Tenant labels: name/value pairs a partner puts on tenants in its subtree. Each label is owned
// by one partner; only that partner (or a partner above it) may change it. Restricted labels
// (set by vendor staff) cannot be changed or deleted through the API at all.
import { checkLine, checkName, TEXT_LIMITS } from '../text.js';

export interface TenantLabel {
  id: string;
  tenantId: string;
  name: string;
  value: string | null;
  ownerPartnerTenantId: string;
  restricted: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A label's name (compared case-insensitively, whitespace runs collapsed) and optional value. */
export function checkLabel(input: { name: string; value?: string | null }): { name: string; normalized: string; value: string | null } {
  const { name, key } = checkName(input.name, 'name', TEXT_LIMITS.labelName);
  return { name, normalized: key, value: checkLine(input.value, 'value', TEXT_LIMITS.labelValue) };
}
