// Tenant use cases: search, create, update (the state table), support access, expiry.
// Authorization first: a tenant the caller cannot see is NOT_FOUND (whether or not it exists);
// one it can see but may not change is FORBIDDEN. Every change commits with its audit event.
import { randomUUID } from 'node:crypto';
import { assertCan, reaches, rolesIn } from '../access/policy.js';
import type { Caller, Principal, TenantScope } from '../access/principal.js';
import { ROOT_TENANT_ID, roleName, type RoleName } from '../access/roles.js';
import { SCOPE_NAMES } from '../access/scope.js';
import { visibilityFor } from '../access/visibility.js';
import { principalEvent } from '../audit/model.js';
import type { Clock } from '../clock.js';
import { badInput, DuplicateKeyError, forbidden, notFound } from '../errors.js';
import { checkLabel } from '../labels/model.js';
import { checkPage } from '../paging.js';
import type { Transactional } from '../transaction.js';
import { checkFreeText, checkLine, searchKey, TEXT_LIMITS } from '../text.js';
import {
  applyEnvironmentChanges,
  checkDomain,
  checkEnvironmentName,
  checkTenantId,
  decodeCursor,
  DAY_MS,
  DEFAULT_ENVIRONMENT,
  encodeCursor,
  isActive,
  normalizeTenantName,
  orderValue,
  scopeOf,
  type Tenant,
  type TenantPage,
  type TenantSearch,
  type TenantVisibility,
  type Visibility,
  MAX_MAX_RESULTS,
  TENANT_ID_PATTERN,
} from './model.js';
import { parseTenantsQuery, type TenantsQueryInput } from './search.js';
import type { AuditStore } from '../audit/store.js';
import type { LabelStore } from '../labels/store.js';
import type { TenantPatch, TenantStore } from './store.js';

/** Everything the tenant use cases (and the expiry job) read and write. */
export interface TenantStores {
  tenants: TenantStore;
  labels: Pick<LabelStore, 'insertLabels'>;
  audit: AuditStore;
}

export interface TenantCreateInput {
  name: string;
  partnerTenantID: string;
  labels?: { name: string; value?: string | null; owner_partner_tenant_id?: string | null }[] | null;
  environments?: string[] | null;
  isPartner?: boolean | null;
  domain?: string | null;
  description?: string | null;
  allow_response_actions?: boolean | null;
  actions_approver?: string | null;
}

export interface TenantUpdateInput {
  name?: string | null;
  environments?: { name: string; enabled: boolean }[] | null;
  disable?: boolean | null;
  expiresAt?: Date | null;
  clearExpiration?: boolean | null;
  domain?: string | null;
  description?: string | null;
  allow_response_actions?: boolean | null;
  actions_approver?: string | null;
}

export interface TenantSettings {
  expiryGraceDays: number;
}

export const MAX_SUPPORT_DAYS = 366;
export const MAX_LABELS_AT_CREATION = 100;
/** environment entries of one request (the catalog has three; entries apply in order) */
export const MAX_ENVIRONMENT_ENTRIES = 20;

function atMost(list: readonly unknown[] | null | undefined, max: number, field: string, hint = ''): void {
  if ((list?.length ?? 0) > max) throw badInput(`${field}: at most ${max} entries${hint}`, { field });
}

/** A tenant and the roles in force there for one principal (held there or above). */
export interface TenantWithRoles {
  tenant: Tenant;
  roles: RoleName[];
}

export class TenantService implements TenantVisibility {
  constructor(
    private readonly store: Transactional<TenantStores>,
    private readonly clock: Clock,
    private readonly settings: TenantSettings,
  ) {}

  visibility(principal: Principal): Promise<Visibility> {
    return visibilityFor(principal, this.store.tenants, this.clock.now());
  }

