// Per-request batch loaders for a tenant's nested lists: one query per list per request level,
// whatever the number of tenants in the page (no N+1). Children are filtered by the caller's
// visibility like every other tenant list, and one request lists at most MAX_CHILD_TENANTS of
// them however deeply `child_tenants` nests: each level reads at most what is left of that, and a
// level that would pass it is refused (its fields are null with the error), so no document can
// make one request read a partner's whole subtree.
import DataLoader from 'dataloader';
import type { Clock } from '../clock.js';
import { badInput } from '../errors.js';
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

/** Child tenants one request may list, over every `child_tenants` field of the answer. */
export const MAX_CHILD_TENANTS = 1000;

export const TOO_MANY_CHILDREN = `This answer would list more than ${MAX_CHILD_TENANTS} child tenants: list a partner's children a page at a time with tenants(tenantsQuery: {partnership: {parent: "<partner id>"}})`;

function grouped<T>(ids: readonly string[], rows: T[], key: (row: T) => string): T[][] {
  const by = new Map<string, T[]>(ids.map((id) => [id, []]));
  for (const row of rows) by.get(key(row))?.push(row);
  return ids.map((id) => by.get(id)!);
}

export function createTenantLoaders(store: TenantLoaderStores, clock: Clock, visibility: () => Promise<Visibility>): TenantLoaders {
  let childrenLeft = MAX_CHILD_TENANTS;
  let childrenRead: Promise<void> = Promise.resolve();
  return {
    environments: new DataLoader(async (ids) => grouped(ids, await store.tenants.environments([...ids]), (e) => e.tenantId)),
    labels: new DataLoader(async (ids) => grouped(ids, await store.labels.labelsFor([...ids]), (l) => l.tenantId)),
    subscriptions: new DataLoader(async (ids) => grouped(ids, await store.subscriptions.subscriptionsFor([...ids]), (s) => s.tenantId)),
    children: new DataLoader((ids) => {
      // batches in flight at once (sibling fields) run one after the other, each reading at most
      // what the ones before left: the reads of one request stay within the limit together; one
      // more than is left tells "more than allowed" from "exactly what was left"
      const batch = childrenRead.then(async () => {
        const children = await store.tenants.childTenants([...ids], await visibility(), clock.now(), childrenLeft + 1);
        if (children.length > childrenLeft) throw badInput(TOO_MANY_CHILDREN);
        childrenLeft -= children.length;
        return grouped(ids, children, (t) => t.parentId!);
      });
      childrenRead = batch.then(
        () => undefined,
        () => undefined,
      );
      return batch;
    }),
  };
}
