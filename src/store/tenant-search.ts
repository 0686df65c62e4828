// The tenants search planner: turns a TenantSearch and the caller's visibility into one query
// on either of two shapes (tenants alone, or a partner's subtree through the closure table),
// with keyset or offset paging. Visibility is applied here, in one place (visibleTo), under
// every query that lists tenants, so no query can forget it.
import { sql, type ExpressionBuilder, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Tenant, TenantSearch, Visibility } from '../tenants/model.js';
import type { SearchWindow } from '../tenants/store.js';
import type { Database } from './schema.js';
import { columns, toTenant } from './tenant-rows.js';

type EB = ExpressionBuilder<Database, 'tenants'>;

const supportActive = (eb: EB, now: Date) =>
  eb.and([
    eb('tenants.support_enabled', '=', true),
    eb.or([eb('tenants.support_expires_at', 'is', null), eb('tenants.support_expires_at', '>', now)]),
  ]);

const inSubtree = (eb: EB, path: string) => eb('tenants.path', 'like', `${path}%`);

/** The visibility predicate: own tenant, subtrees of role-holding tenants, support-enabled tenants. */
function visibleTo(eb: EB, v: Visibility, now: Date): Expression<SqlBool> {
  if (v.kind === 'all') return sql<boolean>`true`;
  const ors: Expression<SqlBool>[] = v.subtreePaths.map((p) => inSubtree(eb, p));
  if (v.homeId !== null) ors.push(eb('tenants.id', '=', v.homeId));
  if (v.consentingTenants) ors.push(supportActive(eb, now));
  return ors.length > 0 ? eb.or(ors) : sql<boolean>`false`;
}

/** Columns the closure carries a copy of: filtering on the copy keeps a scoped query in one index. */
interface KeyColumns {
  id: 'tenants.id' | 'c.tenant_id';
  name: 'tenants.name_normalized' | 'c.name_normalized';
  created: 'tenants.created_at' | 'c.created_at';
  updated: 'tenants.updated_at' | 'c.updated_at';
}
const TENANT_KEYS: KeyColumns = { id: 'tenants.id', name: 'tenants.name_normalized', created: 'tenants.created_at', updated: 'tenants.updated_at' };
const CLOSURE_KEYS: KeyColumns = { id: 'c.tenant_id', name: 'c.name_normalized', created: 'c.created_at', updated: 'c.updated_at' };

/** A search as the store runs it: within a closure scope, support-enabled tenants are also
 *  bounded by the scope's paths (a redundant predicate that lets the planner start from the small
 *  partial index of support-enabled tenants instead of the whole subtree). */
type StoreSearch = TenantSearch & { supportPaths?: string[] };

