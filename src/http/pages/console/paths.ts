// The console's addresses, in one place: each family of pages (one file each in this folder)
// builds its links from here, and http/routes.ts registers every one.
import type { Permission } from '../../../access/roles.js';

export const CONSOLE_PATH = '/console';

// credentials (credentials.ts)
export const CREDENTIALS_PATH = '/console/credentials';
export const NEW_PATH = '/console/credentials/new';
export const ROTATE_PATH = '/console/credentials/rotate';
export const DELETE_PATH = '/console/credentials/delete';
export const FORCE_ROTATE_PATH = '/console/credentials/force-rotate';

// the audit trail (audit.ts)
export const AUDIT_PATH = '/console/audit';

/** A query string of the given values (those undefined, empty or false left out), with its `?`. */
export function query(values: Record<string, string | number | boolean | undefined | null | readonly string[]>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    if (Array.isArray(v)) for (const item of v) q.append(k, item);
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const listPath = (tenantId: string, page?: number) =>
  `${CREDENTIALS_PATH}${query({ tenant: tenantId, page: page && page > 1 ? page : undefined })}`;
export const clientPath = (path: string, tenantId: string, clientId: string) => `${path}${query({ tenant: tenantId, client: clientId })}`;

/** Where a tenant's name in the header leads: its first page. */
export const tenantHomePath = (tenantId: string) => `/console/tenant${query({ tenant: tenantId })}`;

/** One section of a tenant's pages: a tab under the header, shown to whom its permission allows
 *  in the tenant (the pages behind it check again, through the services). */
export interface SectionRule {
  id: string;
  label: string;
  path: string;
  permission: Permission;
}

/** The sections, in the order of the tabs. */
export const SECTIONS: readonly SectionRule[] = [
  { id: 'tenant', label: 'Overview', path: '/console/tenant', permission: 'tenants.read' },
  { id: 'users', label: 'Users', path: '/console/users', permission: 'users.read' },
  { id: 'sso', label: 'Single sign-on', path: '/console/sso', permission: 'sso.manage' },
  { id: 'credentials', label: 'API credentials', path: CREDENTIALS_PATH, permission: 'clients.read' },
  { id: 'audit', label: 'Audit trail', path: AUDIT_PATH, permission: 'audit.read' },
];

// tenants (tenants.ts, tenant-forms.ts)
export const TENANT_PATH = '/console/tenant';
export const TENANTS_PATH = '/console/tenants';
export const TENANT_NEW_PATH = '/console/tenant/new';
export const TENANT_EDIT_PATH = '/console/tenant/edit';
export const TENANT_SUPPORT_PATH = '/console/tenant/support';
export const TENANT_LABELS_PATH = '/console/tenant/labels';
export const TENANT_SUBSCRIPTIONS_PATH = '/console/tenant/subscriptions';
export const TENANT_OFFERINGS_PATH = '/console/tenant/offerings';

/** A page of one tenant (`tenant=ID`), with more values in its query. */
export const tenantPage = (path: string, tenantId: string, more: Parameters<typeof query>[0] = {}) =>
  `${path}${query({ tenant: tenantId, ...more })}`;

// users (users.ts) and the person's own account (account.ts)
export const USERS_PATH = '/console/users';
export const USER_INVITE_PATH = '/console/users/invite';
export const USER_PATH = '/console/users/user';
export const USER_ROLE_ASSIGN_PATH = '/console/users/roles';
export const USER_ROLE_REMOVE_PATH = '/console/users/roles/remove';
export const USER_DISABLE_PATH = '/console/users/disable';
export const USER_ENABLE_PATH = '/console/users/enable';
export const USER_RESET_PATH = '/console/users/reset';
export const USER_UNLOCK_PATH = '/console/users/unlock';
export const USER_DELETE_PATH = '/console/users/delete';
export const ACCOUNT_PATH = '/console/account';
export const ACCOUNT_PASSWORD_PATH = '/console/account/password';
export const ACCOUNT_SESSIONS_PATH = '/console/account/sessions';
export const ACCOUNT_AUTHENTICATOR_PATH = '/console/account/authenticator';
export const ACCOUNT_AUTHENTICATOR_CONFIRM_PATH = '/console/account/authenticator/confirm';
export const ACCOUNT_RECOVERY_CODES_PATH = '/console/account/recovery-codes';
export const ACCOUNT_PASSKEYS_PATH = '/console/account/passkeys';
export const ACCOUNT_PASSKEY_REMOVE_PATH = '/console/account/passkeys/remove';
export const ACCOUNT_EMAIL_PATH = '/console/account/email';
/** where the link mailed to a new address leads (users/setup-link.ts emailConfirmUrl) */
export const ACCOUNT_EMAIL_CONFIRM_PATH = '/console/account/email/confirm';

/** The filters of the users list, as the query string carries them. */
export interface UserFilters {
  email?: string | undefined;
  role?: string | undefined;
  status?: string | undefined;
  signin?: string | undefined;
  last?: string | undefined;
}

export const usersPath = (tenantId: string, filters: UserFilters = {}, page?: number) =>
  `${USERS_PATH}${query({ tenant: tenantId, ...filters, page: page && page > 1 ? page : undefined })}`;
export const userPath = (path: string, tenantId: string, userId: string) => `${path}${query({ tenant: tenantId, user: userId })}`;

// single sign-on (sso.ts: the connections and the set-up wizard)
export const SSO_PATH = '/console/sso';
export const SSO_NEW_PATH = '/console/sso/new';
export const SSO_CONNECTION_PATH = '/console/sso/connection';
export const SSO_CHECK_PATH = '/console/sso/check';
export const SSO_EDIT_PATH = '/console/sso/edit';
export const SSO_REFRESH_PATH = '/console/sso/refresh';
export const SSO_DELETE_PATH = '/console/sso/delete';
export const SSO_TEST_PATH = '/console/sso/test';

export const ssoListPath = (tenantId: string) => `${SSO_PATH}${query({ tenant: tenantId })}`;
export const connectionPath = (path: string, tenantId: string, connectionId: string, anchor = '') =>
  `${path}${query({ tenant: tenantId, connection: connectionId })}${anchor}`;
