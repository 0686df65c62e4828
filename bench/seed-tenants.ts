// Loads a synthetic tenant hierarchy straight into the database with set-based SQL: partners (some
// nested) under the vendor, child tenants under the partners, with environments, labels,
// subscriptions and support flags. As a bulk load does, it sets the secondary indexes, the foreign
// keys and the closure trigger of the tables it fills aside, loads, then builds the closure in one
// statement and the indexes and keys once each: maintaining them row by row took 347 s for a
// million tenants. Run it inside a transaction: ALTER and DROP are transactional in PostgreSQL, so
// an interrupted load leaves the schema as it was.
import { sql, type Kysely } from 'kysely';

export interface SeedShape {
  tenants: number;
  /** child tenants per partner */
  perPartner: number;
}

/** 20 syllables; a "word" is two of them (400 words), so names are as varied as real ones */
export const SYLLABLES = [
  'ka',
  'ro',
  'mi',
  'ten',
  'vex',
  'lo',
  'sa',
  'dri',
  'nu',
  'pel',
  'qua',
  'zor',
  'bi',
  'fen',
  'gal',
  'hu',
  'jin',
  'mor',
  'tas',
  'wel',
];

export async function seedTenants(db: Kysely<any>, shape: SeedShape, base: Date): Promise<{ partners: number; firstChild: number; last: number }> {
  const partners = Math.max(2, Math.floor(shape.tenants / shape.perPartner));
  const topPartners = Math.max(1, Math.floor(partners / 10));
  const firstPartner = 2;
  const lastPartner = firstPartner + partners - 1;
  const firstChild = lastPartner + 1;
  const last = shape.tenants + 1;
  const syl = sql.raw(`array[${SYLLABLES.map((w) => `'${w}'`).join(',')}]`);
  // word k of 400, picked by a hash of the id so that names do not follow the hierarchy
  const word = (salt: string) =>
    sql`((${syl})[1 + abs(hashtext(${sql.lit(salt)} || i)) % 20] || (${syl})[1 + abs(hashtext(${sql.lit(salt + salt)} || i)) % 20])`;
  const b = base.toISOString();
  // bulk statements run longer than the service's statement timeout
  await sql`set local statement_timeout = 0`.execute(db);
  await sql`set local maintenance_work_mem = '256MB'`.execute(db);
  const restore = await setAside(db);

  // top-level partners under 1; the other partners nest under a top-level one
  await sql`
    insert into tenants (id, parent_id, path, depth, name, name_normalized, is_partner, created_at, updated_at)
    select i,
           case when i < ${sql.lit(firstPartner + topPartners)} then 1 else ${sql.lit(firstPartner)} + (i % ${sql.lit(topPartners)}) end,
           case when i < ${sql.lit(firstPartner + topPartners)} then '1.' || i || '.'
                else '1.' || (${sql.lit(firstPartner)} + (i % ${sql.lit(topPartners)})) || '.' || i || '.' end,
           case when i < ${sql.lit(firstPartner + topPartners)} then 1 else 2 end,
           initcap(${word('p')}) || ' Partner ' || i,
           ${word('p')} || ' partner ' || i,
           true,
           ${sql.lit(b)}::timestamptz + (i || ' seconds')::interval,
           ${sql.lit(b)}::timestamptz + (i || ' seconds')::interval
    from generate_series(${sql.lit(firstPartner)}, ${sql.lit(lastPartner)}) as i`.execute(db);

  await sql`
    insert into tenants (id, parent_id, path, depth, name, name_normalized, is_partner, support_enabled, expires_at, enabled, created_at, updated_at)
    select i, p.id, p.path || i || '.', p.depth + 1,
           initcap(${word('a')}) || ' ' || initcap(${word('b')}) || ' ' || i,
           ${word('a')} || ' ' || ${word('b')} || ' ' || i,
           false,
           i % 20 = 0,
           case when i % 10 = 0 then ${sql.lit(b)}::timestamptz + ((i % 400) || ' days')::interval end,
           i % 50 <> 0,
           ${sql.lit(b)}::timestamptz + (i || ' seconds')::interval,
           ${sql.lit(b)}::timestamptz + (i || ' seconds')::interval + ((i::bigint * 7919 % 100000) || ' seconds')::interval
    from generate_series(${sql.lit(firstChild)}, ${sql.lit(last)}) as i
    join tenants p on p.id = ${sql.lit(firstPartner)} + (i % ${sql.lit(partners)})`.execute(db);

  // environments: echo for all (off for the disabled 2 %), pilot for 30 %, delta for 10 %
  await sql`
    insert into tenant_environments (id, tenant_id, name, enabled, created_at, updated_at)
    select gen_random_uuid(), t.id, e.name, t.enabled, t.created_at, t.created_at
    from tenants t
    cross join (values ('echo', 1), ('pilot', 30), ('delta', 10)) as e(name, pct)
    where t.id > 1 and (e.pct = 1 or t.id % 100 < e.pct)`.execute(db);

  // labels: half the tenants have a tier, 5 % a region label, owned by their parent partner
  await sql`
    insert into tenant_labels (id, tenant_id, name, name_normalized, value, owner_partner_tenant_id, created_at, updated_at)
    select gen_random_uuid(), t.id, l.name, l.name, case when t.id % 3 = 0 then 'gold' else 'silver' end, t.parent_id, t.created_at, t.created_at
    from tenants t
    cross join (values ('tier', 50), ('region-emea', 5)) as l(name, pct)
    where t.id >= ${sql.lit(firstChild)} and t.id % 100 < l.pct`.execute(db);

  // 20 vendor services; three subscriptions per partner; 40 % of children have one assigned
  await sql`
    insert into services (id, owner_tenant_id, name, name_normalized, description, created_at, updated_at)
    select gen_random_uuid(), 1, 'Service ' || s, 'service ' || s, null, ${sql.lit(b)}::timestamptz, ${sql.lit(b)}::timestamptz
    from generate_series(1, 20) as s`.execute(db);
  await sql`
    insert into partner_subscriptions (id, partner_tenant_id, service_id, name, name_normalized, description, created_at, updated_at)
    select gen_random_uuid(), p.id, sv.id, k.name || ' ' || p.id, lower(k.name) || ' ' || p.id, null, ${sql.lit(b)}::timestamptz, ${sql.lit(b)}::timestamptz
    from tenants p
    cross join (values ('Endpoint', 1), ('MDR', 2), ('Identity', 3)) as k(name, n)
    join lateral (select id from services order by name offset k.n limit 1) sv on true
    where p.is_partner and p.id > 1`.execute(db);
  await sql`
    insert into tenant_subscriptions (tenant_id, subscription_id, assigned_at, assigned_by)
    select t.id, ps.id, t.created_at, 'seed'
    from tenants t
    join partner_subscriptions ps on ps.partner_tenant_id = t.parent_id
      and ps.name_normalized like (case when t.id % 2 = 0 then 'endpoint' else 'mdr' end) || ' %'
    where t.id >= ${sql.lit(firstChild)} and t.id % 100 < 40`.execute(db);

  // what the trigger would have written for each new tenant: itself and each of its ancestors
  await sql`
    insert into tenant_closure (ancestor_id, tenant_id, name_normalized, created_at, updated_at)
    select a::bigint, t.id, t.name_normalized, t.created_at, t.updated_at
    from tenants t, unnest(string_to_array(rtrim(t.path, '.'), '.')) as a
    where t.id > 1 and a <> ''`.execute(db);
  await restore();

  await sql`select setval(pg_get_serial_sequence('tenants', 'id'), ${sql.lit(last)})`.execute(db);
  await sql`analyze`.execute(db);
  return { partners, firstChild, last };
}

