// SubscriptionStore on Kysely (both engines).
import type { Kysely } from 'kysely';
import type { PartnerSubscription, Service } from '../subscriptions/model.js';
import type { SubscriptionStore } from '../subscriptions/store.js';
import { rethrowUnique } from './errors.js';
import type { Database } from './schema.js';

const toService = (r: {
  id: string;
  owner_tenant_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
}): Service => ({
  id: r.id,
  ownerTenantId: String(r.owner_tenant_id),
  name: r.name,
  description: r.description,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toSubscription = (r: {
  id: string;
  partner_tenant_id: string;
  service_id: string;
  name: string;
  description: string | null;
  created_at: Date;
  updated_at: Date;
  retired_at: Date | null;
}): PartnerSubscription => ({
  id: r.id,
  partnerTenantId: String(r.partner_tenant_id),
  serviceId: r.service_id,
  name: r.name,
  description: r.description,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  retiredAt: r.retired_at,
});

const subscriptionColumns = ['id', 'partner_tenant_id', 'service_id', 'name', 'description', 'created_at', 'updated_at', 'retired_at'] as const;
const serviceColumns = ['id', 'owner_tenant_id', 'name', 'description', 'created_at', 'updated_at'] as const;

export function subscriptionStore(db: Kysely<Database>): SubscriptionStore {
  return {
    async insertService(s) {
      await db
        .insertInto('services')
        .values({
          id: s.id,
          owner_tenant_id: s.ownerTenantId,
          name: s.name,
          name_normalized: s.nameNormalized,
          description: s.description,
          created_at: s.createdAt,
          updated_at: s.updatedAt,
        })
        .execute()
        .catch(rethrowUnique);
    },
    async findService(id) {
      const row = await db.selectFrom('services').select(serviceColumns).where('id', '=', id).executeTakeFirst();
      return row ? toService(row) : undefined;
    },
    async listServices(ownerTenantIds) {
      if (ownerTenantIds.length === 0) return [];
      const rows = await db
        .selectFrom('services')
        .select(serviceColumns)
        .where('owner_tenant_id', 'in', ownerTenantIds)
        .orderBy('name')
        .orderBy('id')
        .execute();
      return rows.map(toService);
    },
    async insertSubscription(s) {
      await db
        .insertInto('partner_subscriptions')
        .values({
          id: s.id,
          partner_tenant_id: s.partnerTenantId,
          service_id: s.serviceId,
          name: s.name,
          name_normalized: s.nameNormalized,
          description: s.description,
          created_at: s.createdAt,
          updated_at: s.updatedAt,
          retired_at: s.retiredAt,
        })
        .execute()
        .catch(rethrowUnique);
    },
    async findSubscription(id, forUpdate = false) {
      let q = db.selectFrom('partner_subscriptions').select(subscriptionColumns).where('id', '=', id);
      if (forUpdate) q = q.forUpdate();
      const row = await q.executeTakeFirst();
      return row ? toSubscription(row) : undefined;
    },
    async listSubscriptions(partnerTenantIds, includeRetired) {
      if (partnerTenantIds.length === 0) return [];
      let q = db.selectFrom('partner_subscriptions').select(subscriptionColumns).where('partner_tenant_id', 'in', partnerTenantIds);
      if (!includeRetired) q = q.where('retired_at', 'is', null);
      const rows = await q.orderBy('name_normalized').orderBy('id').execute();
      return rows.map(toSubscription);
    },
    async retireSubscription(id, at) {
      await db.updateTable('partner_subscriptions').set({ retired_at: at, updated_at: at }).where('id', '=', id).execute();
    },
    async assign(tenantId, subscriptionId, at, by) {
      const rows = await db
        .insertInto('tenant_subscriptions')
        .values({ tenant_id: tenantId, subscription_id: subscriptionId, assigned_at: at, assigned_by: by })
        .onConflict((oc) => oc.columns(['tenant_id', 'subscription_id']).doNothing())
        .returning('tenant_id')
        .execute();
      return rows.length > 0;
    },
    async unassign(tenantId, subscriptionId) {
      const rows = await db
        .deleteFrom('tenant_subscriptions')
        .where('tenant_id', '=', tenantId)
        .where('subscription_id', '=', subscriptionId)
        .returning('tenant_id')
        .execute();
      return rows.length > 0;
    },
    async subscriptionsFor(tenantIds) {
      if (tenantIds.length === 0) return [];
      const rows = await db
        .selectFrom('tenant_subscriptions as ts')
        .innerJoin('partner_subscriptions as ps', 'ps.id', 'ts.subscription_id')
        .innerJoin('services as s', 's.id', 'ps.service_id')
        .select([
          'ts.tenant_id',
          'ps.id',
          'ps.partner_tenant_id',
          'ps.service_id',
          'ps.name',
          'ps.description',
          'ps.created_at',
          'ps.updated_at',
          'ps.retired_at',
          's.owner_tenant_id as s_owner',
          's.name as s_name',
          's.description as s_description',
          's.created_at as s_created_at',
          's.updated_at as s_updated_at',
        ])
        .where('ts.tenant_id', 'in', tenantIds)
        .orderBy('ts.tenant_id')
        .orderBy('ps.name_normalized')
        .execute();
      return rows.map((r) => ({
        tenantId: String(r.tenant_id),
        subscription: toSubscription(r),
        service: toService({
          id: r.service_id,
          owner_tenant_id: r.s_owner,
          name: r.s_name,
          description: r.s_description,
          created_at: r.s_created_at,
          updated_at: r.s_updated_at,
        }),
      }));
    },
  };
}
