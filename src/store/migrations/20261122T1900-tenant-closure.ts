// The tenant closure: one row per (ancestor, tenant) pair, the tenant itself included, carrying
// copies of the ordering keys. A partner's view of its subtree, in any order, is then one index
// range (ancestor_id, key, tenant_id): keyset pages cost the same at any depth and for any
// partner, instead of walking the whole table in key order looking for the partner's tenants.
// Kept by a trigger on tenants, so no write path can forget it. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const tenantClosure: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table tenant_closure (
        ancestor_id bigint not null references tenants (id),
        tenant_id bigint not null references tenants (id),
        name_normalized text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        primary key (ancestor_id, tenant_id)
      )`.execute(db);
    await sql`create index tenant_closure_name_idx on tenant_closure (ancestor_id, name_normalized, tenant_id)`.execute(db);
    await sql`create index tenant_closure_created_idx on tenant_closure (ancestor_id, created_at, tenant_id)`.execute(db);
    await sql`create index tenant_closure_updated_idx on tenant_closure (ancestor_id, updated_at, tenant_id)`.execute(db);
    await sql`create index tenant_closure_tenant_idx on tenant_closure (tenant_id)`.execute(db);
    // support-enabled tenants of one subtree (withSupport inside a partner's view)
    await sql`create index tenants_support_path_idx on tenants (path text_pattern_ops) where support_enabled`.execute(db);

    await sql`
      create function tenant_closure_sync() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' or new.path is distinct from old.path then
          delete from tenant_closure where tenant_id = new.id;
          insert into tenant_closure (ancestor_id, tenant_id, name_normalized, created_at, updated_at)
          select a::bigint, new.id, new.name_normalized, new.created_at, new.updated_at
          from unnest(string_to_array(rtrim(new.path, '.'), '.')) as a
          where a <> '';
        elsif new.name_normalized is distinct from old.name_normalized
           or new.created_at is distinct from old.created_at
           or new.updated_at is distinct from old.updated_at then
          update tenant_closure
             set name_normalized = new.name_normalized, created_at = new.created_at, updated_at = new.updated_at
           where tenant_id = new.id;
        end if;
        return null;
      end
      $$`.execute(db);
    await sql`
      create trigger tenants_closure_sync after insert or update on tenants
      for each row execute function tenant_closure_sync()`.execute(db);

    // existing tenants
    await sql`
      insert into tenant_closure (ancestor_id, tenant_id, name_normalized, created_at, updated_at)
      select a::bigint, t.id, t.name_normalized, t.created_at, t.updated_at
      from tenants t, unnest(string_to_array(rtrim(t.path, '.'), '.')) as a
      where a <> ''`.execute(db);
  },
};
