// The HTML of the audit trail page (audit.ts): the filters as a GET form, then the events, newest
// first, a page at a time (the cursor of auditEvents).
import type { StoredAuditEvent } from '../../../audit/model.js';
import type { AuditEventPage } from '../../../audit/service.js';
import { html } from '../html.js';
import { alert, type View, when } from './layout.js';
import { AUDIT_PATH, query } from './paths.js';
import type { Problem } from './problems.js';

/** The filters as typed (the form shows them again). `in`: a tenant below, or the tenant itself. */
export interface AuditFilterValues {
  from: string;
  to: string;
  actor: string;
  action: string;
  outcome: string;
  in: string;
}

const OUTCOMES = [
  { value: '', label: 'Any outcome' },
  { value: 'success', label: 'Success' },
  { value: 'failure', label: 'Failure' },
  { value: 'refused', label: 'Refused' },
];

/** Who acted, as a person reads it. */
function actorOf(e: StoredAuditEvent) {
  const kind = { client: 'API client', user: 'User', system: 'Gatehouse', operator: 'Operator', anonymous: 'Unauthenticated' }[e.actor.kind];
  return html`${kind} <code>${e.actor.id}</code>${e.actor.tenantId ? html` <span class="hint">of tenant ${e.actor.tenantId}</span>` : ''}`;
}

/** The details, as key: value lines (never a secret: at most its hint). */
function detailsOf(e: StoredAuditEvent) {
  const entries = Object.entries(e.details);
  if (entries.length === 0 && !e.address) return '';
  return html`<dl class="details">${entries.map(
    ([k, v]) => html`<dt>${k}</dt><dd>${typeof v === 'string' ? v : JSON.stringify(v)}</dd>`,
  )}${e.address ? html`<dt>from</dt><dd>${e.address}</dd>` : ''}${e.requestId ? html`<dt>request</dt><dd><code>${e.requestId}</code></dd>` : ''}</dl>`;
}

export function auditTrail(o: {
  tenant: { id: string; name: string };
  values: AuditFilterValues;
  page?: AuditEventPage;
  after: string | undefined;
  problem?: Problem;
}): View {
  const { tenant, values: v, page } = o;
  const filters = { tenant: tenant.id, from: v.from, to: v.to, actor: v.actor, action: v.action, outcome: v.outcome, in: v.in };
  const input = (name: keyof AuditFilterValues, label: string, type: string, hint?: string) => html`<div class="field">
<label for="f-${name}">${label}</label>
<input id="f-${name}" name="${name}" type="${type}" value="${v[name]}"${hint ? html` aria-describedby="f-${name}-hint"` : ''}>
${hint ? html`<p id="f-${name}-hint" class="hint">${hint}</p>` : ''}</div>`;
  const form = html`<form class="filters" method="get" action="${AUDIT_PATH}" role="search" aria-label="Filter the audit trail">
<input type="hidden" name="tenant" value="${tenant.id}">
${input('from', 'From (UTC)', 'datetime-local')}
${input('to', 'To (UTC)', 'datetime-local')}
${input('actor', 'Actor', 'text', 'A user’s or client’s id, or an operator’s name')}
${input('action', 'Action', 'text', 'For example user.signed_in or client.created')}
<div class="field"><label for="f-outcome">Outcome</label>
<select id="f-outcome" name="outcome">${OUTCOMES.map((x) => html`<option value="${x.value}"${x.value === v.outcome ? html` selected` : ''}>${x.label}</option>`)}</select></div>
${input('in', 'In tenant', 'text', `${tenant.name} or a tenant below it, by id`)}
<div class="actions"><button type="submit">Show events</button><a href="${AUDIT_PATH}${query({ tenant: tenant.id })}">Clear the filters</a></div>
</form>`;
  const rows = (page?.events ?? []).map(
    (e) => html`<tr>
<td data-label="When">${when(e.occurredAt)}</td>
<th scope="row" data-label="Action"><code>${e.action}</code>${e.outcome !== 'success' ? html` <span class="outcome-${e.outcome}">${e.outcome}</span>` : ''}</th>
<td data-label="Actor">${actorOf(e)}</td>
<td data-label="Target">${e.target.kind} <code>${e.target.id}</code></td>
<td data-label="Tenant">${e.tenantId}</td>
<td data-label="Details">${detailsOf(e)}</td>
</tr>
`,
  );
  const list = !page
    ? ''
    : page.events.length === 0
      ? html`<p>${o.after ? 'No more events match these filters.' : 'No events match these filters.'}</p>`
      : html`<div class="scroll"><table class="stack">
<caption>Events, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Target</th><th scope="col">Tenant</th><th scope="col">Details</th></tr></thead>
<tbody>
${rows}</tbody>
</table></div>`;
  const pages =
    page && (page.hasMore || o.after)
      ? html`<nav class="pager" aria-label="Pages">${o.after ? html`<a href="${AUDIT_PATH}${query(filters)}">Newest events</a>` : ''}${
          page.hasMore && page.cursor ? html`<a href="${AUDIT_PATH}${query({ ...filters, after: page.cursor })}" rel="next">Older events</a>` : ''
        }</nav>`
      : '';
  return {
    title: `Audit trail of ${tenant.name}`,
    body: html`<p class="lead">Who signed in from where, and what changed, in ${tenant.name} and the tenants below it. Events are kept as the operators of this service decided; none holds a secret.</p>
${alert(o.problem)}
${form}
${list}
${pages}`,
  };
}
