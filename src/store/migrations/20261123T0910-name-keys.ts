// One comparison rule for every unique name: the name is stored trimmed with whitespace runs
// collapsed, and compared by its key (NFKC, case-folded), so that `CI` and `ci`, `straße` and
// `STRASSE`, or `team  blue` and `team blue`, are one name. Clients and services get a key column;
// labels and partner subscriptions have theirs recomputed (their keys kept inner whitespace runs
// and were only lower-cased); tenants' keys are recomputed where the name holds anything beyond
// ASCII (for ASCII the old key and the new one agree). Names that now collide are kept apart by
// renaming the younger ones `name (2)`, `name (3)` …, each with an audit event, rather than lost.
// Frozen once shipped: the key function is a copy on purpose, and this file imports no
// application code.
import { sql, type Kysely, type Migration } from 'kysely';

const collapse = (name: string) =>
  name
    .normalize('NFC')
    .trim()
    .replace(/[\t\n\v\f\r\p{Zs}]+/gu, ' ');
const keyOf = (name: string) => collapse(name).normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');

interface Table {
  table: string;
  /** longest name the interface accepts: a renamed name must stay within it */
  limit: number;
  /** columns whose values together with the key must be unique */
  scope: string[];
  /** only rows matching this take part in uniqueness (live rows) */
  live: string;
  /** the unique index, dropped while keys change and created again on the new keys */
  index: string;
  /** audit: which tenant an event about a renamed row belongs to, and the target kind */
  tenantColumn: string;
  kind: string;
}

const TABLES: Table[] = [
  {
    table: 'clients',
    limit: 200,
    scope: ['tenant_id'],
    live: 'revoked_at is null',
    index: 'clients_tenant_name_live_uq',
    tenantColumn: 'tenant_id',
    kind: 'client',
  },
  {
    table: 'services',
    limit: 200,
    scope: ['owner_tenant_id'],
    live: 'true',
    index: 'services_owner_name_uq',
    tenantColumn: 'owner_tenant_id',
    kind: 'service',
  },
  {
    table: 'tenant_labels',
    limit: 100,
    scope: ['tenant_id', 'owner_partner_tenant_id'],
    live: 'true',
    index: 'tenant_labels_owner_name_uq',
    tenantColumn: 'tenant_id',
    kind: 'label',
  },
  {
    table: 'partner_subscriptions',
    limit: 200,
    scope: ['partner_tenant_id'],
    live: 'retired_at is null',
    index: 'partner_subscriptions_live_name_uq',
    tenantColumn: 'partner_tenant_id',
    kind: 'subscription',
  },
];

const BATCH = 1000;

async function recomputeKeys(db: Kysely<unknown>, t: Table): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const rows: { id: string; name: string; name_normalized: string | null }[] = (
      await sql<{ id: string; name: string; name_normalized: string | null }>`
        select id::text as id, name, name_normalized from ${sql.table(t.table)}
        where ${after === null ? sql`true` : sql`id > ${after}::uuid`}
        order by id limit ${BATCH}`.execute(db)
    ).rows;
    for (const r of rows) {
      const name = collapse(r.name);
      const key = keyOf(r.name);
      if (name !== r.name || key !== r.name_normalized) {
        await sql`update ${sql.table(t.table)} set name = ${name}, name_normalized = ${key} where id = ${r.id}::uuid`.execute(db);
      }
    }
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.id;
  }
}

async function renameCollisions(db: Kysely<unknown>, t: Table): Promise<void> {
  const scope = sql.join(t.scope.map((c) => sql.ref(c)));
  const groups = (
    await sql<Record<string, string>>`
      select ${scope}, name_normalized from ${sql.table(t.table)} where ${sql.raw(t.live)}
      group by ${scope}, name_normalized having count(*) > 1`.execute(db)
  ).rows;
  for (const g of groups) {
    const inScope = sql.join(
      t.scope.map((c) => sql`${sql.ref(c)} = ${g[c]}`),
      sql` and `,
    );
    const rows = (
      await sql<{ id: string; name: string; tenant: string }>`
        select id::text as id, name, ${sql.ref(t.tenantColumn)}::text as tenant from ${sql.table(t.table)}
        where ${inScope} and name_normalized = ${g.name_normalized} and ${sql.raw(t.live)}
        order by created_at, id`.execute(db)
    ).rows;
    // the oldest keeps its name; each younger one takes the first free "name (n)"
    for (const r of rows.slice(1)) {
      for (let n = 2; ; n++) {
        const suffix = ` (${n})`;
        const name = [...r.name].slice(0, t.limit - suffix.length).join('') + suffix;
        const key = keyOf(name);
        const taken = await sql`select 1 from ${sql.table(t.table)} where ${inScope} and name_normalized = ${key} and ${sql.raw(t.live)}`.execute(db);
        if (taken.rows.length > 0) continue;
        await sql`update ${sql.table(t.table)} set name = ${name}, name_normalized = ${key} where id = ${r.id}::uuid`.execute(db);
        await sql`
          insert into audit_events (id, occurred_at, tenant_id, actor_kind, actor_id, action, target_kind, target_id, details)
          values (gen_random_uuid(), statement_timestamp(), ${r.tenant}::bigint, 'system', 'migration', ${`${t.kind}.renamed`},
                  ${t.kind}, ${r.id}, ${JSON.stringify({ from: r.name, to: name, reason: 'names are now compared case-insensitively' })}::jsonb)`.execute(
          db,
        );
        break;
      }
    }
  }
}

/** Tenant names are not unique and were already collapsed: only keys of non-ASCII names can differ. */
async function recomputeTenantKeys(db: Kysely<unknown>): Promise<void> {
  let after = '0';
  for (;;) {
    const rows = (
      await sql<{ id: string; name: string; name_normalized: string }>`
        select id::text as id, name, name_normalized from tenants
        where id > ${after}::bigint and name !~ '^[[:ascii:]]*$'
        order by id limit ${BATCH}`.execute(db)
    ).rows;
    for (const r of rows) {
      const key = keyOf(r.name);
      if (key !== r.name_normalized) await sql`update tenants set name_normalized = ${key} where id = ${r.id}::bigint`.execute(db);
    }
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1]!.id;
  }
}

export const nameKeys: Migration = {
  async up(db: Kysely<unknown>) {
    await recomputeTenantKeys(db);
    await sql`alter table clients add column name_normalized text`.execute(db);
    await sql`alter table services add column name_normalized text`.execute(db);
    for (const t of TABLES) {
      await sql`drop index ${sql.ref(t.index)}`.execute(db);
      await recomputeKeys(db, t);
      await renameCollisions(db, t);
    }
    await sql`alter table clients alter column name_normalized set not null`.execute(db);
    await sql`alter table services alter column name_normalized set not null`.execute(db);
    await sql`create unique index clients_tenant_name_live_uq on clients (tenant_id, name_normalized) where revoked_at is null`.execute(db);
    await sql`create unique index services_owner_name_uq on services (owner_tenant_id, name_normalized)`.execute(db);
    await sql`create unique index tenant_labels_owner_name_uq on tenant_labels (tenant_id, owner_partner_tenant_id, name_normalized)`.execute(db);
    await sql`create unique index partner_subscriptions_live_name_uq on partner_subscriptions (partner_tenant_id, name_normalized) where retired_at is null`.execute(
      db,
    );
  },
};