  /**
   * The tenant a request acts in: the one it names (X-Tenant-Context), else the principal's home.
   * A named tenant the principal's roles do not reach is FORBIDDEN, the same whether or not it
   * exists. Without a name the request acts in the home tenant, and each operation checks its
   * own permissions (Support staff, who do not see their home tenant, can still search).
   */
  async actingTenant(principal: Principal, named: string | undefined): Promise<TenantScope> {
    const tenantId = named ?? principal.tenantId;
    const scope = await this.store.tenants.findScope(tenantId);
    if (!scope || (named !== undefined && !reaches(principal, scope, this.clock.now()))) {
      throw forbidden(`Your roles do not reach tenant ${tenantId}`);
    }
    return scope;
  }

  /**
   * The tenants where the principal holds a live role, and those below them (a role applies to
   * its tenant's descendants), each with the roles in force there: what a signed-in person may
   * choose to act in. Unlike visibility, the home tenant counts only through a role. Ordered by
   * name; `name` keeps the names that contain it (`%` a wildcard) and the tenant of that id.
   */
  async withRoles(
    principal: Principal,
    opts: { name?: string | undefined; page: number; perPage: number },
  ): Promise<{ results: TenantWithRoles[]; totalCount: number }> {
    const now = this.clock.now();
    const { offset, perPage } = checkPage(opts, { maxPerPage: MAX_MAX_RESULTS });
    const search: TenantSearch = { orderBy: 'Name', orderDir: 'asc' };
    const name = opts.name?.trim();
    if (name) {
      search.name = { ...searchKey(name.includes('%') ? name : `%${name}%`, 'name'), id: TENANT_ID_PATTERN.test(name) ? name : null };
    }
    const seen = await this.visibility(principal);
    const visibility: Visibility = seen.kind === 'all' ? seen : { ...seen, homeId: null };
    const [tenants, totalCount] = await Promise.all([
      this.store.tenants.search(search, visibility, { offset, limit: perPage }, now),
      this.store.tenants.count(search, visibility, now),
    ]);
    const results = tenants.map((tenant) => {
      const held = new Set([...rolesIn(principal, scopeOf(tenant), now)].map(roleName));
      return { tenant, roles: SCOPE_NAMES.filter((n) => held.has(n)) };
    });
    return { results, totalCount };
  }

  /** When the expiry job disables the tenant (its expiry plus the grace days); null if it does not expire. */
  disablesAt(tenant: Pick<Tenant, 'expiresAt'>): Date | null {
    return tenant.expiresAt ? new Date(tenant.expiresAt.getTime() + this.settings.expiryGraceDays * DAY_MS) : null;
  }

  /** The tenant if the caller can see it; NOT_FOUND otherwise, the same for tenants that do not exist. */
  async visibleTenant(principal: Principal, id: string, field = 'tenantID'): Promise<Tenant> {
    checkTenantId(id, field);
    const tenant = await this.store.tenants.findTenant(id);
    if (!tenant || !reaches(principal, scopeOf(tenant), this.clock.now())) throw notFound('Tenant');
    return tenant;
  }

  async search(caller: Caller, input: TenantsQueryInput): Promise<TenantPage> {
    const now = this.clock.now();
    const q = parseTenantsQuery(input);
    const visibility = await this.visibility(caller.principal);
    let hierarchyPaths: string[] | undefined;
    if (q.hierarchyIds) hierarchyPaths = (await this.store.tenants.findScopes(q.hierarchyIds)).map((s) => s.path);
    const search = { ...q.search, ...(hierarchyPaths ? { hierarchyPaths } : {}) };

    let rows: Tenant[];
    let totalCount: number | null = null;
    if (q.cursor !== undefined) {
      const after = decodeCursor(q.cursor, search.orderBy, search.orderDir);
      rows = await this.store.tenants.search(search, visibility, { after, limit: q.limit + 1 }, now);
    } else if (q.page !== undefined) {
      // page mode: an offset, and the total that only counting every match can give
      [rows, totalCount] = await Promise.all([
        this.store.tenants.search(search, visibility, { offset: (q.page - 1) * q.limit, limit: q.limit + 1 }, now),
        this.store.tenants.count(search, visibility, now),
      ]);
    } else {
      // neither: the first page of a cursor walk, which costs what every later page costs
      rows = await this.store.tenants.search(search, visibility, { limit: q.limit + 1 }, now);
    }
    const results = rows.slice(0, q.limit);
    const last = results[results.length - 1];
    return {
      results,
      cursorPos: last
        ? encodeCursor({ orderBy: search.orderBy, orderDir: search.orderDir, value: orderValue(last, search.orderBy), id: last.id })
        : (q.cursor ?? null),
      count: results.length,
      hasMore: rows.length > q.limit,
      totalCount,
    };
  }

