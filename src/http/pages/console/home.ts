// GET /console: where a signed-in person lands: the tenants where they hold a role (and find one
// by name or id), each leading to its pages; and the page of any other address under /console.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../../errors.js';
import type { TenantWithRoles } from '../../../tenants/service.js';
import { html } from '../html.js';
import type { ConsoleKit } from './kit.js';
import { PER_PAGE, pageNumber, queryOf, text } from './kit.js';
import { noticeOf, pager, type View } from './layout.js';
import { CONSOLE_PATH, query, tenantHomePath } from './paths.js';

export function homePages(c: ConsoleKit) {
  return {
    /** GET /console: the tenants the person acts in */
    async tenants(req: FastifyRequest, reply: FastifyReply) {
      const who = await c.viewer(req, reply);
      if (!who) return reply;
      const name = text(queryOf(req).name)?.trim() || undefined;
      const page = pageNumber(queryOf(req).page);
      const found = await c.services.tenants.withRoles(who.principal, { name, page, perPage: PER_PAGE });
      // where a person lands after signing in: a notice of the sign-in (recovery codes left,
      // failed attempts on the account) is shown here, once
      const notice = await c.takeNotice(who);
      const view = tenantPicker({ ...found, page, perPage: PER_PAGE, name });
      return c.show(reply, 200, { ...view, body: html`${noticeOf(notice)}${view.body}` }, { who });
    },

    /** any other address under /console: a page that says so, not the API's JSON 404 */
    async unknownPage(): Promise<never> {
      throw notFound('Page');
    },
  };
}

function tenantPicker(o: { results: TenantWithRoles[]; totalCount: number; page: number; perPage: number; name: string | undefined }): View {
  const { results, totalCount, page, perPage, name } = o;
  const filter =
    name !== undefined || totalCount > perPage
      ? html`<form class="filter" method="get" action="${CONSOLE_PATH}" role="search">
<label for="name">Find a tenant by name or id</label>
<div class="inline"><input id="name" name="name" type="search" value="${name ?? ''}"><button type="submit">Find</button></div>
</form>`
      : '';
  const pagePath = (p: number) => `${CONSOLE_PATH}${query({ page: p, name })}`;
  if (results.length === 0) {
    return {
      title: 'Your tenants',
      body: html`${filter}<p>${
        name
          ? 'No tenant of yours matches. Try part of the name, or the tenant id.'
          : 'You hold no role in any tenant, so there is nothing to manage here yet. Ask an Administrator of your organisation to give you a role.'
      }</p>`,
    };
  }
  return {
    title: 'Your tenants',
    body: html`<p>Choose the tenant you want to work in: those where you hold a role, and the tenants below them.</p>
${filter}
<div class="scroll"><table>
<caption>${totalCount === 1 ? '1 tenant' : `${totalCount} tenants`}</caption>
<thead><tr><th scope="col">Tenant</th><th scope="col">ID</th><th scope="col">Your roles</th></tr></thead>
<tbody>
${results.map(
  ({ tenant, roles }) =>
    html`<tr><th scope="row"><a href="${tenantHomePath(tenant.id)}">${tenant.name}</a></th><td>${tenant.id}</td><td>${roles.join(', ')}</td></tr>\n`,
)}</tbody>
</table></div>
${pager(pagePath, page, page * perPage < totalCount)}`,
  };
}
