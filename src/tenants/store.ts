// What the tenant use cases (and the tenant-context check) need from storage.
import type { TenantScope } from '../access/principal.js';

export interface NewRootTenant {
  name: string;
  createdAt: Date;
}

export interface TenantStore {
  findScope(id: string): Promise<TenantScope | undefined>;
  findScopes(ids: string[]): Promise<TenantScope[]>;
  /** Serializes first-start bootstrap across processes until the transaction ends. */
  lockBootstrap(): Promise<void>;
  rootExists(): Promise<boolean>;
  insertRoot(root: NewRootTenant): Promise<void>;
}
