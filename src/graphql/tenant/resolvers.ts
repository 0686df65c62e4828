// Thin resolvers of the tenant interface: arguments in, one service call, field names out.
// Nested lists go through the per-request loaders (one query per list, not one per tenant).
import { supportActive } from '../../access/policy.js';
import type { TenantLabel } from '../../labels/model.js';
import type { PartnerSubscription, Service } from '../../subscriptions/model.js';
import { enabledIn, type Environment, type Tenant } from '../../tenants/model.js';
import { scopeOf } from '../../tenants/service.js';
import { renamed, type Resolvers } from '../build-schema.js';
import type { GraphQLContext } from '../context.js';
import { TimeScalar } from '../scalars.js';

type Args = Record<string, any>;
type Ctx = GraphQLContext;

export const tenantResolvers: Resolvers = {
  Time: TimeScalar,
  Query: {
    tenants: (_: unknown, args: Args, ctx: Ctx) => ctx.services.tenants.search(ctx.caller, args.tenantsQuery ?? {}),
    partnerSubscriptions: (_: unknown, args: Args, ctx: Ctx) =>
      ctx.services.subscriptions.listSubscriptions(ctx.caller, args.partner_tenant_id, args.includeRetired ?? false),
    services: (_: unknown, args: Args, ctx: Ctx) => ctx.services.subscriptions.listServices(ctx.caller, args.partner_tenant_id),
  },
  Mutation: {
    createTenant: (_: unknown, args: Args, ctx: Ctx) => ctx.services.tenants.create(ctx.caller, args.newTenant),
    updateTenant: (_: unknown, args: Args, ctx: Ctx) => ctx.services.tenants.update(ctx.caller, args.tenantID, args.tenantUpdate),
    createTenantLabel: (_: unknown, args: Args, ctx: Ctx) => ctx.services.labels.create(ctx.caller, args.tenant_id, args.label_input),
    updateTenantLabel: (_: unknown, args: Args, ctx: Ctx) => ctx.services.labels.update(ctx.caller, args.label_id, args.label_input),
    deleteTenantLabel: (_: unknown, args: Args, ctx: Ctx) => ctx.services.labels.delete(ctx.caller, args.label_id),
    assignSubscription: (_: unknown, args: Args, ctx: Ctx) =>
      ctx.services.subscriptions.assign(ctx.caller, args.tenant_id, args.subscription_id, true),
    unassignSubscription: (_: unknown, args: Args, ctx: Ctx) =>
      ctx.services.subscriptions.assign(ctx.caller, args.tenant_id, args.subscription_id, false),
    enableTenantSupport: (_: unknown, args: Args, ctx: Ctx) =>
      ctx.services.tenants.setSupport(ctx.caller, args.tenantID, true, { until: args.until, reason: args.reason }),
    disableTenantSupport: (_: unknown, args: Args, ctx: Ctx) => ctx.services.tenants.setSupport(ctx.caller, args.tenantID, false),
    createService: (_: unknown, args: Args, ctx: Ctx) => ctx.services.subscriptions.createService(ctx.caller, args.service_input),
    createPartnerSubscription: (_: unknown, args: Args, ctx: Ctx) =>
      ctx.services.subscriptions.createSubscription(ctx.caller, args.subscription_input),
    retirePartnerSubscription: (_: unknown, args: Args, ctx: Ctx) => ctx.services.subscriptions.retireSubscription(ctx.caller, args.subscription_id),
  },
  Tenant: {
    ...renamed<Tenant>({
      created_at: 'createdAt',
      updated_at: 'updatedAt',
      name_normalized: 'nameNormalized',
      domain_normalized: 'domainNormalized',
      allow_response_actions: 'allowResponseActions',
      actions_approver: 'actionsApprover',
      expires_at: 'expiresAt',
      support_reason: 'supportReason',
    }),
    support_enabled: (t: Tenant, _: Args, ctx: Ctx) => supportActive(scopeOf(t), ctx.services.clock.now()),
    support_expires_at: (t: Tenant, _: Args, ctx: Ctx) => (supportActive(scopeOf(t), ctx.services.clock.now()) ? t.supportExpiresAt : null),
    labels: (t: Tenant, _: Args, ctx: Ctx) => ctx.loaders.labels.load(t.id),
    environments: (t: Tenant, _: Args, ctx: Ctx) => ctx.loaders.environments.load(t.id),
    services: async (t: Tenant, _: Args, ctx: Ctx) => {
      const assigned = await ctx.loaders.subscriptions.load(t.id);
      return [...new Map(assigned.map((a) => [a.service.id, a.service])).values()];
    },
    partnership: (t: Tenant) => t,
    enabled_in_production: async (t: Tenant, _: Args, ctx: Ctx) => enabledIn(await ctx.loaders.environments.load(t.id), 'production'),
    enabled_in_pilot: async (t: Tenant, _: Args, ctx: Ctx) => enabledIn(await ctx.loaders.environments.load(t.id), 'pilot'),
  },
  Partnership: {
    parent: (t: Tenant) => t.parentId,
    is_partner: (t: Tenant) => t.isPartner,
    subscriptions: async (t: Tenant, _: Args, ctx: Ctx) => (await ctx.loaders.subscriptions.load(t.id)).map((a) => a.subscription),
    child_tenants: (t: Tenant, _: Args, ctx: Ctx) => ctx.loaders.children.load(t.id),
  },
  TenantLabel: renamed<TenantLabel>({
    tenant_id: 'tenantId',
    owner_partner_tenant_id: 'ownerPartnerTenantId',
    created_at: 'createdAt',
    updated_at: 'updatedAt',
  }),
  Environment: renamed<Environment>({ tenant_id: 'tenantId', created_at: 'createdAt', updated_at: 'updatedAt' }),
  Service: renamed<Service>({ owner_tenant_id: 'ownerTenantId', created_at: 'createdAt', updated_at: 'updatedAt' }),
  PartnerSubscription: renamed<PartnerSubscription>({
    service_id: 'serviceId',
    partner_tenant_id: 'partnerTenantId',
    created_at: 'createdAt',
    updated_at: 'updatedAt',
    retired_at: 'retiredAt',
  }),
};
