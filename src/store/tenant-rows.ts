// Tenant rows as the persister reads them, and their domain form (shared by the tenant store
// and the search planner).
import type { TenantScope } from '../access/principal.js';
import type { Tenant } from '../tenants/model.js';

export const columns = [
  'tenants.id',
  'tenants.parent_id',
  'tenants.path',
  'tenants.name',
  'tenants.name_normalized',
  'tenants.is_partner',
  'tenants.domain',
  'tenants.domain_normalized',
  'tenants.description',
  'tenants.allow_response_actions',
  'tenants.actions_approver',
  'tenants.support_enabled',
  'tenants.support_expires_at',
  'tenants.support_reason',
  'tenants.expires_at',
  'tenants.enabled',
  'tenants.created_at',
  'tenants.updated_at',
] as const;

export function toTenant(r: {
  id: string;
  parent_id: string | null;
  path: string;
  name: string;
  name_normalized: string;
  is_partner: boolean;
  domain: string | null;
  domain_normalized: string | null;
  description: string | null;
  allow_response_actions: boolean;
  actions_approver: string | null;
  support_enabled: boolean;
  support_expires_at: Date | null;
  support_reason: string | null;
  expires_at: Date | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}): Tenant {
  return {
    id: String(r.id),
    parentId: r.parent_id === null ? null : String(r.parent_id),
    path: r.path,
    name: r.name,
    nameNormalized: r.name_normalized,
    isPartner: r.is_partner,
    domain: r.domain,
    domainNormalized: r.domain_normalized,
    description: r.description,
    allowResponseActions: r.allow_response_actions,
    actionsApprover: r.actions_approver,
    supportEnabled: r.support_enabled,
    supportExpiresAt: r.support_expires_at,
    supportReason: r.support_reason,
    expiresAt: r.expires_at,
    enabled: r.enabled,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function toScope(r: { id: string; path: string; support_enabled: boolean; support_expires_at: Date | null }): TenantScope {
  return { id: String(r.id), path: r.path, supportEnabled: r.support_enabled, supportExpiresAt: r.support_expires_at };
}