function filters(eb: EB, s: StoreSearch, v: Visibility, now: Date, keys: KeyColumns = TENANT_KEYS): Expression<SqlBool> {
  const and: Expression<SqlBool>[] = [visibleTo(eb, v, now)];
  if (s.ids) and.push(s.ids.length ? eb('tenants.id', 'in', s.ids) : sql<boolean>`false`);
  if (s.name) {
    // exact names use the key column; wildcards the trigram index on tenants
    const byName = s.name.wildcard
      ? eb('tenants.name_normalized', 'like', s.name.pattern)
      : eb(keys.name as 'tenants.name_normalized', '=', s.name.pattern);
    and.push(s.name.id ? eb.or([byName, eb(keys.id as 'tenants.id', '=', s.name.id)]) : byName);
  }
  if (s.environment) {
    const { name, enabled } = s.environment;
    if (name === null) {
      and.push(eb('tenants.enabled', '=', enabled ?? true));
    } else {
      const enabledThere = eb.exists(
        eb
          .selectFrom('tenant_environments as e')
          .select(sql`1`.as('one'))
          .whereRef('e.tenant_id', '=', 'tenants.id')
          .where('e.name', '=', name)
          .where('e.enabled', '=', true),
      );
      and.push(enabled === false ? eb.not(enabledThere) : enabledThere);
    }
  }
  if (s.labelName) {
    const m = s.labelName;
    and.push(
      eb.exists(
        eb
          .selectFrom('tenant_labels as l')
          .select(sql`1`.as('one'))
          .whereRef('l.tenant_id', '=', 'tenants.id')
          .where('l.name_normalized', m.wildcard ? 'like' : '=', m.pattern),
      ),
    );
  }
  if (s.subscriptionName) {
    const m = s.subscriptionName;
    and.push(
      eb.exists(
        eb
          .selectFrom('tenant_subscriptions as ts')
          .innerJoin('partner_subscriptions as ps', 'ps.id', 'ts.subscription_id')
          .select(sql`1`.as('one'))
          .whereRef('ts.tenant_id', '=', 'tenants.id')
          .where('ps.name_normalized', m.wildcard ? 'like' : '=', m.pattern),
      ),
    );
  }
  if (s.parentId !== undefined) and.push(eb('tenants.parent_id', '=', s.parentId));
  if (s.isPartner !== undefined) and.push(eb('tenants.is_partner', '=', s.isPartner));
  for (const [range, column] of [
    [s.created, keys.created],
    [s.modified, keys.updated],
  ] as const) {
    if (range?.start) and.push(eb(column as 'tenants.created_at', '>=', range.start));
    if (range?.end) and.push(eb(column as 'tenants.created_at', '<=', range.end));
  }
  if (s.withSupport !== undefined) and.push(s.withSupport ? supportActive(eb, now) : eb.not(supportActive(eb, now)));
  if (s.withSupport === true && s.supportPaths?.length) and.push(eb.or(s.supportPaths.map((p) => inSubtree(eb, p))));
  if (s.hierarchyPaths) {
    and.push(s.hierarchyPaths.length ? eb.or(s.hierarchyPaths.map((p) => inSubtree(eb, p))) : sql<boolean>`false`);
  }
  return eb.and(and);
}

const ORDER_COLUMN = {
  Id: 'tenants.id',
  CreatedAt: 'tenants.created_at',
  UpdatedAt: 'tenants.updated_at',
  Name: 'tenants.name_normalized',
} as const;

const CLOSURE_ORDER_COLUMN = {
  Id: 'c.tenant_id',
  CreatedAt: 'c.created_at',
  UpdatedAt: 'c.updated_at',
  Name: 'c.name_normalized',
} as const;

// The two query shapes (tenants alone, or closure joined to tenants) page alike; only the column
// names differ, so the keyset, order and limit are added here for both.
// biome-ignore lint/suspicious/noExplicitAny: the two shapes select from different tables; the helper adds only where, order and limit on the column names it is given
type PageQuery = SelectQueryBuilder<any, any, any>;

function keysetPage(q: PageQuery, column: string, idColumn: string, s: TenantSearch, window: SearchWindow): PageQuery {
  const dir = s.orderDir;
  const after = window.after;
  if (after) {
    const op = dir === 'asc' ? '>' : '<';
    const value = s.orderBy === 'CreatedAt' || s.orderBy === 'UpdatedAt' ? new Date(after.value) : after.value;
    q =
      s.orderBy === 'Id'
        ? q.where(idColumn, op, after.id)
        : q.where((eb) => eb(eb.refTuple(column as never, idColumn as never), op, eb.tuple(value as never, after.id as never)));
  }
  if (s.orderBy !== 'Id') q = q.orderBy(column, dir);
  q = q.orderBy(idColumn, dir);
  if (window.offset) q = q.offset(window.offset);
  return q.limit(window.limit);
}

interface ClosureScope {
  /** tenants whose whole subtree is visible (none inside another) */
  roots: string[];
  rootPaths: string[];
  /** the home tenant alone (visibility leaves it out when a root covers it) */
  home: string | null;
}

/** Paths of which none lies inside another. */
function outermost(paths: string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((p) => !unique.some((q) => q !== p && p.startsWith(q)));
}
const idOf = (path: string) => path.split('.').filter(Boolean).pop()!;

/**
 * Visibility made of subtrees (the usual partner or tenant caller), or any search bounded by
 * forHierarchies, is served from the closure table: the tenants in the intersection of the
 * visible subtrees and the requested ones are exactly those under a few roots. Vendor-wide and
 * Support visibility without forHierarchies query tenants directly.
 */
