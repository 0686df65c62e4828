// The HTML of a tenant's overview and of the tenant search (tenants.ts decides what each shows,
// and who may see which links). Every value goes through the escaping `html`.
import type { TenantLabel } from '../../../labels/model.js';
import type { AssignedSubscription } from '../../../subscriptions/store.js';
import { DAY_MS, type Environment, type Tenant } from '../../../tenants/model.js';
import { html, type Html } from '../html.js';
import { alert, noticeOf, pager, type View, when } from './layout.js';
import {
  query,
  TENANT_EDIT_PATH,
  TENANT_PATH,
  TENANT_LABELS_PATH,
  TENANT_NEW_PATH,
  TENANT_OFFERINGS_PATH,
  TENANT_SUBSCRIPTIONS_PATH,
  TENANT_SUPPORT_PATH,
  TENANTS_PATH,
  tenantHomePath,
  tenantPage,
} from './paths.js';
import type { Problem } from './problems.js';

/** What the viewer's roles allow about the tenant shown (the links and forms offered). */
export interface TenantRights {
  edit: boolean;
  /** environments, disabling, expiry: decided in the parent */
  manage: boolean;
  support: boolean;
  /** create children (a partner) */
  create: boolean;
  /** labels and subscriptions of a partner above it, or its own offerings */
  offerings: boolean;
}

const yesNo = (b: boolean) => (b ? 'Yes' : 'No');

/** A tenant's state in words: active, or disabled (and why, when its expiry did it). */
export const stateOf = (t: Tenant) => (t.enabled ? 'Active' : 'Disabled');

/** The expiry as a person needs it: when, and how many days are left before it is disabled. */
export function expiryOf(t: Tenant, disablesAt: Date | null, now: Date): Html {
  if (!t.expiresAt || !disablesAt) return html`Does not expire.`;
  const left = Math.ceil((disablesAt.getTime() - now.getTime()) / DAY_MS);
  const past = t.expiresAt.getTime() <= now.getTime();
  return html`${past ? 'Expired' : 'Expires'} ${when(t.expiresAt)}. ${
    !t.enabled
      ? 'It is disabled.'
      : left > 0
        ? html`<strong>${left === 1 ? '1 day' : `${left} days`} left</strong> before it is disabled (on ${when(disablesAt)}).`
        : 'It is disabled at the next run of the expiry job.'
  }`;
}

export function supportOf(t: Tenant, active: boolean): Html {
  if (!active) return html`Off: vendor Support staff cannot read this tenant.`;
  return html`On${t.supportExpiresAt ? html` until ${when(t.supportExpiresAt)}` : ' until turned off'}: vendor Support staff may read this tenant (and change nothing).${
    t.supportReason ? html` Reason: ${t.supportReason}` : ''
  }`;
}

