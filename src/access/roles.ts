// The roles of CONTRACT.md and what each may do. A role held in a tenant also applies to that
// tenant's descendants. Operations and Support exist only in the vendor root tenant "1".

export const ROLE_IDS = {
  Administrator: 'ba0fdcbd-e87d-4bdd-ae7d-ca6118b25068',
  Analyst: 'a4903f9f-465b-478f-a24e-82fa2e129d2e',
  Responder: 'a72dace7-4536-4dbc-947d-015a8eb65f4d',
  Auditor: 'ace1cae4-59fd-4fd1-9500-40077dc529a7',
  Operations: 'b7e80aaa-f4cf-4d35-b5b3-25001bacd1f1',
  Support: 'cceaad48-82d5-4568-ae44-9070e0a63fe1',
} as const;

export type RoleName = keyof typeof ROLE_IDS;
export type RoleId = (typeof ROLE_IDS)[RoleName];

export const ROLE_NAMES: Record<string, RoleName> = Object.fromEntries(Object.entries(ROLE_IDS).map(([name, id]) => [id, name as RoleName]));

export const TENANT_ROLES: readonly RoleId[] = [ROLE_IDS.Administrator, ROLE_IDS.Analyst, ROLE_IDS.Responder, ROLE_IDS.Auditor];
/** vendor staff roles, assignable only in the root tenant */
export const VENDOR_ROLES: readonly RoleId[] = [ROLE_IDS.Operations, ROLE_IDS.Support];
export const ROOT_TENANT_ID = '1';

export function isRoleId(value: string): value is RoleId {
  return value in ROLE_NAMES;
}

export function roleName(id: string): RoleName | undefined {
  return ROLE_NAMES[id];
}

/** A role as messages name it: its name and, to copy, its id, e.g. `Operations (id b7e8…)`. */
export function roleLabel(id: string): string {
  const name = roleName(id);
  return name ? `${name} (id ${id})` : `role id ${id}`;
}

/** What each role is for, as the `roles` query describes it (docs/authorization.md has the table). */
export const ROLE_DESCRIPTIONS: Record<RoleName, string> = {
  Administrator:
    "Runs the tenant and every tenant below it: API clients, users and their roles, SSO connections, the tenants' settings, labels and subscriptions.",
  Analyst: 'Reads the tenant and its subscriptions, and creates, rotates and deletes API clients (giving them only roles it holds).',
  Responder: 'Reads the tenant, its API clients and its subscriptions.',
  Auditor: 'Reads the tenant, its API clients, its users and its subscriptions.',
  Operations:
    'Vendor staff, held in tenant 1 and so reaching every tenant: reads tenants, API clients and users; creates and manages tenants, labels and subscriptions; deletes API clients. Never toggles support access, manages users or SSO connections.',
  Support: 'Vendor staff, held in tenant 1: reads exactly the tenants whose support access is on, and their API clients; changes nothing.',
};

/** Everything a request may ask permission for. docs/authorization.md is the table of these. */
export type Permission =
  | 'clients.read'
  | 'clients.create'
  | 'clients.rotate'
  | 'clients.forceRotate'
  | 'clients.delete'
  | 'tenants.read'
  | 'tenants.create'
  | 'tenants.createPartner'
  | 'tenants.edit'
  | 'tenants.manage'
  | 'tenants.support'
  | 'labels.write'
  | 'labels.writeRestricted'
  | 'subscriptions.read'
  | 'subscriptions.manage'
  | 'users.read'
  | 'users.manage'
  | 'sso.manage'
  | 'tokens.introspect'
  | 'audit.read';

const { Administrator, Analyst, Responder, Auditor, Operations, Support } = ROLE_IDS;

/** Which roles grant a permission in a tenant the role reaches. */
export const PERMISSION_ROLES: Record<Permission, readonly RoleId[]> = {
  'clients.read': [Administrator, Analyst, Responder, Auditor, Operations, Support],
  'clients.create': [Administrator, Analyst],
  'clients.rotate': [Administrator, Analyst],
  'clients.forceRotate': [Administrator, Operations],
  'clients.delete': [Administrator, Analyst, Operations],
  'tenants.read': [Administrator, Analyst, Responder, Auditor, Operations, Support],
  /** checked in the parent partner */
  'tenants.create': [Administrator, Operations],
  /** creating a partner: Administrators only (CONTRACT.md) */
  'tenants.createPartner': [Administrator],
  /** name, domain, description, response-action settings: in the tenant itself or above */
  'tenants.edit': [Administrator, Operations],
  /** environments, disable, expiry: checked in the parent, so a tenant cannot lift its own limits */
  'tenants.manage': [Administrator, Operations],
  /** support access is the tenant's consent: its own or its partners' Administrators, never vendor staff */
  'tenants.support': [Administrator],
  /** checked in the partner that owns the label */
  'labels.write': [Administrator, Operations],
  /** restricted labels: the vendor's own Administrators and Operations (checked in tenant 1) */
  'labels.writeRestricted': [Administrator, Operations],
  'subscriptions.read': [Administrator, Analyst, Responder, Auditor, Operations],
  /** services, partner subscriptions and their assignment: checked in the owning partner */
  'subscriptions.manage': [Administrator, Operations],
  /** users and their role assignments: personal data, so not every role (docs/users.md) */
  'users.read': [Administrator, Auditor, Operations],
  /** create, assign roles, disable, reset, delete: the tenant's (or a partner's) Administrators */
  'users.manage': [Administrator],
  /** SSO connections decide who signs in to the tenant: its (or a partner's) Administrators only */
  'sso.manage': [Administrator],
  /** RFC 7662: a resource server learns whether a token of this tenant is still good and whose
   *  it is. The tenant's (or a partner's) Administrators, and Operations for the vendor's own
   *  services, which serve every tenant (docs/tokens.md) */
  'tokens.introspect': [Administrator, Operations],
  /** the audit trail of the tenant and its subtree: who signed in from where, what changed */
  'audit.read': [Administrator],
};

export const PERMISSION_LABELS: Record<Permission, string> = {
  'clients.read': 'list API clients',
  'clients.create': 'create API clients',
  'clients.rotate': 'rotate client secrets',
  'clients.forceRotate': 'force-rotate client secrets',
  'clients.delete': 'delete API clients',
  'tenants.read': 'read tenants',
  'tenants.create': 'create tenants under this partner',
  'tenants.createPartner': 'create partner tenants',
  'tenants.edit': 'edit this tenant',
  'tenants.manage': 'change environments, disabling or expiry of this tenant (its partner decides)',
  'tenants.support': 'grant or withdraw vendor support access',
  'labels.write': 'manage labels owned by this partner',
  'labels.writeRestricted': 'create restricted labels',
  'subscriptions.read': 'read partner subscriptions',
  'subscriptions.manage': 'manage services and partner subscriptions of this partner',
  'users.read': 'list users',
  'users.manage': 'manage users',
  'sso.manage': 'manage SSO connections',
  'tokens.introspect': "introspect this tenant's access tokens",
  'audit.read': 'read the audit trail',
};
