// Services and partner subscriptions. A partner (or the vendor) defines services; a partner
// packages a service available to it (its own, or one of a partner above it) as a subscription
// and assigns it to tenants below it. Managing needs 'subscriptions.manage' in that partner.
import { randomUUID } from 'node:crypto';
import { assertCan, reaches } from '../access/policy.js';
import type { Caller } from '../access/principal.js';
import { principalEvent } from '../audit/model.js';
import type { Clock } from '../clock.js';
import { badInput, conflict, DuplicateKeyError, notFound } from '../errors.js';
import type { Transactional } from '../transaction.js';
import { checkTenantId, scopeOf, type Tenant, type TenantVisibility } from '../tenants/model.js';
import { checkUuid } from '../ids.js';
import { checkDescription, checkOfferingName, type PartnerSubscription, type Service } from './model.js';
import type { AuditStore } from '../audit/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { SubscriptionStore } from './store.js';

/** Everything the service and subscription use cases read and write. */
export interface SubscriptionStores {
  subscriptions: SubscriptionStore;
  tenants: Pick<TenantStore, 'findTenant' | 'updateTenant'>;
  audit: AuditStore;
}

export class SubscriptionService {
  constructor(
    private readonly store: Transactional<SubscriptionStores>,
    private readonly clock: Clock,
    private readonly tenants: TenantVisibility,
  ) {}

  /** The partner a request manages: the one named, else the acting tenant. */
  private async partner(caller: Caller, partnerId: string | null | undefined, field: string): Promise<Tenant> {
    const id = partnerId ? checkTenantId(partnerId, field) : caller.tenant.id;
    const partner = await this.tenants.visibleTenant(caller.principal, id, field);
    if (!partner.isPartner) throw badInput(`tenant ${partner.id} is not a partner`, { field });
    return partner;
  }

