// The store's half of a proven address (users/email-proof.ts says when one is): the account is
// marked proven (the partial unique index refuses a second), and every other account with the
// address that nobody proved gives way: its set-up link stops, its sessions and tokens end.
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import { rethrowUnique } from './errors.js';
import type { Database } from './schema.js';

/**
 * The accounts of one address that have not given way, its sign-in account first (docs/users.md
 * "Which account an address signs in"): the one that proved it, else the oldest. `users`: the
 * alias of the users table in the query. The one statement of that rule, for every store that
 * looks an address up (users.ts, signin.ts).
 */
export function signInAccountFirst<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  users: 'users' | 'u',
): SelectQueryBuilder<DB, TB, O> {
  return qb
    .where(sql.ref(`${users}.email_superseded_at`), 'is', null)
    .orderBy(sql`${sql.ref(`${users}.email_verified_at`)} is null`)
    .orderBy(sql.ref(`${users}.created_at`))
    .orderBy(sql.ref(`${users}.id`));
}

/** No new address waiting: set wherever the person's hold on the account is in doubt (a reset, a
 *  disabling, an account that gave way), so a link asked for before cannot be followed after. */
export const NO_PENDING_EMAIL = {
  pending_email: null,
  pending_email_token_hash: null,
  pending_email_expires_at: null,
  pending_email_mailed: false,
} as const;

export async function proveAddress(db: Kysely<Database>, userId: string, key: string, at: Date): Promise<{ id: string; tenantId: string }[]> {
  // only the account as the caller saw it: its address still `key`, not given way meanwhile
  const proven = await db
    .updateTable('users')
    .set({ email_verified_at: sql<Date>`coalesce(email_verified_at, ${at})` })
    .where('id', '=', userId)
    .where('email_normalized', '=', key)
    .where('email_superseded_at', 'is', null)
    .executeTakeFirst()
    .catch(rethrowUnique);
  if (proven.numUpdatedRows === 0n) return [];
  const rows = await db
    .updateTable('users')
    .set({ email_superseded_at: at, tokens_valid_after: at, updated_at: at, ...NO_PENDING_EMAIL })
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
