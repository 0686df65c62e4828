// PasskeyStore on Kysely (both engines): a person's WebAuthn credentials.
import { type Kysely, sql } from 'kysely';
import type { Passkey, PasskeyStore } from '../signin/store.js';
import type { Database, PasskeysTable } from './schema.js';

type Row = { [K in keyof PasskeysTable]: PasskeysTable[K] extends { __select__: infer S } ? S : PasskeysTable[K] };

const toPasskey = (r: Row): Passkey => ({
  id: r.id,
  userId: r.user_id,
  credentialId: r.credential_id,
  publicKey: Buffer.from(r.public_key),
  // int8: a number from PGlite, a string from pg
  counter: Number(r.counter),
  transports: r.transports === '' ? [] : r.transports.split(','),
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export function passkeyStore(db: Kysely<Database>): PasskeyStore {
  return {
    async listPasskeys(userId) {
      const rows = await db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toPasskey);
    },

    async findPasskeyByCredentialId(credentialId) {
      const row = await db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
      return row && toPasskey(row);
    },

    async insertPasskey(p) {
      const r = await db
        .insertInto('passkeys')
        .values({
          id: p.id,
          user_id: p.userId,
          credential_id: p.credentialId,
          public_key: p.publicKey,
          counter: String(p.counter),
          transports: p.transports.join(','),
          name: p.name,
          created_at: p.createdAt,
          last_used_at: p.lastUsedAt,
        })
        .onConflict((oc) => oc.column('credential_id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return r !== undefined;
    },

    async deletePasskey(userId, id) {
      const row = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
      return row && toPasskey(row);
    },

    async recordPasskeyUse(id, counter, at) {
      const r = await db
        .updateTable('passkeys')
        .set({ counter: String(counter), last_used_at: at })
        .where('id', '=', id)
        // WebAuthn §7.2 step 21: a counter that does not increase (unless both are 0) is refused
        .where((eb) => eb.or([eb('counter', '<', String(counter)), eb.and([eb('counter', '=', '0'), sql<boolean>`${String(counter)}::bigint = 0`])]))
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
  };
}
