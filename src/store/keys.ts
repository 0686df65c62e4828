// KeyStore on Kysely (both engines).
import { sql, type Kysely } from 'kysely';
import type { KeyStore } from '../keys/store.js';
import type { Database } from './schema.js';

export function keyStore(db: Kysely<Database>): KeyStore {
  return {
    async listKeys() {
      const rows = await db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
      return rows.map((r) => ({
        kid: r.kid,
        alg: r.alg,
        publicJwk: r.public_jwk,
        privateJwkSealed: r.private_jwk_sealed,
        createdAt: r.created_at,
        signsFrom: r.signs_from,
        signsUntil: r.signs_until,
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
          signs_from: k.signsFrom,
          signs_until: k.signsUntil,
          retired_at: k.retiredAt,
        })
        .execute();
    },
    async updateSealedKey(kid, privateJwkSealed) {
      await db.updateTable('signing_keys').set({ private_jwk_sealed: privateJwkSealed }).where('kid', '=', kid).execute();
    },
    async updateKeyTimes(kid, change) {
      const set = {
        ...(change.signsFrom !== undefined ? { signs_from: change.signsFrom } : {}),
        ...(change.signsUntil !== undefined ? { signs_until: change.signsUntil } : {}),
        ...(change.retiredAt !== undefined ? { retired_at: change.retiredAt } : {}),
      };
      if (Object.keys(set).length === 0) return;
      await db.updateTable('signing_keys').set(set).where('kid', '=', kid).execute();
    },
    async lockKeys() {
      // transaction-scoped advisory lock; the number is this table's fixed lock id
      await sql`select pg_advisory_xact_lock(7243001)`.execute(db);
    },
  };
}
