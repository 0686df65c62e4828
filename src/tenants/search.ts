// The TenantsQuery input of the specification, checked and turned into a TenantSearch.
import { parseTimeInput } from '../time.js';
import { badInput } from '../errors.js';
import { checkPage } from '../paging.js';
import { searchKey } from '../text.js';
import {
  checkEnvironmentName,
  checkTenantId,
  DEFAULT_MAX_RESULTS,
  MAX_MAX_RESULTS,
  ORDER_FIELDS,
  TENANT_ID_PATTERN,
  type OrderDir,
  type OrderField,
  type TenantSearch,
  type TimeRange,
} from './model.js';

export interface TenantsQueryInput {
  cursorPos?: string | null;
  maxResults?: number | null;
  pageNum?: number | null;
  name?: string | null;
  ids?: string[] | null;
  environmentFilter?: { name?: string | null; enabled?: boolean | null } | null;
  labelFilter?: { label_name?: string | null } | null;
  withPartnerSubscription?: string | null;
  partnership?: { parent?: string | null; is_partner?: boolean | null } | null;
  createdTimeFilter?: { startTime?: string | Date | null; endTime?: string | Date | null } | null;
  modifiedTimeFilter?: { startTime?: string | Date | null; endTime?: string | Date | null } | null;
  isPartner?: boolean | null;
  orderBy?: string | null;
  orderDir?: string | null;
  withSupport?: boolean | null;
  forHierarchies?: string[] | null;
}

export interface ParsedTenantsQuery {
  search: Omit<TenantSearch, 'hierarchyPaths'>;
  /** ids whose subtrees bound the search (forHierarchies), resolved to paths by the service */
  hierarchyIds: string[] | undefined;
  limit: number;
  cursor: string | undefined;
  /** page mode: set when pageNum was given (and no cursor); totalCount is filled only then */
  page: number | undefined;
}

/** longest id list a query takes (each id is a bind parameter) */
export const MAX_LIST = 1000;

function timeRange(input: TenantsQueryInput['createdTimeFilter'], field: string): TimeRange | undefined {
  if (!input) return undefined;
  const start = input.startTime == null ? null : parseTimeInput(input.startTime, `${field}.startTime`);
  const end = input.endTime == null ? null : parseTimeInput(input.endTime, `${field}.endTime`);
  if (start && end && start > end) throw badInput(`${field}: startTime is after endTime`, { field });
  return start || end ? { start, end } : undefined;
}

export function parseTenantsQuery(q: TenantsQueryInput): ParsedTenantsQuery {
  const orderBy = (q.orderBy ?? 'Id') as OrderField;
  if (!ORDER_FIELDS.includes(orderBy)) throw badInput(`orderBy must be one of ${ORDER_FIELDS.join(', ')}`, { field: 'orderBy' });
  const orderDir = (q.orderDir ?? 'asc') as OrderDir;
  if (orderDir !== 'asc' && orderDir !== 'desc') throw badInput('orderDir must be asc or desc', { field: 'orderDir' });

  const checked = checkPage(
    { page: q.pageNum, perPage: q.maxResults },
    {
      names: { page: 'pageNum', perPage: 'maxResults' },
      defaultPerPage: DEFAULT_MAX_RESULTS,
      maxPerPage: MAX_MAX_RESULTS,
      deeper: 'use cursorPos to page that far',
    },
  );
  const limit = checked.perPage;
  // page mode only when pageNum is given
  const page = q.pageNum == null ? undefined : checked.page;

  for (const [field, list] of [
    ['ids', q.ids],
    ['forHierarchies', q.forHierarchies],
  ] as const) {
    if (list && list.length > MAX_LIST) throw badInput(`${field} takes at most ${MAX_LIST} ids`, { field });
  }
  const search: ParsedTenantsQuery['search'] = { orderBy, orderDir };
  if (q.ids != null) search.ids = [...new Set(q.ids.map((id) => checkTenantId(id, 'ids')))];
  if (q.name != null) {
    const m = searchKey(q.name, 'name');
    search.name = { ...m, id: TENANT_ID_PATTERN.test(q.name.trim()) ? q.name.trim() : null };
  }
  if (q.environmentFilter) {
    const { name, enabled } = q.environmentFilter;
    search.environment = {
      name: name == null ? null : checkEnvironmentName(name, 'environmentFilter.name'),
      enabled: enabled ?? null,
    };
  }
  if (q.labelFilter?.label_name != null) search.labelName = searchKey(q.labelFilter.label_name, 'labelFilter.label_name');
  if (q.withPartnerSubscription != null) search.subscriptionName = searchKey(q.withPartnerSubscription, 'withPartnerSubscription');
  if (q.partnership?.parent != null) search.parentId = checkTenantId(q.partnership.parent, 'partnership.parent');
  const isPartner = q.isPartner ?? q.partnership?.is_partner;
  if (q.isPartner != null && q.partnership?.is_partner != null && q.isPartner !== q.partnership.is_partner) {
    throw badInput('isPartner and partnership.is_partner disagree', { field: 'isPartner' });
  }
  if (isPartner != null) search.isPartner = isPartner;
  const created = timeRange(q.createdTimeFilter, 'createdTimeFilter');
  if (created) search.created = created;
  const modified = timeRange(q.modifiedTimeFilter, 'modifiedTimeFilter');
  if (modified) search.modified = modified;
  if (q.withSupport != null) search.withSupport = q.withSupport;

  const hierarchyIds = q.forHierarchies == null ? undefined : [...new Set(q.forHierarchies.map((id) => checkTenantId(id, 'forHierarchies')))];
  const cursor = q.cursorPos == null || q.cursorPos === '' ? undefined : q.cursorPos;
  return { search, hierarchyIds, limit, cursor, page };
}
