// The console's addresses, in one place: each family of pages (one file each in this folder)
// builds its links from here, and http/routes.ts registers every one.
import type { Permission } from '../../../access/roles.js';

export const CONSOLE_PATH = '/console';

// credentials (credentials.ts)
export const CREDENTIALS_PATH = '/console/credentials';
export const NEW_PATH = '/console/credentials/new';
export const ROTATE_PATH = '/console/credentials/rotate';
export const DELETE_PATH = '/console/credentials/delete';

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
export const tenantHomePath = (tenantId: string) => listPath(tenantId);

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
  { id: 'credentials', label: 'API credentials', path: CREDENTIALS_PATH, permission: 'clients.read' },
  { id: 'sso', label: 'Single sign-on', path: '/console/sso', permission: 'sso.manage' },
];

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