  async createService(caller: Caller, input: { name: string; description?: string | null; owner_tenant_id?: string | null }): Promise<Service> {
    const now = this.clock.now();
    const owner = await this.partner(caller, input.owner_tenant_id, 'owner_tenant_id');
    assertCan(caller.principal, scopeOf(owner), 'subscriptions.manage', now);
    const { name, normalized } = checkOfferingName(input.name, 'name');
    const service: Service = {
      id: randomUUID(),
      ownerTenantId: owner.id,
      name,
      description: checkDescription(input.description),
      createdAt: now,
      updatedAt: now,
    };
    return this.store.transaction(async (tx) => {
      try {
        await tx.subscriptions.insertService({ ...service, nameNormalized: normalized });
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.key === 'service.name')
          throw conflict(`partner ${owner.id} already has a service named "${name}"`);
        throw err;
      }
      await this.audit(tx, caller, owner.id, 'service.created', 'service', service.id, { name }, now);
      return service;
    });
  }

  /** Services a partner can package: its own and those of the partners above it. */
  async listServices(caller: Caller, partnerId?: string | null): Promise<Service[]> {
    const partner = await this.tenants.visibleTenant(
      caller.principal,
      partnerId ? checkTenantId(partnerId, 'partner_tenant_id') : caller.tenant.id,
      'partner_tenant_id',
    );
    assertCan(caller.principal, scopeOf(partner), 'subscriptions.read', this.clock.now());
    return this.store.subscriptions.listServices(partner.path.split('.').filter(Boolean));
  }

  async createSubscription(
    caller: Caller,
    input: { service_id: string; name: string; description?: string | null; partner_tenant_id?: string | null },
  ): Promise<PartnerSubscription> {
    const now = this.clock.now();
    const partner = await this.partner(caller, input.partner_tenant_id, 'partner_tenant_id');
    assertCan(caller.principal, scopeOf(partner), 'subscriptions.manage', now);
    const service = await this.store.subscriptions.findService(checkUuid(input.service_id, 'service_id'));
    if (!service || !partner.path.split('.').includes(service.ownerTenantId)) {
      throw notFound('Service');
    }
    const { name, normalized } = checkOfferingName(input.name, 'name');
    const subscription: PartnerSubscription = {
      id: randomUUID(),
      partnerTenantId: partner.id,
      serviceId: service.id,
      name,
      description: checkDescription(input.description),
      createdAt: now,
      updatedAt: now,
      retiredAt: null,
    };
    return this.store.transaction(async (tx) => {
      try {
        await tx.subscriptions.insertSubscription({ ...subscription, nameNormalized: normalized });
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.key === 'subscription.name')
          throw conflict(`partner ${partner.id} already has a subscription named "${name}"`);
        throw err;
      }
      await this.audit(tx, caller, partner.id, 'subscription.created', 'subscription', subscription.id, { name, service: service.id }, now);
      return subscription;
    });
  }

  async listSubscriptions(caller: Caller, partnerId: string | null | undefined, includeRetired: boolean): Promise<PartnerSubscription[]> {
    const partner = await this.partner(caller, partnerId, 'partner_tenant_id');
    assertCan(caller.principal, scopeOf(partner), 'subscriptions.read', this.clock.now());
    return this.store.subscriptions.listSubscriptions([partner.id], includeRetired);
  }

  async retireSubscription(caller: Caller, subscriptionId: string): Promise<PartnerSubscription> {
    const now = this.clock.now();
    const { subscription, partner } = await this.visibleSubscription(caller, subscriptionId);
    assertCan(caller.principal, scopeOf(partner), 'subscriptions.manage', now);
    if (subscription.retiredAt) return subscription;
    return this.store.transaction(async (tx) => {
      const current = await tx.subscriptions.findSubscription(subscription.id, true);
      if (current?.retiredAt) return current;
      await tx.subscriptions.retireSubscription(subscription.id, now);
      await this.audit(tx, caller, partner.id, 'subscription.retired', 'subscription', subscription.id, { name: subscription.name }, now);
      return (await tx.subscriptions.findSubscription(subscription.id))!;
    });
  }

  async assign(caller: Caller, tenantId: string, subscriptionId: string, assign: boolean): Promise<Tenant> {
    const now = this.clock.now();
    const tenant = await this.tenants.visibleTenant(caller.principal, tenantId, 'tenant_id');
    const { subscription, partner } = await this.visibleSubscription(caller, subscriptionId);
    assertCan(caller.principal, scopeOf(partner), 'subscriptions.manage', now);
    if (assign) {
      if (tenant.id === partner.id || !tenant.path.startsWith(partner.path)) {
        throw badInput(`subscription ${subscription.id} belongs to partner ${partner.id}; it can be assigned only to tenants below it`, {
          field: 'tenant_id',
        });
      }
      if (subscription.retiredAt) throw badInput(`subscription ${subscription.id} is retired`, { field: 'subscription_id' });
    }
    return this.store.transaction(async (tx) => {
      // a retire racing this assign: the row lock orders them, and the state is checked again
      const current = await tx.subscriptions.findSubscription(subscription.id, true);
      if (assign && current?.retiredAt) throw badInput(`subscription ${subscription.id} is retired`, { field: 'subscription_id' });
      const changed = assign
        ? await tx.subscriptions.assign(tenant.id, subscription.id, now, caller.principal.id)
        : await tx.subscriptions.unassign(tenant.id, subscription.id);
      if (changed) {
        await tx.tenants.updateTenant(tenant.id, { updatedAt: now });
        await this.audit(
          tx,
          caller,
          tenant.id,
          assign ? 'subscription.assigned' : 'subscription.unassigned',
          'tenant',
          tenant.id,
          { subscription: subscription.id },
          now,
        );
      }
      return (await tx.tenants.findTenant(tenant.id))!;
    });
  }

  private async visibleSubscription(caller: Caller, subscriptionId: string) {
    const subscription = await this.store.subscriptions.findSubscription(checkUuid(subscriptionId, 'subscription_id'));
    const partner = subscription ? await this.store.tenants.findTenant(subscription.partnerTenantId) : undefined;
    const now = this.clock.now();
    // docs/authorization.md: NOT_FOUND only where the caller does not see the partner; one it sees
    // (Support staff, once the partner consented, included) but may not manage is FORBIDDEN below
    if (!subscription || !partner || !reaches(caller.principal, scopeOf(partner), now)) {
      throw notFound('Subscription');
    }
    return { subscription, partner };
  }

  private audit(
    tx: SubscriptionStores,
    caller: Caller,
    tenantId: string,
    action: string,
    kind: string,
    id: string,
    details: Record<string, unknown>,
    now: Date,
  ) {
    return tx.audit.insertEvent(principalEvent(caller.principal, now, tenantId, action, { kind, id }, details));
  }
}
