// Tenant labels: name/value pairs a partner puts on tenants in its subtree. Each label is owned
// by one partner; only that partner (or a partner above it) may change it. Restricted labels
// (set by vendor staff) cannot be changed or deleted through the API at all.
import { badInput } from '../errors.js';

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

export const MAX_LABEL_NAME = 100;
export const MAX_LABEL_VALUE = 1000;

export function checkLabel(input: { name: string; value?: string | null }): { name: string; normalized: string; value: string | null } {
  const name = input.name.normalize('NFC').trim();
  if (name.length === 0) throw badInput('label name must not be empty', { field: 'name' });
  if (name.length > MAX_LABEL_NAME) throw badInput(`label name must be at most ${MAX_LABEL_NAME} characters`, { field: 'name' });
  // eslint-disable-next-line no-control-regex -- control characters are what is being rejected
  if (/[\u0000-\u001f\u007f]/.test(name)) throw badInput('label name must not contain control characters', { field: 'name' });
  const value = input.value ?? null;
  if (value !== null && value.length > MAX_LABEL_VALUE)
    throw badInput(`label value must be at most ${MAX_LABEL_VALUE} characters`, { field: 'value' });
  return { name, normalized: name.normalize('NFKC').toLowerCase(), value };
}
