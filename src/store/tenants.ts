// TenantStore on Kysely (both engines): tenants, their hierarchy and environments. The search
// and its visibility rule are planned in tenant-search.ts.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Environment } from '../tenants/model.js';
import type { TenantStore } from '../tenants/store.js';
import type { Database } from './schema.js';
import { columns, toScope, toTenant } from './tenant-rows.js';
import { countTenants, foldSubtreeSizes, searchTenants, visibleChildren } from './tenant-search.js';

export function tenantStore(db: Kysely<Database>): TenantStore {
  const store: TenantStore = {
    async findScope(id) {
      const row = await db
        .selectFrom('tenants')
        .select(['id', 'path', 'support_enabled', 'support_expires_at'])
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toScope(row) : undefined;
    },

    async findScopes(ids) {
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('tenants').select(['id', 'path', 'support_enabled', 'support_expires_at']).where('id', 'in', ids).execute();
      return rows.map(toScope);
    },

    async lockBootstrap() {
      await sql`select pg_advisory_xact_lock(7243002)`.execute(db);
    },

    async rootExists() {
      const row = await db.selectFrom('tenants').select('id').where('id', '=', '1').executeTakeFirst();
      return row !== undefined;
    },

    async insertRoot(root) {
      await db
        .insertInto('tenants')
        .values({
          id: '1',
          parent_id: null,
          path: '1.',
          depth: 0,
          name: root.name,
          name_normalized: root.nameNormalized,
          is_partner: true,
          created_at: root.createdAt,
          updated_at: root.createdAt,
        })
        .execute();
      await store.setEnvironments('1', new Map(root.environments.map((e) => [e, true])), root.createdAt);
    },

    async findTenant(id) {
      const row = await db.selectFrom('tenants').select(columns).where('id', '=', id).executeTakeFirst();
      return row ? toTenant(row) : undefined;
    },

    async lockTenant(id) {
      const row = await db.selectFrom('tenants').select(columns).where('id', '=', id).forUpdate().executeTakeFirst();
      return row ? toTenant(row) : undefined;
    },

    async insertTenant(t) {
      // the id first, so that the row is written once, complete: an update of its path would
      // count as a change to the authentication caches (store/auth-changes.ts) and rebuild its closure rows
      const { rows } = await sql<{ id: string }>`select nextval(pg_get_serial_sequence('tenants', 'id'))::text as id`.execute(db);
      const id = rows[0]!.id;
      const row = await db
        .insertInto('tenants')
        .values({
          id,
          parent_id: t.parentId,
          path: `${t.parentPath}${id}.`,
          depth: t.parentPath.split('.').filter(Boolean).length,
          name: t.name,
          name_normalized: t.nameNormalized,
          is_partner: t.isPartner,
          domain: t.domain,
          domain_normalized: t.domainNormalized,
          description: t.description,
          allow_response_actions: t.allowResponseActions,
          actions_approver: t.actionsApprover,
          created_at: t.createdAt,
          updated_at: t.createdAt,
        })
        .returning(columns)
        .executeTakeFirstOrThrow();
      return toTenant(row);
    },

    async updateTenant(id, p) {
      await db
        .updateTable('tenants')
        .set({
          ...(p.name !== undefined ? { name: p.name, name_normalized: p.nameNormalized! } : {}),
          ...(p.domain !== undefined ? { domain: p.domain, domain_normalized: p.domainNormalized ?? null } : {}),
          ...(p.description !== undefined ? { description: p.description } : {}),
          ...(p.allowResponseActions !== undefined ? { allow_response_actions: p.allowResponseActions } : {}),
          ...(p.actionsApprover !== undefined ? { actions_approver: p.actionsApprover } : {}),
          ...(p.expiresAt !== undefined ? { expires_at: p.expiresAt } : {}),
          ...(p.enabled !== undefined ? { enabled: p.enabled } : {}),
          ...(p.supportEnabled !== undefined ? { support_enabled: p.supportEnabled } : {}),
          ...(p.supportExpiresAt !== undefined ? { support_expires_at: p.supportExpiresAt } : {}),
          ...(p.tokensValidAfter !== undefined ? { tokens_valid_after: p.tokensValidAfter } : {}),
          ...(p.supportReason !== undefined ? { support_reason: p.supportReason } : {}),
          updated_at: p.updatedAt,
        })
        .where('id', '=', id)
        .execute();
    },

    async environments(tenantIds) {
      if (tenantIds.length === 0) return [];
      const rows = await db
        .selectFrom('tenant_environments')
        .selectAll()
        .where('tenant_id', 'in', tenantIds)
        .orderBy('tenant_id')
        .orderBy('name')
        .execute();
      return rows.map(
        (r): Environment => ({
          id: r.id,
          tenantId: String(r.tenant_id),
          name: r.name,
          enabled: r.enabled,
          createdAt: r.created_at,
          updatedAt: r.updated_at,
        }),
      );
    },

    async setEnvironments(tenantId, envs, at) {
      if (envs.size === 0) return;
      await db
        .insertInto('tenant_environments')
        .values([...envs].map(([name, enabled]) => ({ id: randomUUID(), tenant_id: tenantId, name, enabled, created_at: at, updated_at: at })))
        .onConflict((oc) =>
          oc.columns(['tenant_id', 'name']).doUpdateSet({
            enabled: (eb) => eb.ref('excluded.enabled'),
            // updated_at moves only when the flag changes
            updated_at: (eb) =>
              eb
                .case()
                .when('tenant_environments.enabled', '=', eb.ref('excluded.enabled'))
                .then(eb.ref('tenant_environments.updated_at'))
                .else(eb.ref('excluded.updated_at'))
                .end(),
          }),
        )
        .execute();
    },

    childTenants: (parentIds, visibility, now, limit) => visibleChildren(db, parentIds, visibility, now, limit),

    search: (s, visibility, window, now) => searchTenants(db, s, visibility, window, now),

    count: (s, visibility, now) => countTenants(db, s, visibility, now),
    foldSubtreeSizes: () => foldSubtreeSizes(db),

    async lockExpired(cutoff, limit) {
      const rows = await db
        .selectFrom('tenants')
        .select(columns)
        .where('tenants.enabled', '=', true)
        .where('tenants.expires_at', '<', cutoff)
        .orderBy('tenants.expires_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      return rows.map(toTenant);
    },
  };
  return store;
}