export function environmentTable(envs: Environment[]): Html {
  if (envs.length === 0) return html`<p>Not enabled in any environment.</p>`;
  return html`<div class="scroll"><table class="stack" aria-labelledby="environments-heading">
<thead><tr><th scope="col">Environment</th><th scope="col">Enabled</th><th scope="col">Last changed</th></tr></thead>
<tbody>${envs.map(
    (e) =>
      html`<tr><th scope="row">${e.name}</th><td data-label="Enabled">${yesNo(e.enabled)}</td><td data-label="Last changed">${when(e.updatedAt)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function labelTable(labels: TenantLabel[], owners: Map<string, string>): Html {
  if (labels.length === 0) return html`<p>No labels.</p>`;
  return html`<div class="scroll"><table class="stack" aria-labelledby="labels-heading">
<thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Owner</th></tr></thead>
<tbody>${labels.map(
    (l) =>
      html`<tr><th scope="row">${l.name}${l.restricted ? ' (restricted)' : ''}</th><td data-label="Value">${l.value ?? ''}</td><td data-label="Owner">${
        owners.get(l.ownerPartnerTenantId) ?? `tenant ${l.ownerPartnerTenantId}`
      }</td></tr>`,
  )}</tbody></table></div>`;
}

export function subscriptionTable(assigned: AssignedSubscription[]): Html {
  if (assigned.length === 0) return html`<p>No subscriptions.</p>`;
  return html`<div class="scroll"><table class="stack" aria-labelledby="subscriptions-heading">
<thead><tr><th scope="col">Subscription</th><th scope="col">Service</th><th scope="col">Partner</th></tr></thead>
<tbody>${assigned.map(
    (a) =>
      html`<tr><th scope="row">${a.subscription.name}${a.subscription.retiredAt ? ' (retired)' : ''}</th><td data-label="Service">${a.service.name}</td><td data-label="Partner">${a.subscription.partnerTenantId}</td></tr>`,
  )}</tbody></table></div>`;
}

/** A list of tenants: name (a link to its page), id, kind, state, creation. */
export function tenantTable(tenants: Tenant[], caption: string): Html {
  return html`<div class="scroll"><table class="stack">
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
<tbody>${tenants.map(
    (t) =>
      html`<tr><th scope="row"><a href="${tenantHomePath(t.id)}">${t.name}</a></th><td data-label="Id">${t.id}</td><td data-label="Kind">${
        t.isPartner ? 'Partner' : 'Tenant'
      }</td><td data-label="State">${stateOf(t)}</td><td data-label="Created">${when(t.createdAt)}</td></tr>`,
  )}</tbody></table></div>`;
}

export function overview(o: {
  tenant: Tenant;
  parent: Tenant | undefined;
  envs: Environment[];
  labels: TenantLabel[];
  owners: Map<string, string>;
  assigned: AssignedSubscription[];
  children: { tenants: Tenant[]; page: number; hasMore: boolean; total: number | null } | undefined;
  disablesAt: Date | null;
  supportActive: boolean;
  now: Date;
  rights: TenantRights;
  notice: string | undefined;
}): View {
  const { tenant: t, rights } = o;
  const link = (path: string, label: string) => html`<li><a href="${tenantPage(path, t.id)}">${label}</a></li>`;
  const actions = [
    rights.edit ? link(TENANT_EDIT_PATH, rights.manage ? 'Edit, enable or disable, expiry' : 'Edit name and profile') : '',
    rights.support ? link(TENANT_SUPPORT_PATH, 'Support access') : '',
    link(TENANT_LABELS_PATH, 'Labels'),
    link(TENANT_SUBSCRIPTIONS_PATH, 'Subscriptions'),
    t.isPartner ? link(TENANT_OFFERINGS_PATH, 'Services and partner subscriptions') : '',
    t.isPartner && rights.create ? link(TENANT_NEW_PATH, 'Create a tenant under it') : '',
    t.isPartner ? link(TENANTS_PATH, 'Search the tenants below it') : '',
  ];
  const kids = o.children;
  return {
    title: t.name,
    body: html`${noticeOf(o.notice)}
<p class="lead">${t.isPartner ? 'Partner' : 'Tenant'} <strong>${t.name}</strong>, id ${t.id}${
      o.parent ? html`, under <a href="${tenantHomePath(o.parent.id)}">${o.parent.name}</a>` : ''
    }.</p>
<nav aria-label="Actions on this tenant"><ul class="actions-list">${actions}</ul></nav>
<h2 id="facts-heading">Facts</h2>
<dl class="facts tenant-facts">
<dt>State</dt><dd>${stateOf(t)}</dd>
<dt>Expiry</dt><dd>${expiryOf(t, o.disablesAt, o.now)}</dd>
<dt>Support access</dt><dd>${supportOf(t, o.supportActive)}</dd>
<dt>Domain</dt><dd>${t.domain ?? 'none'}</dd>
<dt>Description</dt><dd>${t.description ?? 'none'}</dd>
<dt>Response actions allowed</dt><dd>${yesNo(t.allowResponseActions)}</dd>
<dt>Actions approver</dt><dd>${t.actionsApprover ?? 'none'}</dd>
<dt>Created</dt><dd>${when(t.createdAt)}</dd>
<dt>Last changed</dt><dd>${when(t.updatedAt)}</dd>
</dl>
<h2 id="environments-heading">Environments</h2>
${environmentTable(o.envs)}
<h2 id="labels-heading">Labels</h2>
${labelTable(o.labels, o.owners)}
<h2 id="subscriptions-heading">Subscriptions</h2>
${subscriptionTable(o.assigned)}
${
  kids
    ? html`<h2>Tenants under it</h2>
${
  kids.tenants.length === 0 && kids.page === 1
    ? html`<p>No tenants under it${rights.create ? html`: <a href="${tenantPage(TENANT_NEW_PATH, t.id)}">create the first</a>` : ''}.</p>`
    : html`${kids.total !== null ? html`<p>${kids.total === 1 ? '1 tenant' : `${kids.total} tenants`} directly under it.</p>` : ''}${tenantTable(kids.tenants, `Tenants under ${t.name}`)}`
}
${pager((p) => tenantPage(TENANT_PATH, t.id, { page: p > 1 ? p : undefined }), kids.page, kids.hasMore)}`
    : ''
}`,
  };
}

/** The search form's fields, as given (GET): each one a filter of the tenants query. */
export const SEARCH_FIELDS = [
  'name',
  'ids',
  'env',
  'env_state',
  'label',
  'subscription',
  'kind',
  'parent',
  'support',
  'created_from',
  'created_to',
  'modified_from',
  'modified_to',
  'order_by',
  'order_dir',
  'per_page',
  'mode',
] as const;
/** the fields behind "More filters" (open when one is given other than its default) */
const MORE_FIELDS = SEARCH_FIELDS.filter((f) => !['name', 'env', 'env_state', 'kind'].includes(f));
const DEFAULTS: SearchValues = { order_by: 'Id', order_dir: 'asc', mode: 'page' };
export type SearchValues = Partial<Record<(typeof SEARCH_FIELDS)[number], string>>;

const option = (value: string, label: string, chosen: string | undefined) =>
  html`<option value="${value}"${value === (chosen ?? '') ? html` selected` : ''}>${label}</option>`;

function select(id: keyof SearchValues, label: string, options: [string, string][], v: SearchValues, hint?: string): Html {
  return html`<div><label for="${id}">${label}</label><select id="${id}" name="${id}"${hint ? html` aria-describedby="${id}-hint"` : ''}>${options.map(
    ([value, l]) => option(value, l, v[id]),
  )}</select>${hint ? html`<p id="${`${id}-hint`}" class="hint">${hint}</p>` : ''}</div>`;
}

function field(id: keyof SearchValues, label: string, v: SearchValues, type = 'text', hint?: string): Html {
  return html`<div><label for="${id}">${label}</label><input id="${id}" name="${id}" type="${type}" value="${v[id] ?? ''}"${
    hint ? html` aria-describedby="${id}-hint"` : ''
  }>${hint ? html`<p id="${`${id}-hint`}" class="hint">${hint}</p>` : ''}</div>`;
}

export function searchPage(o: {
  tenant: Tenant;
  values: SearchValues;
  problem?: Problem | undefined;
  result?: { tenants: Tenant[]; total: number | null; hasMore: boolean; cursor: string | null; page: number | undefined; after: boolean } | undefined;
  /** the address of these results with other paging values */
  at: (paging: { page?: number; cursor?: string }) => string;
}): View {
  const v = o.values;
  const r = o.result;
  return {
    title: `Search ${o.tenant.name} and the tenants below it`,
    body: html`${alert(o.problem)}
<form class="search-form" method="get" action="${TENANTS_PATH}" role="search" aria-label="Tenants">
<input type="hidden" name="tenant" value="${o.tenant.id}">
<div class="grid">
${field('name', 'Name or id', v, 'text', '% is a wildcard; without it the whole name must match.')}
${select(
  'env',
  'Environment',
  [
    ['', 'Any'],
    ['echo', 'echo'],
    ['delta', 'delta'],
    ['pilot', 'pilot'],
  ],
  v,
)}
${select(
  'env_state',
  'Enabled there',
  [
    ['', 'Any'],
    ['yes', 'Enabled'],
    ['no', 'Not enabled'],
  ],
  v,
  'Without an environment: active or not active.',
)}
${select(
  'kind',
  'Kind',
  [
    ['', 'Any'],
    ['partner', 'Partners'],
    ['tenant', 'Not partners'],
  ],
  v,
)}
</div>
<details${MORE_FIELDS.some((f) => v[f] !== undefined && v[f] !== DEFAULTS[f]) ? html` open` : ''}><summary>More filters, order and pages</summary>
<div class="grid">
${field('ids', 'Only these ids', v, 'text', 'Separate ids with spaces or commas.')}
${field('label', 'Label name', v, 'text')}
${field('subscription', 'Subscription name', v, 'text')}
${field('parent', 'Directly under tenant id', v, 'text')}
${select(
  'support',
  'Support access',
  [
    ['', 'Any'],
    ['on', 'On'],
    ['off', 'Off'],
  ],
  v,
)}
${field('created_from', 'Created from (UTC)', v, 'datetime-local')}
${field('created_to', 'Created until (UTC)', v, 'datetime-local')}
${field('modified_from', 'Changed from (UTC)', v, 'datetime-local')}
${field('modified_to', 'Changed until (UTC)', v, 'datetime-local')}
${select(
  'order_by',
  'Order by',
  [
    ['Id', 'Id'],
    ['Name', 'Name'],
    ['CreatedAt', 'Creation'],
    ['UpdatedAt', 'Last change'],
  ],
  { ...v, order_by: v.order_by ?? 'Id' },
)}
${select(
  'order_dir',
  'Direction',
  [
    ['asc', 'Ascending'],
    ['desc', 'Descending'],
  ],
  { ...v, order_dir: v.order_dir ?? 'asc' },
)}
${field('per_page', 'Per page', v, 'number', 'From 1 to 500; 10 if left empty.')}
${select(
  'mode',
  'Pages',
  [
    ['page', 'Numbered, with the total'],
    ['cursor', 'Next page only (faster)'],
  ],
  { ...v, mode: v.mode ?? 'page' },
)}
</div>
</details>
<div class="actions"><button type="submit">Search</button><a href="${tenantPage(TENANTS_PATH, o.tenant.id)}">Clear the filters</a></div>
</form>
${
  r
    ? html`<h2 id="results">Results</h2>
<p role="status">${r.total !== null ? (r.total === 1 ? '1 tenant matches.' : `${r.total} tenants match.`) : r.tenants.length === 0 ? 'No tenant on this page.' : `${r.tenants.length} tenants on this page.`}</p>
${r.tenants.length > 0 ? tenantTable(r.tenants, 'Tenants found') : ''}
${
  r.page !== undefined
    ? pager((p) => o.at({ page: p }), r.page, r.hasMore)
    : html`<nav class="pager" aria-label="Pages">${
        r.after ? html`<a href="${o.at({})}">First page</a>` : ''
      }${r.hasMore && r.cursor ? html`<a href="${o.at({ cursor: r.cursor })}" rel="next">Next page</a>` : ''}</nav>`
}`
    : ''
}`,
  };
}

export const searchQuery = (tenantId: string, v: SearchValues, paging: { page?: number; cursor?: string }) =>
  `${TENANTS_PATH}${query({ tenant: tenantId, ...v, page: paging.page && paging.page > 1 ? paging.page : undefined, cursor: paging.cursor })}`;
