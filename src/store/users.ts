// UserStore on Kysely (both engines).
import type { Kysely } from 'kysely';
import type { UserStore } from '../users/store.js';
import { insertRoleAssignments } from './role-assignments.js';
import type { Database } from './schema.js';

export function userStore(db: Kysely<Database>): UserStore {
  return {
    async insertUser(u) {
      await db
        .insertInto('users')
        .values({
          id: u.id,
          tenant_id: u.tenantId,
          email: u.email,
          email_normalized: u.emailNormalized,
          password_hash: u.passwordHash,
          created_at: u.createdAt,
          updated_at: u.createdAt,
        })
        .execute();
    },
    insertRoleAssignments: (assignments) => insertRoleAssignments(db, 'user', assignments),
  };
}
