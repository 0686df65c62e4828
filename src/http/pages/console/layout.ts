// What every console page shares: the View a family's page returns, the header (where the
// person is, in which tenant, the sections their roles there open, who is signed in), times,
// alerts, the pager and the page of a failure. Every value goes through the escaping `html`.
import type { Session } from '../../../sessions/model.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../page-kit.js';
import { ACCOUNT_PATH, CONSOLE_PATH, tenantHomePath } from './paths.js';
import type { Problem } from './problems.js';

export interface View {
  title: string;
  body: Html;
}

/** A time as people read it here: minutes, UTC, and the exact instant for machines. */
export function when(d: Date | null, never = 'never'): Html {
  if (!d) return html`${never}`;
  return html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** A form's failure, above the form: what went wrong and what to do. */
export const alert = (problem: Problem | undefined) =>
  problem ? html`<div class="error" role="alert"><p>${problem.message}</p><p>${problem.advice}</p></div>` : '';

/** A notice left by the last action (a deletion, a change), shown once. */
export const noticeOf = (notice: string | undefined) => (notice ? html`<p class="notice" role="status">${notice}</p>` : '');

/** One section of the acting tenant's pages (the tabs under the header). */
export interface Section {
  id: string;
  label: string;
  href: string;
}

/** Where the header puts the person: the acting tenant, its line of ancestors the person sees,
 *  and the sections their roles there open (the current one marked). */
export interface Place {
  tenant?: { id: string; name: string };
  /** the tenants above it the person may act in, the top first */
  ancestors?: readonly { id: string; name: string }[];
  sections?: readonly Section[];
  current?: string;
}

/** Above the title: where the page is, and who is signed in (with the way out). */
export function consoleNav(session: Session, email: string, place: Place = {}): Html {
  const { tenant, ancestors = [], sections = [], current } = place;
  return html`<div class="bar">
<nav aria-label="Breadcrumb"><ol class="${tenant ? 'crumbs in-tenant' : 'crumbs'}"><li><a href="${CONSOLE_PATH}">Your tenants</a></li>${ancestors.map(
    (a) => html`<li><a href="${tenantHomePath(a.id)}">${a.name}</a></li>`,
  )}${tenant ? html`<li><a href="${tenantHomePath(tenant.id)}">${tenant.name}</a></li>` : ''}</ol></nav>
<form class="account" method="post" action="/logout">${csrfField(session)}<span>Signed in as <strong>${email}</strong></span> <a href="${ACCOUNT_PATH}">Your account</a> <button type="submit" class="link">Sign out</button></form>
</div>
${
  tenant && sections.length > 0
    ? html`<nav class="sections" aria-label="${`Sections of ${tenant.name}`}"><ul>${sections.map(
        (s) => html`<li><a href="${s.href}"${s.id === current ? html` aria-current="page"` : ''}>${s.label}</a></li>`,
      )}</ul></nav>
`
    : ''
}`;
}

/** Previous and next links, by page number (the pagination of `pageNum`/`page`). */
export function pager(path: (page: number) => string, page: number, hasMore: boolean): Html {
  if (page <= 1 && !hasMore) return html``;
  return html`<nav class="pager" aria-label="Pages">${page > 1 ? html`<a href="${path(page - 1)}" rel="prev">Previous page</a>` : ''}<span>Page ${page}</span>${
    hasMore ? html`<a href="${path(page + 1)}" rel="next">Next page</a>` : ''
  }</nav>`;
}

/** The page of a failure that is not a form's to show (problems.ts). */
export function problemPage(problem: Problem, back: { href: string; label: string }, requestId: string): View {
  return {
    title: problem.title,
    body: html`<p class="error" role="alert">${problem.message}</p>
<p>${problem.advice}</p>
${problem.code === 'INTERNAL' ? html`<p class="hint">Request id: <code>${requestId}</code></p>` : ''}
<p><a href="${back.href}">${back.label}</a></p>`,
  };
}
