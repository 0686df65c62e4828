// Re-enabling a tenant must not revive the tokens its principals held before it was disabled:
// the instant access was cut is kept, and tokens issued before it stay refused. Tenants disabled
// today get the migration's time, so their old tokens stay dead too. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const tokensValidAfter: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table tenants add column tokens_valid_after timestamptz`.execute(db);
    await sql`update tenants set tokens_valid_after = statement_timestamp() where not enabled`.execute(db);
  },
};
