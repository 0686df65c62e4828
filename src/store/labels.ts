// LabelStore on Kysely (both engines).
import type { Kysely } from 'kysely';
import type { TenantLabel } from '../labels/model.js';
import type { LabelStore } from '../labels/store.js';
import { rethrowUnique } from './errors.js';
import type { Database } from './schema.js';

const toLabel = (r: {
  id: string;
  tenant_id: string;
  name: string;
  value: string | null;
  owner_partner_tenant_id: string;
  restricted: boolean;
  created_at: Date;
  updated_at: Date;
}): TenantLabel => ({
  id: r.id,
  tenantId: String(r.tenant_id),
  name: r.name,
  value: r.value,
  ownerPartnerTenantId: String(r.owner_partner_tenant_id),
  restricted: r.restricted,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const columns = ['id', 'tenant_id', 'name', 'value', 'owner_partner_tenant_id', 'restricted', 'created_at', 'updated_at'] as const;

export function labelStore(db: Kysely<Database>): LabelStore {
  return {
    async labelsFor(tenantIds) {
      if (tenantIds.length === 0) return [];
      const rows = await db
        .selectFrom('tenant_labels')
        .select(columns)
        .where('tenant_id', 'in', tenantIds)
        .orderBy('name_normalized')
        .orderBy('id')
        .execute();
      return rows.map(toLabel);
    },
    async findLabel(id, forUpdate = false) {
      let q = db.selectFrom('tenant_labels').select(columns).where('id', '=', id);
      if (forUpdate) q = q.forUpdate();
      const row = await q.executeTakeFirst();
      return row ? toLabel(row) : undefined;
    },
    async insertLabels(labels) {
      if (labels.length === 0) return;
      await db
        .insertInto('tenant_labels')
        .values(
          labels.map((l) => ({
            id: l.id,
            tenant_id: l.tenantId,
            name: l.name,
            name_normalized: l.nameNormalized,
            value: l.value,
            owner_partner_tenant_id: l.ownerPartnerTenantId,
            restricted: l.restricted,
            created_at: l.createdAt,
            updated_at: l.createdAt,
          })),
        )
        .execute()
        .catch(rethrowUnique);
    },
    async updateLabel(id, p) {
      await db
        .updateTable('tenant_labels')
        .set({ name: p.name, name_normalized: p.nameNormalized, value: p.value, updated_at: p.updatedAt })
        .where('id', '=', id)
        .execute()
        .catch(rethrowUnique);
    },
    async deleteLabel(id) {
      await db.deleteFrom('tenant_labels').where('id', '=', id).execute();
    },
  };
}
