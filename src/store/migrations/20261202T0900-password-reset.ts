// Self-service password reset (docs/users.md "Forgotten password"): the pending reset link of an
// account, known only by the digest of its token (crypto/opaque-token.ts), with its end. One per
// account: a newer request replaces it; it is cleared when used and whenever the password changes
// any other way (a change on the account page, a set-up link, an administrator's reset), and when
// the address changes. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const passwordReset: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      alter table users
        add column reset_token_hash bytea,
        add column reset_expires_at timestamptz`.execute(db);
    await sql`create unique index users_reset_token_uq on users (reset_token_hash) where reset_token_hash is not null`.execute(db);
  },
};
