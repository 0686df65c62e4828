// A tenant's overview (/console/tenant?tenant=ID: its facts, environments, expiry and the days
// left before it is disabled, labels, subscriptions, support access, the tenants under it) and the
// search of the tenants below it (/console/tenants?tenant=ID: every filter of the `tenants` query,
// both of its paging modes). They read through the same TenantService.search and the per-request
// loaders as the GraphQL `tenants` query and its nested fields: the same visibility, the same rules.
import { can, supportActive } from '../../../access/policy.js';
import { scopeOf, type Tenant } from '../../../tenants/model.js';
import type { TenantsQueryInput } from '../../../tenants/search.js';
import { formTime } from './form-times.js';
import { type ConsoleKit, type InTenant, PER_PAGE, pageNumber, queryOf, text } from './kit.js';
import type { Problem } from './problems.js';
import { overview, SEARCH_FIELDS, type SearchValues, searchPage, searchQuery, type TenantRights } from './tenants-views.js';

/** The tenant's parent, when the viewer sees it (the last of its visible ancestors). */
export const parentOf = (t: InTenant): Tenant | undefined => t.ancestors.find((a) => a.id === t.tenant.parentId);

/** What the viewer's roles allow about the acting tenant (which links and forms to show; the services decide). */
export function rightsIn(t: InTenant): TenantRights {
  const here = scopeOf(t.tenant);
  const parent = parentOf(t);
  const managedIn = t.tenant.parentId === null ? here : parent ? scopeOf(parent) : undefined;
  return {
    edit: can(t.principal, here, 'tenants.edit', t.now),
    manage: managedIn !== undefined && can(t.principal, managedIn, 'tenants.manage', t.now),
    support: can(t.principal, here, 'tenants.support', t.now),
    create: t.tenant.isPartner && can(t.principal, here, 'tenants.create', t.now),
    offerings: t.tenant.isPartner && can(t.principal, here, 'subscriptions.manage', t.now),
  };
}

const choice = (raw: string | undefined, yes: string, no: string) => (raw === yes ? true : raw === no ? false : undefined);

/** The search form's values as the `tenants` query's input, below the acting tenant. */
export function tenantsQueryOf(tenantId: string, v: SearchValues, paging: { page: unknown; cursor: string | undefined }): TenantsQueryInput {
  const ids = v.ids?.split(/[\s,]+/).filter((id) => id !== '');
  const envEnabled = choice(v.env_state, 'yes', 'no');
  // the datetime-local fields, read as UTC (form-times.ts)
  const created = { startTime: formTime(v.created_from, 'created_from'), endTime: formTime(v.created_to, 'created_to') };
  const modified = { startTime: formTime(v.modified_from, 'modified_from'), endTime: formTime(v.modified_to, 'modified_to') };
  const perPage = v.per_page ? Number(v.per_page) : undefined;
  return {
    forHierarchies: [tenantId],
    ...(v.name ? { name: v.name } : {}),
    ...(ids && ids.length > 0 ? { ids } : {}),
    ...(v.env || envEnabled !== undefined ? { environmentFilter: { name: v.env || null, enabled: envEnabled ?? null } } : {}),
    ...(v.label ? { labelFilter: { label_name: v.label } } : {}),
    ...(v.subscription ? { withPartnerSubscription: v.subscription } : {}),
    ...(v.parent ? { partnership: { parent: v.parent } } : {}),
    ...(v.kind ? { isPartner: v.kind === 'partner' } : {}),
    ...(v.support ? { withSupport: v.support === 'on' } : {}),
    ...(created.startTime || created.endTime ? { createdTimeFilter: created } : {}),
    ...(modified.startTime || modified.endTime ? { modifiedTimeFilter: modified } : {}),
    orderBy: v.order_by || 'Id',
    orderDir: v.order_dir || 'asc',
    ...(perPage !== undefined ? { maxResults: perPage } : {}),
    ...(v.mode === 'cursor' ? (paging.cursor ? { cursorPos: paging.cursor } : {}) : { pageNum: pageNumber(paging.page) }),
  };
}

/** The handlers of a tenant's overview and the tenant search (routes.ts registers them). */
export function tenantPages(c: ConsoleKit) {
  const { services } = c;
  const section = 'tenant';

  return {
    /** GET /console/tenant?tenant=…: one tenant, as the `tenants` query and its nested fields read it */
    overview: c.section(async (t, req, reply) => {
      const q = queryOf(req);
      const loaders = services.loaders(t.caller);
      const page = pageNumber(q.page);
      const [envs, labels, assigned, children] = await Promise.all([
        loaders.environments.load(t.tenant.id),
        loaders.labels.load(t.tenant.id),
        loaders.subscriptions.load(t.tenant.id),
        t.tenant.isPartner
          ? services.tenants.search(t.caller, { partnership: { parent: t.tenant.id }, pageNum: page, maxResults: PER_PAGE, orderBy: 'Name' })
          : undefined,
      ]);
      const owners = new Map([...t.ancestors, t.tenant].map((a) => [a.id, a.name]));
      const notice = await c.takeNotice(t);
      const view = overview({
        tenant: t.tenant,
        parent: parentOf(t),
        envs,
        labels,
        owners,
        assigned,
        children: children && { tenants: children.results, page, hasMore: children.hasMore, total: children.totalCount },
        disablesAt: services.tenants.disablesAt(t.tenant),
        supportActive: supportActive(scopeOf(t.tenant), t.now),
        now: t.now,
        rights: rightsIn(t),
        notice,
      });
      return c.show(reply, 200, view, { who: t, in: t, section });
    }),

    /** GET /console/tenants?tenant=…&…: the tenants below it, by the filters of the `tenants` query */
    search: c.section(async (t, req, reply) => {
      const q = queryOf(req);
      const values: SearchValues = {};
      for (const f of SEARCH_FIELDS) {
        const v = text(q[f])?.trim();
        if (v) values[f] = v;
      }
      const cursor = text(q.cursor) || undefined;
      const at = (paging: { page?: number; cursor?: string }) => searchQuery(t.tenant.id, values, paging);
      let problem: Problem | undefined;
      let result: Parameters<typeof searchPage>[0]['result'];
      try {
        const found = await services.tenants.search(t.caller, tenantsQueryOf(t.tenant.id, values, { page: q.page, cursor }));
        const page = values.mode === 'cursor' ? undefined : pageNumber(q.page);
        result = {
          tenants: found.results,
          total: found.totalCount,
          hasMore: found.hasMore,
          cursor: found.cursorPos,
          page,
          after: cursor !== undefined,
        };
      } catch (err) {
        problem = c.formProblem(err, req, reply, t.tenant);
      }
      const view = searchPage({ tenant: t.tenant, values, problem, result, at });
      return c.show(reply, problem?.status ?? 200, view, { who: t, in: t, section });
    }),
  };
}
