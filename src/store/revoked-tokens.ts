// RevokedTokenStore on Kysely: one row per revoked token id, until the token's expiry.
import type { Kysely } from 'kysely';
import type { RevokedTokenStore } from '../oauth/revocation-store.js';
import type { Database } from './schema.js';

export function revokedTokenStore(db: Kysely<Database>): RevokedTokenStore {
  return {
    async revokeToken(jti, tenantId, expiresAt) {
      await db
        .insertInto('revoked_tokens')
        .values({ jti, tenant_id: tenantId, expires_at: expiresAt })
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
    },

    async findRevocation(jti) {
      const row = await db.selectFrom('revoked_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
      return { revoked: row !== undefined };
    },

    async deleteExpiredRevocations(before) {
      // the table's change trigger fires for a DELETE that deletes nothing too, and would drop
      // every process's authentication caches at each purge: look first
      const due = await db.selectFrom('revoked_tokens').select('jti').where('expires_at', '<', before).limit(1).executeTakeFirst();
      if (!due) return 0;
      const result = await db.deleteFrom('revoked_tokens').where('expires_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
