// PrincipalStore on Kysely: one round trip for the principal, one for its roles.
import type { Kysely } from 'kysely';
import type { Principal, RoleAssignment } from '../access/principal.js';
import type { PrincipalStore } from '../access/store.js';
import type { Database } from './schema.js';

export function principalStore(db: Kysely<Database>): PrincipalStore {
  async function assignments(kind: 'client' | 'user', principalId: string): Promise<RoleAssignment[]> {
    const rows = await db
      .selectFrom('role_assignments')
      .select(['id', 'tenant_id', 'role_id', 'expires_at'])
      .where('principal_kind', '=', kind)
      .where('principal_id', '=', principalId)
      .execute();
    return rows.map((r) => ({ id: r.id, tenantId: String(r.tenant_id), roleId: r.role_id, expiresAt: r.expires_at }));
  }

  return {
    findAssignments: assignments,

    async findClientPrincipal(clientUuid, secretId) {
      const row = await db
        .selectFrom('clients as c')
        .innerJoin('client_secrets as s', 's.client_id', 'c.id')
        .innerJoin('tenants as t', 't.id', 'c.tenant_id')
        .select(['c.id', 'c.tenant_id', 'c.client_id', 't.tokens_valid_after'])
        .where('c.id', '=', clientUuid)
        .where('s.id', '=', secretId)
        .where('c.revoked_at', 'is', null)
        .where('s.revoked_at', 'is', null)
        // the tokens of a disabled tenant's principals stop working with it
        .where('t.enabled', '=', true)
        .executeTakeFirst();
      if (!row) return undefined;
      const principal: Principal = {
        kind: 'client',
        id: row.id,
        tenantId: String(row.tenant_id),
        clientId: row.client_id,
        secretId,
        assignments: await assignments('client', row.id),
        tokensValidAfter: row.tokens_valid_after,
      };
      return principal;
    },

    async findUserPrincipal(userId) {
      const row = await db
        .selectFrom('users as u')
        .innerJoin('tenants as t', 't.id', 'u.tenant_id')
        .select(['u.id', 'u.tenant_id', 't.tokens_valid_after', 'u.tokens_valid_after as user_tokens_valid_after'])
        .where('u.id', '=', userId)
        .where('u.disabled_at', 'is', null)
        // an account that gave way to one that proved its address acts no more (docs/users.md)
        .where('u.email_superseded_at', 'is', null)
        .where('t.enabled', '=', true)
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        kind: 'user',
        id: row.id,
        tenantId: String(row.tenant_id),
        assignments: await assignments('user', row.id),
        // the later of the two cuts: the tenant's (disabled) and the user's own (disabled, reset)
        tokensValidAfter: latest(row.tokens_valid_after, row.user_tokens_valid_after),
      };
    },
  };
}

function latest(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}
