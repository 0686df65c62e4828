// Which roles a caller may give (to a new client, to a user): never more than it could hold. And
// the role catalog the `roles` query answers, judged by the same rules.
import { badInput, forbidden } from '../errors.js';
import { can, rolesIn } from './policy.js';
import type { Caller } from './principal.js';
import {
  isRoleId,
  PERMISSION_LABELS,
  PERMISSION_ROLES,
  type Permission,
  ROLE_DESCRIPTIONS,
  ROLE_IDS,
  type RoleId,
  type RoleName,
  roleLabel,
  ROOT_TENANT_ID,
  TENANT_ROLES,
  VENDOR_ROLES,
} from './roles.js';

/** Whether the caller could give this role in the acting tenant: an Administrator any tenant role
 *  (and, in tenant 1, the vendor roles too); anyone else only a role it holds there. */
export function mayGrant(caller: Caller, roleId: string, now: Date): boolean {
  const held = rolesIn(caller.principal, caller.tenant, now);
  if (held.has(ROLE_IDS.Administrator)) return TENANT_ROLES.includes(roleId as never) || caller.tenant.id === ROOT_TENANT_ID;
  return held.has(roleId);
}

const LIST_HINT = 'the roles query lists every role with its id';

/**
 * The role ids a caller asks to give in the acting tenant, checked: known ids, vendor roles only
 * in tenant 1, and each one the caller may give. Omitted means Analyst (the specification's
 * default for new credentials); an empty list is refused. Messages name a role by its name.
 */
export function checkGrantableRoles(caller: Caller, requested: string[] | null | undefined, now: Date, who: 'client' | 'user'): string[] {
  if (requested === null || requested === undefined) return [ROLE_IDS.Analyst];
  if (requested.length === 0) throw badInput('roles must name at least one role id (omit it for Analyst)', { field: 'roles' });
  const roleIds = [...new Set(requested.map((r) => r.toLowerCase()))];
  for (const id of roleIds) checkRoleHere(id, caller.tenant.id, 'roles');
  for (const id of roleIds) {
    if (!mayGrant(caller, id, now)) {
      throw forbidden(
        `${who === 'client' ? 'A client cannot be given a role its creator does not hold' : 'You cannot give a user a role you could not give yourself'}: ` +
          `${roleLabel(id)}. The roles query shows which roles you may give here (assignable).`,
      );
    }
  }
  return roleIds;
}

/**
 * A role id that exists and can be held in the tenant, else BAD_USER_INPUT naming the role;
 * `vendorHint` says how to give a vendor role in tenant 1 instead.
 */
export function checkRoleHere(id: string, tenantId: string, field: string, vendorHint = 'send X-Tenant-Context: 1 to give it there'): void {
  if (!isRoleId(id)) throw badInput(`unknown role id "${id}": ${LIST_HINT}`, { field });
  if (VENDOR_ROLES.includes(id) && tenantId !== ROOT_TENANT_ID) {
    throw badInput(`${roleLabel(id)} can be held only in the vendor tenant 1; ${vendorHint}`, { field });
  }
}

/** One role as the `roles` query shows it. */
export interface RoleInfo {
  id: RoleId;
  name: RoleName;
  description: string;
  /** what it allows, where it reaches: one label per permission */
  permissions: string[];
  /** held only in the vendor tenant 1 */
  vendorOnly: boolean;
  /** the caller may give it in the acting tenant, to a new client or a user */
  assignable: boolean;
}

/**
 * Every role, in the order of the role table, as the caller may use it in the acting tenant. A
 * role is assignable when the caller may give roles there at all (create clients, or manage
 * users) and this one passes the rules of checkGrantableRoles.
 */
export function roleCatalog(caller: Caller, now: Date): RoleInfo[] {
  const givesRoles = can(caller.principal, caller.tenant, 'clients.create', now) || can(caller.principal, caller.tenant, 'users.manage', now);
  return (Object.entries(ROLE_IDS) as [RoleName, RoleId][]).map(([name, id]) => {
    const vendorOnly = VENDOR_ROLES.includes(id);
    return {
      id,
      name,
      description: ROLE_DESCRIPTIONS[name],
      permissions: (Object.keys(PERMISSION_ROLES) as Permission[]).filter((p) => PERMISSION_ROLES[p].includes(id)).map((p) => PERMISSION_LABELS[p]),
      vendorOnly,
      assignable: givesRoles && (!vendorOnly || caller.tenant.id === ROOT_TENANT_ID) && mayGrant(caller, id, now),
    };
  });
}