  async create(caller: Caller, input: TenantCreateInput): Promise<Tenant> {
    const now = this.clock.now();
    const { principal } = caller;
    const parentId = checkTenantId(input.partnerTenantID, 'partnerTenantID');
    const parent = await this.store.tenants.findTenant(parentId);
    if (!parent || !reaches(principal, scopeOf(parent), now)) throw notFound('Partner tenant');
    assertCan(principal, scopeOf(parent), 'tenants.create', now);
    if (!parent.isPartner) throw badInput(`tenant ${parent.id} is not a partner; tenants are created under partners`, { field: 'partnerTenantID' });
    if (input.isPartner) assertCan(principal, scopeOf(parent), 'tenants.createPartner', now);

    const { name, normalized } = normalizeTenantName(input.name);
    atMost(input.environments, MAX_ENVIRONMENT_ENTRIES, 'environments');
    if (input.environments && input.environments.length === 0) {
      throw badInput('environments: a new tenant is enabled in at least one environment (omit it for echo)', { field: 'environments' });
    }
    const envNames = [...new Set((input.environments ?? [DEFAULT_ENVIRONMENT]).map((e) => checkEnvironmentName(e)))];
    const domain = input.domain ? checkDomain(input.domain) : null;
    const description = checkFreeText(input.description, 'description');
    const actionsApprover = checkLine(input.actions_approver, 'actions_approver', TEXT_LIMITS.email);
    atMost(input.labels, MAX_LABELS_AT_CREATION, 'labels', ' at creation (add more with createTenantLabel)');

    // Labels given at creation are owned by the parent partner or a partner above it, in whose
    // name the caller must be allowed to label.
    const labels: (ReturnType<typeof checkLabel> & { ownerId: string })[] = [];
    for (const l of input.labels ?? []) {
      const label = checkLabel(l);
      const ownerId = l.owner_partner_tenant_id ? checkTenantId(l.owner_partner_tenant_id, 'labels.owner_partner_tenant_id') : parent.id;
      if (!parent.path.split('.').includes(ownerId)) {
        throw badInput('labels.owner_partner_tenant_id must be the parent partner or a partner above it', { field: 'labels' });
      }
      const owner = ownerId === parent.id ? parent : await this.store.tenants.findTenant(ownerId);
      if (!owner?.isPartner) throw badInput(`labels.owner_partner_tenant_id ${ownerId} is not a partner`, { field: 'labels' });
      assertCan(principal, scopeOf(owner), 'labels.write', now);
      labels.push({ ...label, ownerId });
    }

    return this.store.transaction(async (tx) => {
      const tenant = await tx.tenants.insertTenant({
        parentId: parent.id,
        parentPath: parent.path,
        name,
        nameNormalized: normalized,
        isPartner: input.isPartner ?? false,
        domain: domain?.domain ?? null,
        domainNormalized: domain?.normalized ?? null,
        description,
        allowResponseActions: input.allow_response_actions ?? false,
        actionsApprover,
        createdAt: now,
      });
      await tx.tenants.setEnvironments(tenant.id, new Map(envNames.map((e) => [e, true])), now);
      try {
        await tx.labels.insertLabels(
          labels.map((l) => ({
            id: randomUUID(),
            tenantId: tenant.id,
            name: l.name,
            nameNormalized: l.normalized,
            value: l.value,
            ownerPartnerTenantId: l.ownerId,
            restricted: false,
            createdAt: now,
          })),
        );
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.key === 'label.name')
          throw badInput('labels: the same label name is given twice', { field: 'labels' });
        throw err;
      }
      await tx.audit.insertEvent(
        principalEvent(
          principal,
          now,
          tenant.id,
          'tenant.created',
          { kind: 'tenant', id: tenant.id },
          {
            parent: parent.id,
            name,
            is_partner: tenant.isPartner,
            environments: envNames,
          },
        ),
      );
      return tenant;
    });
  }

  async update(caller: Caller, tenantID: string, input: TenantUpdateInput): Promise<Tenant> {
    const now = this.clock.now();
    const { principal } = caller;
    const tenant = await this.visibleTenant(principal, tenantID);
    const scope = scopeOf(tenant);

    const edits: TenantPatch = { updatedAt: now };
    const editing =
      input.name != null ||
      input.domain !== undefined ||
      input.description !== undefined ||
      input.allow_response_actions != null ||
      input.actions_approver !== undefined;
    if (input.name != null) {
      const n = normalizeTenantName(input.name);
      edits.name = n.name;
      edits.nameNormalized = n.normalized;
    }
    if (input.domain !== undefined) {
      const d = input.domain === null || input.domain === '' ? null : checkDomain(input.domain);
      edits.domain = d?.domain ?? null;
      edits.domainNormalized = d?.normalized ?? null;
    }
    if (input.description !== undefined) edits.description = checkFreeText(input.description, 'description');
    if (input.allow_response_actions != null) edits.allowResponseActions = input.allow_response_actions;
    if (input.actions_approver !== undefined) edits.actionsApprover = checkLine(input.actions_approver, 'actions_approver', TEXT_LIMITS.email);

    atMost(input.environments, MAX_ENVIRONMENT_ENTRIES, 'environments');
    const changes = (input.environments ?? []).map((e) => ({ name: checkEnvironmentName(e.name, 'environments.name'), enabled: e.enabled }));
    const managing = changes.length > 0 || input.disable === true || input.expiresAt != null || input.clearExpiration === true;
    if (input.expiresAt != null && input.clearExpiration) {
      throw badInput('expiresAt and clearExpiration cannot be combined', { field: 'clearExpiration' });
    }
    if (tenant.id === ROOT_TENANT_ID && (input.expiresAt != null || input.disable)) {
      throw badInput('the vendor tenant cannot expire or be disabled', { field: 'tenantUpdate' });
    }

    // Name and profile: the tenant's own Administrators may. Environments, disabling and expiry:
    // only its partners above it (checked in the parent), so a tenant cannot lift its own limits.
    if (editing) assertCan(principal, scope, 'tenants.edit', now);
    if (managing) {
      const managerScope = tenant.parentId === null ? scope : await this.store.tenants.findScope(tenant.parentId);
      if (!managerScope) throw notFound('Tenant');
      assertCan(principal, managerScope, 'tenants.manage', now);
    }
    if (!editing && !managing) return tenant;

    return this.store.transaction(async (tx) => {
      const locked = await tx.tenants.lockTenant(tenant.id);
      if (!locked) throw notFound('Tenant');
      const patch: TenantPatch = { ...edits };
      let envs: Map<string, boolean> | undefined;
      let envsChanged = false;
      if (changes.length > 0 || input.disable) {
        const current = new Map((await tx.tenants.environments([tenant.id])).map((e) => [e.name, e.enabled]));
        envs = applyEnvironmentChanges(current, changes, input.disable === true);
        envsChanged = [...envs].some(([name, enabled]) => current.get(name) !== enabled);
        const active = isActive(envs);
        if (tenant.id === ROOT_TENANT_ID && !active) throw badInput('the vendor tenant cannot be disabled', { field: 'environments' });
        patch.enabled = active;
        // disabling cuts access: tokens issued until now stay void even if it is enabled again
        if (locked.enabled && !active) patch.tokensValidAfter = now;
        const expiresAt = input.clearExpiration ? null : (input.expiresAt ?? locked.expiresAt);
        if (active && !locked.enabled && expiresAt && expiresAt.getTime() + this.settings.expiryGraceDays * DAY_MS < now.getTime()) {
          throw badInput('the tenant expired; set a later expiresAt or clearExpiration in the same request to enable it again', {
            field: 'environments',
          });
        }
      }
      if (input.expiresAt != null) patch.expiresAt = input.expiresAt;
      if (input.clearExpiration) patch.expiresAt = null;
      // a request that only restates the current state is a no-op: updated_at stays, no audit event
      const same = (a: unknown, b: unknown) => (a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b);
      const compared = (Object.keys(patch) as (keyof TenantPatch)[]).filter(
        (k): k is keyof TenantPatch & keyof Tenant => k !== 'updatedAt' && k !== 'tokensValidAfter',
      );
      const changed = envsChanged || compared.some((k) => !same(patch[k], locked[k]));
      if (!changed) return locked;
      if (envs) await tx.tenants.setEnvironments(tenant.id, envs, now);
      await tx.tenants.updateTenant(tenant.id, patch);
      await tx.audit.insertEvent(
        principalEvent(
          principal,
          now,
          tenant.id,
          'tenant.updated',
          { kind: 'tenant', id: tenant.id },
          {
            ...(patch.name ? { name: patch.name } : {}),
            ...(envs ? { environments: Object.fromEntries(envs), enabled: patch.enabled } : {}),
            ...(patch.expiresAt !== undefined ? { expires_at: patch.expiresAt?.toISOString() ?? null } : {}),
          },
        ),
      );
      return (await tx.tenants.findTenant(tenant.id))!;
    });
  }

  async setSupport(caller: Caller, tenantID: string, enable: boolean, opts: { until?: Date | null; reason?: string | null } = {}): Promise<Tenant> {
    const now = this.clock.now();
    const { principal } = caller;
    const tenant = await this.visibleTenant(principal, tenantID);
    assertCan(principal, scopeOf(tenant), 'tenants.support', now);
    if (enable && opts.until) {
      if (opts.until <= now) throw badInput('until must be in the future', { field: 'until' });
      if (opts.until.getTime() - now.getTime() > MAX_SUPPORT_DAYS * DAY_MS) {
        throw badInput(`until must be within ${MAX_SUPPORT_DAYS} days`, { field: 'until' });
      }
    }
    const reason = checkFreeText(opts.reason, 'reason', TEXT_LIMITS.reason);
    const supportExpiresAt = enable ? (opts.until ?? null) : null;
    const supportReason = enable ? reason : null;
    return this.store.transaction(async (tx) => {
      const locked = await tx.tenants.lockTenant(tenant.id);
      if (!locked) throw notFound('Tenant');
      // asking for the state the tenant is in changes nothing (like updateTenant)
      if (
        locked.supportEnabled === enable &&
        (locked.supportExpiresAt?.getTime() ?? null) === (supportExpiresAt?.getTime() ?? null) &&
        locked.supportReason === supportReason
      ) {
        return locked;
      }
      await tx.tenants.updateTenant(tenant.id, { supportEnabled: enable, supportExpiresAt, supportReason, updatedAt: now });
      const action = enable ? 'tenant.support_enabled' : 'tenant.support_disabled';
      const details = enable ? { until: opts.until?.toISOString() ?? null, reason } : {};
      await tx.audit.insertEvent(principalEvent(principal, now, tenant.id, action, { kind: 'tenant', id: tenant.id }, details));
      return (await tx.tenants.findTenant(tenant.id))!;
    });
  }
}
