// What the tenant use cases (and the tenant-context check) need from storage.
import type { TenantScope } from '../access/principal.js';
import type { CursorPosition, Environment, Tenant, TenantSearch, Visibility } from './model.js';

export interface NewRootTenant {
  name: string;
  nameNormalized: string;
  createdAt: Date;
  environments: string[];
}

export interface NewTenant {
  parentId: string;
  parentPath: string;
  name: string;
  nameNormalized: string;
  isPartner: boolean;
  domain: string | null;
  domainNormalized: string | null;
  description: string | null;
  allowResponseActions: boolean;
  actionsApprover: string | null;
  createdAt: Date;
}

export interface TenantPatch {
  name?: string;
  nameNormalized?: string;
  domain?: string | null;
  domainNormalized?: string | null;
  description?: string | null;
  allowResponseActions?: boolean;
  actionsApprover?: string | null;
  expiresAt?: Date | null;
  enabled?: boolean;
  supportEnabled?: boolean;
  supportExpiresAt?: Date | null;
  supportReason?: string | null;
  /** when access is cut (the tenant is disabled): its principals' earlier tokens stay void */
  tokensValidAfter?: Date;
  updatedAt: Date;
}

export interface SearchWindow {
  /** keyset: rows after this position */
  after?: CursorPosition;
  /** page mode: rows to skip */
  offset?: number;
  limit: number;
}

export interface TenantStore {
  findScope(id: string): Promise<TenantScope | undefined>;
  findScopes(ids: string[]): Promise<TenantScope[]>;
  /** Serializes first-start bootstrap across processes until the transaction ends. */
  lockBootstrap(): Promise<void>;
  rootExists(): Promise<boolean>;
  insertRoot(root: NewRootTenant): Promise<void>;

  findTenant(id: string): Promise<Tenant | undefined>;
  /** The tenant, locked until the transaction ends. */
  lockTenant(id: string): Promise<Tenant | undefined>;
  insertTenant(tenant: NewTenant): Promise<Tenant>;
  updateTenant(id: string, patch: TenantPatch): Promise<void>;
  environments(tenantIds: string[]): Promise<Environment[]>;
  /** Creates or updates the named environments of a tenant. */
  setEnvironments(tenantId: string, envs: ReadonlyMap<string, boolean>, at: Date): Promise<void>;
  /** Direct children of the given tenants that the visibility allows, in id order, at most `limit`. */
  childTenants(parentIds: string[], visibility: Visibility, now: Date, limit: number): Promise<Tenant[]>;
  search(search: TenantSearch, visibility: Visibility, window: SearchWindow, now: Date): Promise<Tenant[]>;
  count(search: TenantSearch, visibility: Visibility, now: Date): Promise<number>;
  /** Folds the appended subtree-size rows of each tenant into one (maintenance); rows removed. */
  foldSubtreeSizes(): Promise<number>;
  /** Enabled tenants whose expiry is before `cutoff`, locked (skipping rows other processes hold). */
  lockExpired(cutoff: Date, limit: number): Promise<Tenant[]>;
}
