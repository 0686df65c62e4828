// A token's scope: the role names it may use, out of those its principal holds. A scoped token's
// principal is narrowed on every request, after it is loaded fresh, so a role removed later is
// gone from the token too, and a role added later never reaches it. Scope names are role names,
// compared exactly (RFC 6749 section 3.3: scope tokens are case-sensitive).
import type { Principal, RoleAssignment } from './principal.js';
import { ROLE_IDS, roleName, type RoleName } from './roles.js';

/** every scope name, in the order scopes are written */
export const SCOPE_NAMES = Object.keys(ROLE_IDS) as RoleName[];

export function isScopeName(value: string): value is RoleName {
  return Object.hasOwn(ROLE_IDS, value);
}

/** The names once each, in SCOPE_NAMES order, separated by one space. */
export function scopeText(names: Iterable<RoleName>): string {
  const set = new Set(names);
  return SCOPE_NAMES.filter((name) => set.has(name)).join(' ');
}

/** The scope claim as issued (scopeText of known names), or undefined when it is not one. */
export function parseScopeClaim(value: unknown): RoleName[] | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const names = value.split(' ');
  if (!names.every(isScopeName) || scopeText(names) !== value) return undefined;
  return names;
}

/** Names of the roles held through live assignments (in any tenant). */
export function heldRoleNames(assignments: readonly RoleAssignment[], now: Date): RoleName[] {
  const held = assignments.filter((a) => a.expiresAt === null || a.expiresAt > now).map((a) => roleName(a.roleId));
  return SCOPE_NAMES.filter((name) => held.includes(name));
}

/** The principal with only the assignments of roles in the scope. */
export function narrowToScope(principal: Principal, scope: readonly RoleName[]): Principal {
  const allowed = new Set<string>(scope.map((name) => ROLE_IDS[name]));
  return { ...principal, assignments: principal.assignments.filter((a) => allowed.has(a.roleId)) };
}
