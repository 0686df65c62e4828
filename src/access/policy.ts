// Authorization against the tenant hierarchy: which roles a principal holds in a tenant, and
// whether they grant a permission. Every use case asks here first.
import { forbidden } from '../errors.js';
import { ancestorsOrSelf, type Principal, type TenantScope } from './principal.js';
import { PERMISSION_LABELS, PERMISSION_ROLES, ROLE_IDS, type Permission } from './roles.js';

export function supportActive(scope: TenantScope, now: Date): boolean {
  return scope.supportEnabled && (scope.supportExpiresAt === null || scope.supportExpiresAt > now);
}

/** Role ids in force for the principal in the tenant: held there or in an ancestor, unexpired. */
export function rolesIn(principal: Principal, scope: TenantScope, now: Date): Set<string> {
  const lineage = new Set(ancestorsOrSelf(scope));
  const roles = new Set<string>();
  for (const a of principal.assignments) {
    if (!lineage.has(a.tenantId)) continue;
    if (a.expiresAt !== null && a.expiresAt <= now) continue;
    // Support staff reach a tenant only while it allows support access.
    if (a.roleId === ROLE_IDS.Support && !supportActive(scope, now)) continue;
    roles.add(a.roleId);
  }
  return roles;
}

/**
 * Support staff hold nothing but Support: they see exactly the tenants that allow support
 * access (CONTRACT.md), not even their own home tenant.
 */
export function supportOnly(principal: Principal, now: Date): boolean {
  const live = principal.assignments.filter((a) => a.expiresAt === null || a.expiresAt > now);
  return live.length > 0 && live.every((a) => a.roleId === ROLE_IDS.Support);
}

/** Whether the principal sees the tenant: some role reaches it, or it is home (Support: see above). */
export function reaches(principal: Principal, scope: TenantScope, now: Date): boolean {
  if (rolesIn(principal, scope, now).size > 0) return true;
  return principal.tenantId === scope.id && !supportOnly(principal, now);
}

export function can(principal: Principal, scope: TenantScope, permission: Permission, now: Date): boolean {
  const held = rolesIn(principal, scope, now);
  return PERMISSION_ROLES[permission].some((role) => held.has(role));
}

export function assertCan(principal: Principal, scope: TenantScope, permission: Permission, now: Date): void {
  if (!can(principal, scope, permission, now)) {
    throw forbidden(`Your roles in this tenant do not allow: ${PERMISSION_LABELS[permission]}`, scope.id);
  }
}
