// The credential listings (the `clients` query) are cached like the reads of authentication, so
// every write to a client or its secrets must now reach other processes: a new client, a rename,
// a secret's last use. The triggers of 20261126T0900-auth-changes on those two tables are
// replaced by ones that fire on any insert, update or delete (src/store/auth-changes.ts holds
// the same list; test/store/auth-changes.test.ts keeps them equal). Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const listingChanges: Migration = {
  async up(db: Kysely<unknown>) {
    for (const table of ['clients', 'client_secrets']) {
      await sql.raw(`drop trigger ${table}_auth_change on ${table}`).execute(db);
      await sql
        .raw(
          `create trigger ${table}_auth_change after insert or update or delete on ${table} for each statement execute function gatehouse_notify_auth_change()`,
        )
        .execute(db);
    }
  },
};