function closureScope(v: Visibility, hierarchyPaths: string[] | undefined, homePath: string | null): ClosureScope | undefined {
  if (v.kind === 'some' && v.consentingTenants) return undefined;
  if (v.kind === 'all') {
    if (!hierarchyPaths) return undefined;
    const paths = outermost(hierarchyPaths);
    return { roots: paths.map(idOf), rootPaths: paths, home: null };
  }
  const visible = outermost(v.subtreePaths);
  if (!hierarchyPaths) return { roots: visible.map(idOf), rootPaths: visible, home: v.homeId };
  const wanted = outermost(hierarchyPaths);
  // a subtree in both: the deeper of the two roots
  const rootPaths = outermost([
    ...wanted.filter((h) => visible.some((r) => h.startsWith(r))),
    ...visible.filter((r) => wanted.some((h) => r.startsWith(h))),
  ]);
  const home = v.homeId !== null && homePath !== null && wanted.some((h) => homePath.startsWith(h)) ? v.homeId : null;
  return { roots: rootPaths.map(idOf), rootPaths, home };
}

type ClosureEB = ExpressionBuilder<Database & { c: Database['tenant_closure'] }, 'c' | 'tenants'>;

function inClosureScope(eb: ClosureEB, scope: ClosureScope): Expression<SqlBool> {
  const ors: Expression<SqlBool>[] = [];
  if (scope.roots.length) ors.push(eb('c.ancestor_id', 'in', scope.roots));
  if (scope.home) ors.push(eb.and([eb('c.ancestor_id', '=', scope.home), eb('c.tenant_id', '=', scope.home)]));
  return ors.length ? eb.or(ors) : sql<boolean>`false`;
}

/** Within a closure scope, forHierarchies is already part of the scope. */
const scoped = (s: TenantSearch, scope: ClosureScope): StoreSearch => {
  const { hierarchyPaths: _, ...rest } = s;
  return scope.home === null && scope.rootPaths.length > 0 ? { ...rest, supportPaths: scope.rootPaths } : rest;
};

/** the home tenant's path, needed only when forHierarchies meets a visible home tenant */
async function homePath(db: Kysely<Database>, v: Visibility): Promise<string | null> {
  if (v.kind !== 'some' || v.homeId === null) return null;
  const row = await db.selectFrom('tenants').select('path').where('id', '=', v.homeId).executeTakeFirst();
  return row?.path ?? null;
}

/** Direct children of the given tenants that the visibility allows. */
export async function visibleChildren(
  db: Kysely<Database>,
  parentIds: string[],
  visibility: Visibility,
  now: Date,
  limit: number,
): Promise<Tenant[]> {
  if (parentIds.length === 0 || limit <= 0) return [];
  const rows = await db
    .selectFrom('tenants')
    .select(columns)
    .where((eb) => eb.and([eb('tenants.parent_id', 'in', parentIds), visibleTo(eb, visibility, now)]))
    .orderBy('tenants.id')
    .limit(limit)
    .execute();
  return rows.map(toTenant);
}

