// Which roles a caller may give (to a new client, to a user): never more than it could hold.
import { badInput, forbidden } from '../errors.js';
import { rolesIn } from './policy.js';
import type { Caller } from './principal.js';
import { isRoleId, ROLE_IDS, ROOT_TENANT_ID, TENANT_ROLES, VENDOR_ROLES } from './roles.js';

/** Whether the caller could give this role in the acting tenant: an Administrator any tenant role
 *  (and, in tenant 1, the vendor roles too); anyone else only a role it holds there. */
export function mayGrant(caller: Caller, roleId: string, now: Date): boolean {
  const held = rolesIn(caller.principal, caller.tenant, now);
  if (held.has(ROLE_IDS.Administrator)) return TENANT_ROLES.includes(roleId as never) || caller.tenant.id === ROOT_TENANT_ID;
  return held.has(roleId);
}

/**
 * The role ids a caller asks to give in the acting tenant, checked: known ids, vendor roles only
 * in tenant 1, and each one the caller may give. Omitted means Analyst (the specification's
 * default for new credentials); an empty list is refused.
 */
export function checkGrantableRoles(caller: Caller, requested: string[] | null | undefined, now: Date, who: 'client' | 'user'): string[] {
  if (requested === null || requested === undefined) return [ROLE_IDS.Analyst];
  if (requested.length === 0) throw badInput('roles must name at least one role id (omit it for Analyst)', { field: 'roles' });
  const roleIds = [...new Set(requested.map((r) => r.toLowerCase()))];
  for (const id of roleIds) {
    if (!isRoleId(id)) throw badInput(`unknown role id "${id}"`, { field: 'roles' });
    if (VENDOR_ROLES.includes(id) && caller.tenant.id !== ROOT_TENANT_ID) {
      throw badInput(`role "${id}" exists only in the vendor tenant`, { field: 'roles' });
    }
  }
  for (const id of roleIds) {
    if (!mayGrant(caller, id, now)) {
      throw forbidden(
        who === 'client' ? 'A client cannot be given a role its creator does not hold' : 'You cannot give a user a role you could not give yourself',
      );
    }
  }
  return roleIds;
}
