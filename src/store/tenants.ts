// TenantStore on Kysely (both engines).
import { sql, type Kysely } from 'kysely';
import type { TenantScope } from '../access/principal.js';
import type { TenantStore } from '../tenants/store.js';
import type { Database } from './schema.js';

const scopeColumns = ['id', 'path', 'support_enabled', 'support_expires_at'] as const;

function toScope(r: { id: string; path: string; support_enabled: boolean; support_expires_at: Date | null }): TenantScope {
  return { id: String(r.id), path: r.path, supportEnabled: r.support_enabled, supportExpiresAt: r.support_expires_at };
}

export function tenantStore(db: Kysely<Database>): TenantStore {
  return {
    async findScope(id) {
      const row = await db.selectFrom('tenants').select(scopeColumns).where('id', '=', id).executeTakeFirst();
      return row ? toScope(row) : undefined;
    },
    async findScopes(ids) {
      if (ids.length === 0) return [];
      const rows = await db.selectFrom('tenants').select(scopeColumns).where('id', 'in', ids).execute();
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
          name_normalized: root.name.normalize('NFKC').toLowerCase().trim(),
          is_partner: true,
          created_at: root.createdAt,
          updated_at: root.createdAt,
        })
        .execute();
    },
  };
}