/** the tables the seed fills */
const LOADED = ['tenants', 'tenant_closure', 'tenant_environments', 'tenant_labels', 'partner_subscriptions', 'tenant_subscriptions'];

/**
 * Drops the loaded tables' foreign keys and the indexes that back no constraint, and disables the
 * closure trigger; the returned function puts all of it back as it was (from the catalog's own
 * definitions, so nothing here repeats the migrations). Primary keys and unique constraints stay:
 * other tables' keys point at them, and they check the load.
 */
async function setAside(db: Kysely<any>): Promise<() => Promise<void>> {
  const tables = sql.join(LOADED.map((t) => sql.lit(t)));
  const indexes = (
    await sql<{ name: string; def: string }>`
      select i.indexname as name, i.indexdef as def
      from pg_indexes i
      where i.schemaname = current_schema() and i.tablename in (${tables})
        and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.connamespace = current_schema()::regnamespace)`.execute(db)
  ).rows;
  const keys = (
    await sql<{ tbl: string; name: string; def: string }>`
      select c.conrelid::regclass::text as tbl, c.conname as name, pg_get_constraintdef(c.oid) as def
      from pg_constraint c
      where c.contype = 'f' and c.connamespace = current_schema()::regnamespace
        and c.conrelid::regclass::text in (${tables})`.execute(db)
  ).rows;
  for (const k of keys) await sql`alter table ${sql.id(k.tbl)} drop constraint ${sql.id(k.name)}`.execute(db);
  for (const i of indexes) await sql`drop index ${sql.id(i.name)}`.execute(db);
  await sql`alter table tenants disable trigger tenants_closure_sync`.execute(db);
  return async () => {
    await sql`alter table tenants enable trigger tenants_closure_sync`.execute(db);
    for (const i of indexes) await sql.raw(i.def).execute(db);
    for (const k of keys) await sql.raw(`alter table ${k.tbl} add constraint ${k.name} ${k.def}`).execute(db);
  };
}
