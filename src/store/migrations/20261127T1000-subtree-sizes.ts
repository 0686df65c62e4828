// How many tenants each tenant's subtree holds, itself included, so that page mode's exact
// totalCount of an unfiltered view is a sum of a few rows instead of a count of the whole subtree
// (a million index entries for the vendor). Kept by a statement trigger on tenant_closure: every
// closure row added or removed adds +1 or -1 under its ancestor. The counts are appended, never
// updated in place, so concurrent tenant creations never wait on one hot row (the vendor's); the
// maintenance folds each ancestor's rows into one (store/tenants.ts, foldSubtreeSizes). Frozen
// once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const subtreeSizes: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table tenant_subtree_sizes (
        ancestor_id bigint not null,
        delta bigint not null
      )`.execute(db);
    await sql`create index tenant_subtree_sizes_ancestor_idx on tenant_subtree_sizes (ancestor_id) include (delta)`.execute(db);
    await sql`
      create function tenant_subtree_sizes_added() returns trigger language plpgsql as $$
      begin
        insert into tenant_subtree_sizes (ancestor_id, delta) select ancestor_id, count(*) from added group by ancestor_id;
        return null;
      end
      $$`.execute(db);
    await sql`
      create function tenant_subtree_sizes_removed() returns trigger language plpgsql as $$
      begin
        insert into tenant_subtree_sizes (ancestor_id, delta) select ancestor_id, -count(*) from removed group by ancestor_id;
        return null;
      end
      $$`.execute(db);
    await sql`
      create trigger tenant_closure_sizes_added after insert on tenant_closure
      referencing new table as added for each statement execute function tenant_subtree_sizes_added()`.execute(db);
    await sql`
      create trigger tenant_closure_sizes_removed after delete on tenant_closure
      referencing old table as removed for each statement execute function tenant_subtree_sizes_removed()`.execute(db);
    // the tenants there are
    await sql`
      insert into tenant_subtree_sizes (ancestor_id, delta)
      select ancestor_id, count(*) from tenant_closure group by ancestor_id`.execute(db);
  },
};
