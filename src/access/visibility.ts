// Which tenants a principal may see, as one value the tenant store turns into a predicate:
// its own tenant, every tenant at or below a tenant where it holds a role, and (Support staff)
// the tenants with support access on. A role in the root tenant (vendor staff) sees all.
import type { TenantStore } from '../tenants/store.js';
import type { Visibility } from '../tenants/model.js';
import type { Principal } from './principal.js';
import { supportOnly } from './policy.js';
import { ROLE_IDS, ROOT_TENANT_ID } from './roles.js';

export async function visibilityFor(principal: Principal, tenants: Pick<TenantStore, 'findScopes'>, now: Date): Promise<Visibility> {
  const live = principal.assignments.filter((a) => a.expiresAt === null || a.expiresAt > now);
  const subtreeRoles = live.filter((a) => a.roleId !== ROLE_IDS.Support);
  if (subtreeRoles.some((a) => a.tenantId === ROOT_TENANT_ID)) return { kind: 'all' };
  const scopes = await tenants.findScopes([...new Set(subtreeRoles.map((a) => a.tenantId))]);
  return {
    kind: 'some',
    subtreePaths: scopes.map((s) => s.path),
    homeId: supportOnly(principal, now) ? null : principal.tenantId,
    supportEnabled: live.some((a) => a.roleId === ROLE_IDS.Support),
  };
}
