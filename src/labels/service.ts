// Label use cases. A label is owned by a partner at or above the tenant; creating one acts in
// the name of the caller's acting tenant (X-Tenant-Context, else its home tenant), or of the
// partner named by owner_partner_tenant_id. Changing or deleting needs the same authority over
// the owner; restricted labels answer RESTRICTED to everyone.
import { randomUUID } from 'node:crypto';
import { assertCan, reaches } from '../access/policy.js';
import type { Caller } from '../access/principal.js';
import { ROOT_TENANT_ID } from '../access/roles.js';
import { principalEvent } from '../audit/model.js';
import type { Clock } from '../clock.js';
import { AppError, badInput, conflict, DuplicateKeyError, notFound } from '../errors.js';
import type { Transactional } from '../transaction.js';
import { checkTenantId, scopeOf, type TenantVisibility } from '../tenants/model.js';
import { checkLabel, type TenantLabel } from './model.js';
import type { AuditStore } from '../audit/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { LabelStore } from './store.js';
import { checkUuid } from '../ids.js';

/** Everything the label use cases read and write. */
export interface LabelStores {
  labels: LabelStore;
  tenants: Pick<TenantStore, 'findTenant' | 'findScope' | 'updateTenant'>;
  audit: AuditStore;
}

export interface LabelInput {
  name: string;
  value?: string | null;
  owner_partner_tenant_id?: string | null;
  restricted?: boolean | null;
}

const restricted = (label: TenantLabel) =>
  new AppError('RESTRICTED', `label "${label.name}" is restricted: it cannot be modified or deleted`, { labelId: label.id });

export class LabelService {
  constructor(
    private readonly store: Transactional<LabelStores>,
    private readonly clock: Clock,
    private readonly tenants: TenantVisibility,
  ) {}

  async create(caller: Caller, tenantId: string, input: LabelInput): Promise<TenantLabel> {
    const now = this.clock.now();
    const { principal } = caller;
    const tenant = await this.tenants.visibleTenant(principal, tenantId, 'tenant_id');
    const ownerId = input.owner_partner_tenant_id ? checkTenantId(input.owner_partner_tenant_id, 'owner_partner_tenant_id') : caller.tenant.id;
    const owner = ownerId === tenant.id ? tenant : await this.store.tenants.findTenant(ownerId);
    if (!owner || !reaches(principal, scopeOf(owner), now)) throw notFound('Owner partner tenant');
    if (!owner.isPartner) {
      throw badInput(`labels are owned by partners; tenant ${owner.id} is not one (act in a partner's context or name owner_partner_tenant_id)`, {
        field: 'owner_partner_tenant_id',
      });
    }
    if (!tenant.path.startsWith(owner.path)) {
      throw badInput(`tenant ${tenant.id} is not in the hierarchy of partner ${owner.id}`, { field: 'owner_partner_tenant_id' });
    }
    assertCan(principal, scopeOf(owner), 'labels.write', now);
    if (input.restricted) {
      const root = await this.store.tenants.findScope(ROOT_TENANT_ID);
      assertCan(principal, root!, 'labels.writeRestricted', now);
    }
    const label = checkLabel(input);
    const id = randomUUID();
    return this.store.transaction(async (tx) => {
      try {
        await tx.labels.insertLabels([
          {
            id,
            tenantId: tenant.id,
            name: label.name,
            nameNormalized: label.normalized,
            value: label.value,
            ownerPartnerTenantId: owner.id,
            restricted: input.restricted ?? false,
            createdAt: now,
          },
        ]);
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.key === 'label.name')
          throw conflict(`tenant ${tenant.id} already has a label "${label.name}" of this owner`);
        throw err;
      }
      // a label change is a change of the tenant (modifiedTimeFilter finds it)
      await tx.tenants.updateTenant(tenant.id, { updatedAt: now });
      await tx.audit.insertEvent(
        principalEvent(
          principal,
          now,
          tenant.id,
          'label.created',
          { kind: 'label', id },
          {
            name: label.name,
            owner: owner.id,
            restricted: input.restricted ?? false,
          },
        ),
      );
      return (await tx.labels.findLabel(id))!;
    });
  }

  async update(caller: Caller, labelId: string, input: LabelInput): Promise<TenantLabel> {
    return await this.change(caller, labelId, 'label.updated', async (tx, label, now) => {
      if (input.restricted != null && input.restricted !== label.restricted) {
        throw badInput('restricted is decided when a label is created', { field: 'restricted' });
      }
      if (input.owner_partner_tenant_id && input.owner_partner_tenant_id !== label.ownerPartnerTenantId) {
        throw badInput('a label keeps its owner; delete it and create another to change owners', { field: 'owner_partner_tenant_id' });
      }
      const next = checkLabel(input);
      try {
        await tx.labels.updateLabel(label.id, { name: next.name, nameNormalized: next.normalized, value: next.value, updatedAt: now });
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.key === 'label.name')
          throw conflict(`tenant ${label.tenantId} already has a label "${next.name}" of this owner`);
        throw err;
      }
      return (await tx.labels.findLabel(label.id))!;
    });
  }

  async delete(caller: Caller, labelId: string): Promise<TenantLabel> {
    return await this.change(caller, labelId, 'label.deleted', async (tx, label) => {
      await tx.labels.deleteLabel(label.id);
      return label;
    });
  }

  private async change(
    caller: Caller,
    labelId: string,
    action: string,
    apply: (tx: LabelStores, label: TenantLabel, now: Date) => Promise<TenantLabel>,
  ): Promise<TenantLabel> {
    const now = this.clock.now();
    const { principal } = caller;
    const id = checkUuid(labelId, 'label_id');
    const found = await this.store.labels.findLabel(id);
    // a label on a tenant the caller cannot see does not exist for it
    const on = found ? await this.store.tenants.findScope(found.tenantId) : undefined;
    if (!found || !on || !reaches(principal, on, now)) throw notFound('Label');
    const owner = await this.store.tenants.findScope(found.ownerPartnerTenantId);
    assertCan(principal, owner!, 'labels.write', now);
    if (found.restricted) throw restricted(found);
    return this.store.transaction(async (tx) => {
      const label = await tx.labels.findLabel(id, true);
      if (!label) throw notFound('Label');
      if (label.restricted) throw restricted(label);
      const result = await apply(tx, label, now);
      await tx.tenants.updateTenant(label.tenantId, { updatedAt: now });
      await tx.audit.insertEvent(
        principalEvent(
          principal,
          now,
          label.tenantId,
          action,
          { kind: 'label', id: label.id },
          {
            name: result.name,
            owner: label.ownerPartnerTenantId,
          },
        ),
      );
      return result;
    });
  }
}
