// Role assignments are shared by clients and users; both stores write them through here.
import type { Kysely } from 'kysely';
import type { RoleAssignment } from '../access/principal.js';
import type { Database } from './schema.js';

export type NewRoleAssignment = RoleAssignment & { principalId: string; createdAt: Date };

export async function insertRoleAssignments(db: Kysely<Database>, kind: 'client' | 'user', assignments: NewRoleAssignment[]): Promise<void> {
  if (assignments.length === 0) return;
  await db
    .insertInto('role_assignments')
    .values(
      assignments.map((a) => ({
        id: a.id,
        tenant_id: a.tenantId,
        principal_kind: kind,
        principal_id: a.principalId,
        role_id: a.roleId,
        expires_at: a.expiresAt,
        created_at: a.createdAt,
      })),
    )
    .execute();
}
