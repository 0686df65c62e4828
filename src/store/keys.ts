// KeyStore on Kysely (both engines).
import { sql, type Kysely } from 'kysely';
import type { KeyStore } from '../keys/store.js';
import type { Database } from './schema.js';

export function keyStore(db: Kysely<Database>): KeyStore {
  return {
    async listKeys() {
      const rows = await db.selectFrom('signing_keys').selectAll().orderBy('created_at').execute();
      return rows.map((r) => ({
        kid: r.kid,
        alg: r.alg,
        publicJwk: r.public_jwk,
        privateJwkSealed: r.private_jwk_sealed,
        createdAt: r.created_at,
        retiredAt: r.retired_at,
      }));
    },
    async insertKey(k) {
      await db
        .insertInto('signing_keys')
        .values({
          kid: k.kid,
          alg: k.alg,
          public_jwk: JSON.stringify(k.publicJwk),
          private_jwk_sealed: k.privateJwkSealed,
          created_at: k.createdAt,
          retired_at: k.retiredAt,
        })
        .execute();
    },
    async updateSealedKey(kid, privateJwkSealed) {
      await db.updateTable('signing_keys').set({ private_jwk_sealed: privateJwkSealed }).where('kid', '=', kid).execute();
    },
    async lockKeys() {
      // transaction-scoped advisory lock; the number is this table's fixed lock id
      await sql`select pg_advisory_xact_lock(7243001)`.execute(db);
    },
  };
}
