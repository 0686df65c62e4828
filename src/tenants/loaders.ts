// Per-request batch loaders for a tenant's nested lists: one query per list per request level,
// whatever the number of tenants in the page (no N+1). Children are filtered by the caller's
// visibility like every other tenant list.
import DataLoader from 'dataloader';
import type { Clock } from '../clock.js';
import type { TenantLabel } from '../labels/model.js';
import type { AssignedSubscription } from '../subscriptions/store.js';
import type { Environment, Tenant, Visibility } from './model.js';
import type { LabelStore } from '../labels/store.js';
import type { SubscriptionStore } from '../subscriptions/store.js';
import type { TenantStore } from './store.js';

/** What the per-request batch loaders read. */
export interface TenantLoaderStores {
  tenants: Pick<TenantStore, 'environments' | 'childTenants'>;
  labels: Pick<LabelStore, 'labelsFor'>;
  subscriptions: Pick<SubscriptionStore, 'subscriptionsFor'>;
}

export interface TenantLoaders {
  environments: DataLoader<string, Environment[]>;
  labels: DataLoader<string, TenantLabel[]>;
  subscriptions: DataLoader<string, AssignedSubscription[]>;
  children: DataLoader<string, Tenant[]>;
}

function grouped<T>(ids: readonly string[], rows: T[], key: (row: T) => string): T[][] {
  const by = new Map<string, T[]>(ids.map((id) => [id, []]));
  for (const row of rows) by.get(key(row))?.push(row);
  return ids.map((id) => by.get(id)!);
}

export function createTenantLoaders(store: TenantLoaderStores, clock: Clock, visibility: () => Promise<Visibility>): TenantLoaders {
  return {
    environments: new DataLoader(async (ids) => grouped(ids, await store.tenants.environments([...ids]), (e) => e.tenantId)),
    labels: new DataLoader(async (ids) => grouped(ids, await store.labels.labelsFor([...ids]), (l) => l.tenantId)),
    subscriptions: new DataLoader(async (ids) => grouped(ids, await store.subscriptions.subscriptionsFor([...ids]), (s) => s.tenantId)),
    children: new DataLoader(async (ids) =>
      grouped(ids, await store.tenants.childTenants([...ids], await visibility(), clock.now()), (t) => t.parentId!),
    ),
  };
}
