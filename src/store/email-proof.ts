// The store's half of a proven address (users/email-proof.ts says when one is): the account is
// marked proven (the partial unique index refuses a second), and every other account with the
// address that nobody proved gives way: its set-up link stops, its sessions and tokens end.
import type { Kysely } from 'kysely';
import { rethrowUnique } from './errors.js';
import type { Database } from './schema.js';

export async function proveAddress(db: Kysely<Database>, userId: string, key: string, at: Date): Promise<{ id: string; tenantId: string }[]> {
  await db
    .updateTable('users')
    .set({ email_verified_at: at })
    .where('id', '=', userId)
    .where('email_verified_at', 'is', null)
    .execute()
    .catch(rethrowUnique);
  const rows = await db
    .updateTable('users')
    .set({ email_superseded_at: at, tokens_valid_after: at, updated_at: at })
    .where('email_normalized', '=', key)
    .where('id', '<>', userId)
    .where('email_verified_at', 'is', null)
    .where('email_superseded_at', 'is', null)
    .returning(['id', 'tenant_id'])
    .execute();
  if (rows.length > 0) {
    await db
      .deleteFrom('sessions')
      .where(
        'user_id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
  }
  return rows.map((r) => ({ id: r.id, tenantId: String(r.tenant_id) }));
}
