// What the service and partner-subscription use cases need from storage.
import type { PartnerSubscription, Service } from './model.js';

export interface AssignedSubscription {
  tenantId: string;
  subscription: PartnerSubscription;
  service: Service;
}

export interface SubscriptionStore {
  /** throws DuplicateKeyError('service.name') when the owner already has a service of that name (compared by nameNormalized) */
  insertService(service: Service & { nameNormalized: string }): Promise<void>;
  findService(id: string): Promise<Service | undefined>;
  listServices(ownerTenantIds: string[]): Promise<Service[]>;
  insertSubscription(subscription: PartnerSubscription & { nameNormalized: string }): Promise<void>;
  findSubscription(id: string, forUpdate?: boolean): Promise<PartnerSubscription | undefined>;
  listSubscriptions(partnerTenantIds: string[], includeRetired: boolean): Promise<PartnerSubscription[]>;
  retireSubscription(id: string, at: Date): Promise<void>;
  /** false when the tenant already had it */
  assign(tenantId: string, subscriptionId: string, at: Date, by: string): Promise<boolean>;
  /** false when the tenant did not have it */
  unassign(tenantId: string, subscriptionId: string): Promise<boolean>;
  subscriptionsFor(tenantIds: string[]): Promise<AssignedSubscription[]>;
}
