// Tenants and the rules that need no storage: the environment catalog, name and domain
// normalisation, the activity state table, and cursors.
import { domainToASCII } from 'node:url';
import type { Principal, TenantScope } from '../access/principal.js';
import { badInput } from '../errors.js';
import { TENANT_ID_PATTERN } from '../ids.js';
import { checkLine, checkName, checkOpaque, quoted, TEXT_LIMITS } from '../text.js';
import { parseTimestamp } from '../time.js';

export interface Tenant {
  id: string;
  parentId: string | null;
  /** ancestry, root first: '1.5.23.' */
  path: string;
  name: string;
  nameNormalized: string;
  isPartner: boolean;
  domain: string | null;
  domainNormalized: string | null;
  description: string | null;
  allowResponseActions: boolean;
  actionsApprover: string | null;
  supportEnabled: boolean;
  supportExpiresAt: Date | null;
  supportReason: string | null;
  expiresAt: Date | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What the access rules read of a tenant (access/policy.ts). */
export function scopeOf(t: Tenant): TenantScope {
  return { id: t.id, path: t.path, supportEnabled: t.supportEnabled, supportExpiresAt: t.supportExpiresAt };
}

/** What other use cases ask of the tenants (TenantService does it): a tenant the principal's
 *  roles reach, else NOT_FOUND (whether or not it exists), a malformed id naming `field`. */
export interface TenantVisibility {
  visibleTenant(principal: Principal, id: string, field?: string): Promise<Tenant>;
}

export interface Environment {
  id: string;
  tenantId: string;
  name: string;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

// ---- environments ----------------------------------------------------------------------------

/** The environments a tenant can be enabled in, and which count as production and pilot. */
export const ENVIRONMENTS = {
  echo: 'production',
  delta: 'production',
  pilot: 'pilot',
} as const;
export type EnvironmentName = keyof typeof ENVIRONMENTS;
/** A new tenant with no environments listed is enabled here. */
export const DEFAULT_ENVIRONMENT: EnvironmentName = 'echo';

export function checkEnvironmentName(name: string, field = 'environments'): EnvironmentName {
  const key = name.trim().toLowerCase();
  if (!(key in ENVIRONMENTS)) {
    throw badInput(`unknown environment ${quoted(name)}; known environments: ${Object.keys(ENVIRONMENTS).join(', ')}`, { field });
  }
  return key as EnvironmentName;
}

export function enabledIn(envs: Pick<Environment, 'name' | 'enabled'>[], kind: 'production' | 'pilot'): boolean {
  return envs.some((e) => e.enabled && ENVIRONMENTS[e.name as EnvironmentName] === kind);
}

/**
 * The state table of updateTenant: environment entries apply in order (several in one request),
 * `disable` turns every environment off. The tenant is active iff some environment ends enabled.
 */
export function applyEnvironmentChanges(
  current: ReadonlyMap<string, boolean>,
  changes: { name: EnvironmentName; enabled: boolean }[],
  disable: boolean,
): Map<string, boolean> {
  const next = new Map(current);
  for (const c of changes) next.set(c.name, c.enabled);
  if (disable) for (const name of next.keys()) next.set(name, false);
  return next;
}

export const DAY_MS = 86_400_000;

export const isActive = (envs: ReadonlyMap<string, boolean>) => [...envs.values()].some(Boolean);

// ---- names and domains -------------------------------------------------------------------------

/** A tenant name: the common name rules (text.ts); `normalized` is what name search compares. */
export function normalizeTenantName(raw: string, field = 'name'): { name: string; normalized: string } {
  const { name, key } = checkName(raw, field);
  return { name, normalized: key };
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

/** A domain name, stored as given and normalized to lower-case ASCII (IDNA) for search. */
export function checkDomain(raw: string): { domain: string; normalized: string } {
  const domain = (checkLine(raw, 'domain', TEXT_LIMITS.domain) ?? '').replace(/\.$/, '');
  const ascii = domainToASCII(domain).toLowerCase();
  if (!ascii || !DOMAIN.test(ascii)) throw badInput(`${quoted(raw)} is not a domain name`, { field: 'domain' });
  return { domain, normalized: ascii };
}

export { checkTenantId, TENANT_ID_PATTERN } from '../ids.js';

// ---- ordering and cursors ----------------------------------------------------------------------

export const ORDER_FIELDS = ['Id', 'CreatedAt', 'UpdatedAt', 'Name'] as const;
export type OrderField = (typeof ORDER_FIELDS)[number];
export type OrderDir = 'asc' | 'desc';

export interface CursorPosition {
  orderBy: OrderField;
  orderDir: OrderDir;
  /** the ordering value of the last row (ISO time, normalized name or id) */
  value: string;
  id: string;
}

const CURSOR_VERSION = 'c1';

export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(JSON.stringify([CURSOR_VERSION, pos.orderBy, pos.orderDir, pos.value, pos.id])).toString('base64url');
}

export function decodeCursor(cursor: string, orderBy: OrderField, orderDir: OrderDir): CursorPosition {
  const notOurs = () => badInput('cursorPos is not a cursor this service issued', { field: 'cursorPos' });
  checkOpaque(cursor, 'cursorPos', TEXT_LIMITS.cursor);
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw notOurs();
  }
  if (
    !Array.isArray(parts) ||
    parts.length !== 5 ||
    parts[0] !== CURSOR_VERSION ||
    !(ORDER_FIELDS as readonly unknown[]).includes(parts[1]) ||
    (parts[2] !== 'asc' && parts[2] !== 'desc') ||
    typeof parts[3] !== 'string' ||
    typeof parts[4] !== 'string' ||
    !TENANT_ID_PATTERN.test(parts[4])
  ) {
    throw notOurs();
  }
  if (parts[1] !== orderBy || parts[2] !== orderDir) {
    throw badInput(`cursorPos was issued for orderBy ${parts[1]} ${parts[2]}; this query orders by ${orderBy} ${orderDir}`, { field: 'cursorPos' });
  }
  // the value goes into a query as a key of the given order: it must be one the database can hold
  let value = parts[3] as string;
  if (orderBy === 'CreatedAt' || orderBy === 'UpdatedAt') {
    const at = parseTimestamp(value);
    if (!at) throw notOurs();
    value = at.toISOString();
  } else if (orderBy === 'Id') {
    if (!TENANT_ID_PATTERN.test(value)) throw notOurs();
  } else {
    checkOpaque(value, 'cursorPos', TEXT_LIMITS.cursor);
  }
  return { orderBy, orderDir, value, id: parts[4] as string };
}

export function orderValue(tenant: Tenant, orderBy: OrderField): string {
  switch (orderBy) {
    case 'Id':
      return tenant.id;
    case 'CreatedAt':
      return tenant.createdAt.toISOString();
    case 'UpdatedAt':
      return tenant.updatedAt.toISOString();
    case 'Name':
      return tenant.nameNormalized;
  }
}

// ---- search ---------------------------------------------------------------------------------

export const DEFAULT_MAX_RESULTS = 10;
export const MAX_MAX_RESULTS = 500;

/** Which tenants a caller may see; applied below every filter, so no query can forget it. */
export type Visibility =
  | { kind: 'all' }
  | {
      kind: 'some';
      /** tenants where the caller holds a role: they and their descendants are visible */
      subtreePaths: string[];
      /** the caller's own tenant, when no subtree holds it (null too for Support staff, who see only consenting tenants) */
      homeId: string | null;
      /** the caller holds Support: the tenants with support access on are visible too */
      consentingTenants: boolean;
    };

export interface TimeRange {
  start: Date | null;
  end: Date | null;
}

export interface TenantSearch {
  ids?: string[];
  /** `%` wildcard pattern (already escaped), or an exact normalized name */
  name?: { pattern: string; wildcard: boolean; id: string | null };
  environment?: { name: EnvironmentName | null; enabled: boolean | null };
  labelName?: { pattern: string; wildcard: boolean };
  subscriptionName?: { pattern: string; wildcard: boolean };
  parentId?: string;
  isPartner?: boolean;
  created?: TimeRange;
  modified?: TimeRange;
  withSupport?: boolean;
  /** subtree paths of forHierarchies */
  hierarchyPaths?: string[];
  orderBy: OrderField;
  orderDir: OrderDir;
}

export interface TenantPage {
  results: Tenant[];
  cursorPos: string | null;
  count: number;
  hasMore: boolean;
  totalCount: number | null;
}
