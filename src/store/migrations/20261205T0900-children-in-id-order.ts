// A partner's children in id order from the index: `child_tenants` reads at most what is left of
// one answer's 1,000 (docs/graphql.md "Cost and budgets"), and with (parent_id, id) a parent's
// first n children are n index entries rather than every child sorted. It replaces the index on
// parent_id alone, of which it is a prefix. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const childrenInIdOrder: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`create index tenants_parent_id_idx on tenants (parent_id, id)`.execute(db);
    await sql`drop index tenants_parent_idx`.execute(db);
  },
};