/** One page of a search. */
export async function searchTenants(
  db: Kysely<Database>,
  s: TenantSearch,
  visibility: Visibility,
  window: SearchWindow,
  now: Date,
): Promise<Tenant[]> {
  const scope = closureScope(visibility, s.hierarchyPaths, s.hierarchyPaths ? await homePath(db, visibility) : null);
  if (scope && unfiltered(s)) {
    // A subtree-bounded view with no filter: the page is found in the closure index alone, and
    // only its rows are read from tenants. Joining first let the planner merge-join the whole
    // tenants table in id order to reach a deep page (pageNum 50 of a partner: 25 ms).
    const page = keysetPage(
      db
        .selectFrom('tenant_closure as c')
        .select('c.tenant_id')
        .where((eb) => inClosureScope(eb as never, scope)) as unknown as PageQuery,
      CLOSURE_ORDER_COLUMN[s.orderBy],
      CLOSURE_ORDER_COLUMN.Id,
      s,
      window,
    );
    // the closure's keys are copies of the tenants' own: the same order
    const rows = await keysetPage(
      db.selectFrom('tenants').select(columns).where('tenants.id', 'in', page) as unknown as PageQuery,
      ORDER_COLUMN[s.orderBy],
      ORDER_COLUMN.Id,
      s,
      { limit: window.limit },
    ).execute();
    return (rows as Parameters<typeof toTenant>[0][]).map(toTenant);
  }
  // a partner-scoped view walks the closure index of the visible subtrees in key order
  const query = scope
    ? db
        .selectFrom('tenant_closure as c')
        .innerJoin('tenants', 'tenants.id', 'c.tenant_id')
        .select(columns)
        .where((eb) => eb.and([inClosureScope(eb as never, scope), filters(eb as never, scoped(s, scope), { kind: 'all' }, now, CLOSURE_KEYS)]))
    : db
        .selectFrom('tenants')
        .select(columns)
        .where((eb) => filters(eb, s, visibility, now));
  const keys = scope ? CLOSURE_ORDER_COLUMN : ORDER_COLUMN;
  const rows = await keysetPage(query as unknown as PageQuery, keys[s.orderBy], keys.Id, s, window).execute();
  return (rows as Parameters<typeof toTenant>[0][]).map(toTenant);
}

/** No filter beyond the view itself (ordering and forHierarchies shape it, nothing else). */
const unfiltered = (s: TenantSearch) => Object.keys(s).every((k) => k === 'orderBy' || k === 'orderDir' || k === 'hierarchyPaths');

/** Every match of a search, counted (page mode's totalCount). Exact; an unfiltered view is a sum
 *  of its roots' subtree sizes (migration 20261127T1000), the others are counted. */
export async function countTenants(db: Kysely<Database>, s: TenantSearch, visibility: Visibility, now: Date): Promise<number> {
  const scope = closureScope(visibility, s.hierarchyPaths, s.hierarchyPaths ? await homePath(db, visibility) : null);
  if (unfiltered(s) && (scope || visibility.kind === 'all')) return subtreeSizes(db, scope);
  const row = scope
    ? await db
        .selectFrom('tenant_closure as c')
        .innerJoin('tenants', 'tenants.id', 'c.tenant_id')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where((eb) => eb.and([inClosureScope(eb as never, scope), filters(eb as never, scoped(s, scope), { kind: 'all' }, now, CLOSURE_KEYS)]))
        .executeTakeFirstOrThrow()
    : await db
        .selectFrom('tenants')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where((eb) => filters(eb, s, visibility, now))
        .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The tenants under a scope's roots (or under every root tenant, without a scope), plus its home tenant. */
async function subtreeSizes(db: Kysely<Database>, scope: ClosureScope | undefined): Promise<number> {
  // the home tenant is visible alone, and no root covers it (closureScope)
  const home = scope?.home ? 1 : 0;
  if (scope && scope.roots.length === 0) return home;
  const row = await db
    .selectFrom('tenant_subtree_sizes')
    .select(sql<string>`coalesce(sum(delta), 0)`.as('n'))
    .where('ancestor_id', 'in', scope ? scope.roots : db.selectFrom('tenants').select('id').where('parent_id', 'is', null))
    .executeTakeFirstOrThrow();
  return Number(row.n) + home;
}

/**
 * Folds each ancestor's subtree-size rows into one (the triggers append a row per change, so
 * that concurrent creations never wait on one another). One statement: a concurrent change is
 * either folded or left as a row of its own, never lost; several processes may run it at once.
 */
export async function foldSubtreeSizes(db: Kysely<Database>): Promise<number> {
  const r = await sql<{ n: string }>`
    with gone as (
      delete from tenant_subtree_sizes
      where ancestor_id in (select ancestor_id from tenant_subtree_sizes group by ancestor_id having count(*) > 1)
      returning ancestor_id, delta
    ), folded as (
      insert into tenant_subtree_sizes (ancestor_id, delta)
      select ancestor_id, sum(delta) from gone group by ancestor_id
      returning 1
    )
    select (select count(*) from gone) - (select count(*) from folded) as n`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}
