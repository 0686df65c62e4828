// Thin resolvers of the tenant interface: arguments in, one service call, field names out.
// Nested lists go through the per-request loaders (one query per list, not one per tenant).
// Typed by the resolver types generated from schema.graphql (`npm run codegen`): a field or
// argument renamed in the SDL and not here fails to compile.
import { supportActive } from '../../access/policy.js';
import { certificateExpiresSoon, currentCertificate } from '../../sso/model.js';
import type { LabelInput } from '../../labels/service.js';
import type { SubscriptionService } from '../../subscriptions/service.js';
import { enabledIn } from '../../tenants/model.js';
import type { TenantsQueryInput } from '../../tenants/search.js';
import { scopeOf } from '../../tenants/model.js';
import type { TenantCreateInput, TenantUpdateInput } from '../../tenants/service.js';
import type { Matches, SameFields } from '../input-fields.js';
import { TimeScalar } from '../scalars.js';
import type {
  InputPartnerSubscription,
  InputService,
  InputTenantLabel,
  Resolvers,
  TenantCreateInput as WireTenantCreateInput,
  TenantsQuery,
  TenantUpdateInput as WireTenantUpdateInput,
} from './resolvers-types.generated.js';

export const tenantResolvers: Resolvers = {
  Time: TimeScalar,
  Query: {
    tenants: (_, args, ctx) => ctx.services.tenants.search(ctx.caller, args.tenantsQuery ?? {}),
    partnerSubscriptions: (_, args, ctx) =>
      ctx.services.subscriptions.listSubscriptions(ctx.caller, args.partner_tenant_id, args.includeRetired ?? false),
    services: (_, args, ctx) => ctx.services.subscriptions.listServices(ctx.caller, args.partner_tenant_id),
    ssoConnections: (_, _args, ctx) => ctx.services.sso.list(ctx.caller),
    ssoConnection: (_, args, ctx) => ctx.services.sso.get(ctx.caller, args.connectionID),
    getSSOConnectionConfig: (_, args, ctx) => ctx.services.sso.inspect(ctx.caller, args.metadataURL, args.cert),
    auditEvents: (_, args, ctx) => ctx.services.audit.list(ctx.caller, args),
  },
  AuditEvent: {
    tenantID: (e) => e.tenantId,
    actorKind: (e) => e.actor.kind,
    actorID: (e) => e.actor.id,
    actorTenantID: (e) => e.actor.tenantId ?? null,
    targetKind: (e) => e.target.kind,
    targetID: (e) => e.target.id,
    details: (e) => JSON.stringify(e.details),
    requestID: (e) => e.requestId,
  },
  Mutation: {
    createTenant: (_, args, ctx) => ctx.services.tenants.create(ctx.caller, args.newTenant),
    updateTenant: (_, args, ctx) => ctx.services.tenants.update(ctx.caller, args.tenantID, args.tenantUpdate),
    createTenantLabel: (_, args, ctx) => ctx.services.labels.create(ctx.caller, args.tenant_id, args.label_input),
    updateTenantLabel: (_, args, ctx) => ctx.services.labels.update(ctx.caller, args.label_id, args.label_input),
    deleteTenantLabel: (_, args, ctx) => ctx.services.labels.delete(ctx.caller, args.label_id),
    assignSubscription: (_, args, ctx) => ctx.services.subscriptions.assign(ctx.caller, args.tenant_id, args.subscription_id, true),
    unassignSubscription: (_, args, ctx) => ctx.services.subscriptions.assign(ctx.caller, args.tenant_id, args.subscription_id, false),
    enableTenantSupport: (_, args, ctx) =>
      ctx.services.tenants.setSupport(ctx.caller, args.tenantID, true, { until: args.until, reason: args.reason }),
    disableTenantSupport: (_, args, ctx) => ctx.services.tenants.setSupport(ctx.caller, args.tenantID, false),
    createService: (_, args, ctx) => ctx.services.subscriptions.createService(ctx.caller, args.service_input),
    createPartnerSubscription: (_, args, ctx) => ctx.services.subscriptions.createSubscription(ctx.caller, args.subscription_input),
    retirePartnerSubscription: (_, args, ctx) => ctx.services.subscriptions.retireSubscription(ctx.caller, args.subscription_id),
    createSSOConnection: (_, args, ctx) => ctx.services.sso.create(ctx.caller, args.newConnection),
    updateSSOConnection: (_, args, ctx) => ctx.services.sso.update(ctx.caller, args.updatedConnection),
    deleteSSOConnection: (_, args, ctx) => ctx.services.sso.delete(ctx.caller, args.connectionID),
    refreshSSOConnectionMetadata: (_, args, ctx) => ctx.services.sso.refreshMetadata(ctx.caller, args.connectionID),
    checkSSODomain: (_, args, ctx) => ctx.services.sso.checkDomainNow(ctx.caller, args.connectionID, args.domain),
    regenerateSSODomainChallenge: (_, args, ctx) => ctx.services.sso.regenerateDomainChallenge(ctx.caller, args.connectionID, args.domain),
  },
  SSOConnection: {
    externalName: (c) => c.idpEntityId,
    externalID: (c) => c.idpEntityId,
    environment: (_, _args, ctx) => ctx.services.sso.environment,
    tenantID: (c) => c.tenantId,
    createdAt: (c) => c.createdAt,
    updatedAt: (c) => c.updatedAt,
    certName: (c, _, ctx) => currentCertificate(c, ctx.services.clock.now())?.name ?? null,
    expiresAt: (c, _, ctx) => currentCertificate(c, ctx.services.clock.now())?.expiresAt ?? null,
    notBefore: (c, _, ctx) => currentCertificate(c, ctx.services.clock.now())?.notBefore ?? null,
    issuer: (c, _, ctx) => currentCertificate(c, ctx.services.clock.now())?.issuer ?? null,
    subject: (c, _, ctx) => currentCertificate(c, ctx.services.clock.now())?.subject ?? null,
    ssoConnectionParameters: (c, _, ctx) => ctx.services.sso.parameters(c),
    ssoConnectionIDPConfig: (c, _, ctx) => ({
      samlConnectionConfiguration: { signingCert: currentCertificate(c, ctx.services.clock.now())?.pem ?? null, signInEndpoint: c.signInEndpoint },
      azureADConnectionConfiguration: null,
    }),
    certificates: (c) => c.certificates,
    certificateExpiresSoon: (c, _, ctx) => certificateExpiresSoon(c, ctx.services.clock.now()),
    metadataURL: (c) => c.metadataUrl,
    metadataRefreshedAt: (c) => c.metadataRefreshedAt,
    metadataRefreshError: (c) => c.metadataRefreshError,
    domainProofs: (c, _, ctx) => ctx.services.sso.domainProofs(c),
  },
  SSODomainProof: {
    txtRecordName: (d) => d.recordName,
    txtRecordValue: (d) => d.value,
    lastCheckedAt: (d) => d.checkedAt,
    problem: (d) => d.checkError,
  },
  SSOCertificate: {
    fingerprintSHA256: (c) => c.fingerprintSha256,
    expired: (c, _, ctx) => {
      const now = ctx.services.clock.now();
      return c.expiresAt <= now || c.notBefore > now;
    },
  },
  SSOConnectionConfig: {
    ssoConnectionConfiguration: (idp) => ({
      samlConnectionConfiguration: { signingCert: idp.certificates[0]?.pem ?? null, signInEndpoint: idp.signInEndpoint ?? null },
      azureADConnectionConfiguration: null,
    }),
    expiresAt: (idp) => idp.certificates[0]?.expiresAt ?? null,
    notBefore: (idp) => idp.certificates[0]?.notBefore ?? null,
    issuer: (idp) => idp.certificates[0]?.issuer ?? null,
    subject: (idp) => idp.certificates[0]?.subject ?? null,
    entityID: (idp) => idp.entityId ?? null,
    certificates: (idp) => idp.certificates,
  },
  SSOCertificateInfo: {
    fingerprintSHA256: (c) => c.fingerprint256,
  },
  Tenant: {
    created_at: (t) => t.createdAt,
    updated_at: (t) => t.updatedAt,
    name_normalized: (t) => t.nameNormalized,
    domain_normalized: (t) => t.domainNormalized,
    allow_response_actions: (t) => t.allowResponseActions,
    actions_approver: (t) => t.actionsApprover,
    expires_at: (t) => t.expiresAt,
    support_reason: (t) => t.supportReason,
    support_enabled: (t, _, ctx) => supportActive(scopeOf(t), ctx.services.clock.now()),
    support_expires_at: (t, _, ctx) => (supportActive(scopeOf(t), ctx.services.clock.now()) ? t.supportExpiresAt : null),
    labels: (t, _, ctx) => ctx.loaders.labels.load(t.id),
    environments: (t, _, ctx) => ctx.loaders.environments.load(t.id),
    services: async (t, _, ctx) => {
      const assigned = await ctx.loaders.subscriptions.load(t.id);
      return [...new Map(assigned.map((a) => [a.service.id, a.service])).values()];
    },
    partnership: (t) => t,
    enabled_in_production: async (t, _, ctx) => enabledIn(await ctx.loaders.environments.load(t.id), 'production'),
    enabled_in_pilot: async (t, _, ctx) => enabledIn(await ctx.loaders.environments.load(t.id), 'pilot'),
  },
  Partnership: {
    parent: (t) => t.parentId,
    is_partner: (t) => t.isPartner,
    subscriptions: async (t, _, ctx) => (await ctx.loaders.subscriptions.load(t.id)).map((a) => a.subscription),
    child_tenants: (t, _, ctx) => ctx.loaders.children.load(t.id),
  },
  TenantLabel: {
    tenant_id: (l) => l.tenantId,
    owner_partner_tenant_id: (l) => l.ownerPartnerTenantId,
    created_at: (l) => l.createdAt,
    updated_at: (l) => l.updatedAt,
  },
  Environment: {
    tenant_id: (e) => e.tenantId,
    created_at: (e) => e.createdAt,
    updated_at: (e) => e.updatedAt,
  },
  Service: {
    owner_tenant_id: (s) => s.ownerTenantId,
    created_at: (s) => s.createdAt,
    updated_at: (s) => s.updatedAt,
  },
  PartnerSubscription: {
    service_id: (s) => s.serviceId,
    partner_tenant_id: (s) => s.partnerTenantId,
    created_at: (s) => s.createdAt,
    updated_at: (s) => s.updatedAt,
    retired_at: (s) => s.retiredAt,
  },
};

/** Input objects handed to the services whole must name the fields the services' input types name. */
export type WholeInputs = [
  Matches<SameFields<TenantsQuery, TenantsQueryInput>>,
  Matches<SameFields<WireTenantCreateInput, TenantCreateInput>>,
  Matches<SameFields<WireTenantUpdateInput, TenantUpdateInput>>,
  Matches<SameFields<InputTenantLabel, LabelInput>>,
  Matches<SameFields<InputService, Parameters<SubscriptionService['createService']>[1]>>,
  Matches<SameFields<InputPartnerSubscription, Parameters<SubscriptionService['createSubscription']>[1]>>,
];
