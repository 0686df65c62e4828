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
  const roleTenants = new Set(subtreeRoles.map((a) => a.tenantId));
  const scopes = await tenants.findScopes([...new Set([...roleTenants, principal.tenantId])]);
  const subtreePaths = scopes.filter((s) => roleTenants.has(s.id)).map((s) => s.path);
  const home = scopes.find((s) => s.id === principal.tenantId);
  // the home tenant counts on its own only when no role subtree already holds it
  const homeCovered = home !== undefined && subtreePaths.some((p) => home.path.startsWith(p));
  return {
    kind: 'some',
    subtreePaths,
    homeId: supportOnly(principal, now) || homeCovered ? null : principal.tenantId,
    consentingTenants: live.some((a) => a.roleId === ROLE_IDS.Support),
  };
}
