// The HTML of the credentials pages (credentials.ts decides what each shows, and who may see it).
// Each view returns the title and body of one page; every value goes through the escaping `html`.
import type { RoleName } from '../../../access/roles.js';
import type { Client } from '../../../credentials/model.js';
import type { Session } from '../../../sessions/model.js';
import { html } from '../html.js';
import { csrfField } from '../page-kit.js';
import { alert, pager, type View, when } from './layout.js';
import { clientPath, DELETE_PATH, FORCE_ROTATE_PATH, listPath, NEW_PATH, ROTATE_PATH } from './paths.js';
import type { Problem } from './problems.js';

/** Form fields of the role checkboxes: `role_<role id>` (the form parser keeps one value per name). */
export const ROLE_FIELD_PREFIX = 'role_';

export interface ListRights {
  create: boolean;
  rotate: boolean;
  forceRotate: boolean;
  delete: boolean;
}

/** A client's live secrets: each by its hint, with when it was last used and, in its grace period, when it stops. */
function secretsOf(c: Client) {
  return html`<ul class="secrets">${c.secrets.map(
    (s) =>
      html`<li><code>${s.hint}</code> <span class="hint">last used ${when(s.lastUsedAt)}${s.expiresAt ? html`, stops ${when(s.expiresAt)}` : ''}</span></li>`,
  )}</ul>`;
}

export function credentialList(o: {
  tenant: { id: string; name: string };
  clients: Client[];
  page: number;
  hasMore: boolean;
  rights: ListRights;
  roleNames: (c: Client) => string[];
  notice: string | undefined;
}): View {
  const { tenant, clients, rights } = o;
  const actions = rights.rotate || rights.forceRotate || rights.delete;
  const intro = rights.create
    ? html`<p><a class="button" href="${`${NEW_PATH}?tenant=${tenant.id}`}">Create a credential</a></p>`
    : html`<p class="hint">Your roles in this tenant let you see its credentials, not change them.</p>`;
  const rows = clients.map(
    (c) => html`<tr>
<th scope="row">${c.name}</th>
<td data-label="Client ID"><code>${c.clientId}</code></td>
<td data-label="Roles">${o.roleNames(c).join(', ')}</td>
<td data-label="Created">${when(c.createdAt)}</td>
<td data-label="Last used">${when(c.lastUsedAt)}</td>
<td data-label="Secrets">${secretsOf(c)}</td>
${
  actions
    ? html`<td class="row-actions">${
        rights.rotate
          ? html`<a href="${clientPath(ROTATE_PATH, tenant.id, c.clientId)}">Rotate secret<span class="visually-hidden"> of ${c.name}</span></a>`
          : ''
      }${
        rights.forceRotate
          ? html`<a href="${clientPath(FORCE_ROTATE_PATH, tenant.id, c.clientId)}">Force rotation<span class="visually-hidden"> of ${c.name}</span></a>`
          : ''
      }${rights.delete ? html`<a href="${clientPath(DELETE_PATH, tenant.id, c.clientId)}">Delete<span class="visually-hidden"> ${c.name}</span></a>` : ''}</td>`
    : ''
}
</tr>
`,
  );
  return {
    title: `API credentials of ${tenant.name}`,
    body: html`${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
<p class="lead">Tenant <strong>${tenant.name}</strong>, id ${tenant.id}. A credential is an API client: a client id and a secret that obtain tokens at the token endpoint.</p>
${intro}
${
  clients.length === 0 && o.page === 1
    ? html`<p>This tenant has no API clients.</p>`
    : html`<div class="scroll"><table class="stack">
<caption>API clients</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Client ID</th><th scope="col">Roles</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Secrets</th>${
        actions ? html`<th scope="col">Actions</th>` : ''
      }</tr></thead>
<tbody>
${rows}</tbody>
</table></div>`
}
${pager((p) => listPath(tenant.id, p), o.page, o.hasMore)}`,
  };
}

export function createForm(o: {
  session: Session;
  tenant: { id: string; name: string };
  grantable: { id: string; name: RoleName }[];
  values?: { name: string; roles: string[] };
  problem?: Problem;
}): View {
  const checked = new Set(o.values?.roles ?? o.grantable.filter((r) => r.name === 'Analyst').map((r) => r.id));
  return {
    title: 'Create a credential',
    body: html`${alert(o.problem)}
<form class="fields" method="post" action="${NEW_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}">
<label for="name">Name</label>
<input id="name" name="name" type="text" maxlength="200" required autofocus value="${o.values?.name ?? ''}" aria-describedby="name-hint">
<p id="name-hint" class="hint">Say what uses it, for example “billing export”. Unique in ${o.tenant.name}.</p>
<fieldset>
<legend>Roles</legend>
<p class="hint">What its tokens may do in ${o.tenant.name} and the tenants below it. You can give only roles you could hold yourself.</p>
${o.grantable.map(
  (r) =>
    html`<div class="choice"><input type="checkbox" id="role-${r.name}" name="${ROLE_FIELD_PREFIX}${r.id}" value="${r.id}"${checked.has(r.id) ? html` checked` : ''}><label for="role-${r.name}">${r.name}</label></div>\n`,
)}</fieldset>
<div class="actions"><button type="submit">Create credential</button><a href="${listPath(o.tenant.id)}">Cancel</a></div>
</form>`,
  };
}

/** The one page that ever shows a secret: in the response to the form that made it. */
export function secretShown(o: {
  tenant: { id: string; name: string };
  client: Client;
  secret: string;
  heading: string;
  /** a new secret of an existing client (else a new client): the page says what became of the old one */
  rotated: boolean;
  /** a forced rotation: every earlier secret and its tokens ended at once */
  forced?: boolean;
  oldSecretUntil?: Date | undefined;
}): View {
  const copyable = (id: string, label: string, value: string, what: string) => html`<label for="${id}">${label}</label>
<div class="copyable"><input id="${id}" type="text" class="mono" readonly value="${value}" autocomplete="off" spellcheck="false"><button type="button" class="copy" data-copy="${id}" hidden>Copy ${what}</button></div>
<p id="${id}-status" class="hint" role="status"></p>`;
  return {
    title: o.heading,
    body: html`<div class="warning"><p><strong>Copy the secret now: it is shown only on this page.</strong> Gatehouse keeps only a digest of it, so it cannot be shown again. Store it where the system that uses it reads secrets (a secrets manager), not in code or chat.</p></div>
<p>Credential <strong>${o.client.name}</strong> in ${o.tenant.name}.</p>
${copyable('client_id', 'Client ID', o.client.clientId, 'client ID')}
${copyable('client_secret', 'Client secret', o.secret, 'secret')}
${
  !o.rotated
    ? ''
    : o.forced
      ? html`<p>Every earlier secret of this client stopped working, and every token obtained with one is refused from now on.</p>\n`
      : o.oldSecretUntil
        ? html`<p>The previous secret keeps working until ${when(o.oldSecretUntil)}; then only this one does.</p>\n`
        : html`<p>The previous secret no longer obtains tokens.</p>\n`
}<p><a href="${listPath(o.tenant.id)}">I have stored it: back to the credentials</a></p>`,
  };
}

export const GRACE_CHOICES: readonly { seconds: number; label: string }[] = [
  { seconds: 0, label: 'Stop it at once' },
  { seconds: 3600, label: 'For 1 hour' },
  { seconds: 86_400, label: 'For 1 day' },
  { seconds: 7 * 86_400, label: 'For 7 days (the longest)' },
];

export function rotateForm(o: {
  session: Session;
  tenant: { id: string; name: string };
  client: Client;
  problem?: Problem;
  /** the grace period chosen when the form is shown again (seconds, as posted) */
  grace?: string | undefined;
}): View {
  const chosen = GRACE_CHOICES.some((g) => String(g.seconds) === o.grace) ? o.grace : '0';
  return {
    title: `Rotate the secret of ${o.client.name}`,
    body: html`${alert(o.problem)}
<p>Client ID <code>${o.client.clientId}</code>. Rotating gives this client a new secret, shown once. Tokens already issued keep working until they expire.</p>
<form class="fields" method="post" action="${ROTATE_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="client" value="${o.client.clientId}">
<label for="secret">Current secret</label>
<input id="secret" name="secret" type="password" autocomplete="off" spellcheck="false" required autofocus aria-describedby="secret-hint">
<p id="secret-hint" class="hint">The secret the client uses now: holding it is what allows a rotation. If nobody has it any more, delete the client and create a new one.</p>
<label for="grace">How long the old secret keeps working</label>
<select id="grace" name="grace" aria-describedby="grace-hint">
${GRACE_CHOICES.map((g) => html`<option value="${g.seconds}"${String(g.seconds) === chosen ? html` selected` : ''}>${g.label}</option>\n`)}</select>
<p id="grace-hint" class="hint">A grace period gives you time to deploy the new secret before the old one stops.</p>
<div class="actions"><button type="submit">Rotate secret</button><a href="${listPath(o.tenant.id)}">Cancel</a></div>
</form>`,
  };
}

export function deleteConfirmation(o: { session: Session; tenant: { id: string; name: string }; client: Client; roleNames: string[] }): View {
  return {
    title: `Delete client ${o.client.name}?`,
    body: html`<p><strong>This cannot be undone.</strong> The client’s secrets stop working at once, and every token obtained with them is refused from now on.</p>
<dl class="facts">
<dt>Client ID</dt><dd><code>${o.client.clientId}</code></dd>
<dt>Roles</dt><dd>${o.roleNames.join(', ')}</dd>
<dt>Last used</dt><dd>${when(o.client.lastUsedAt)}</dd>
</dl>
<form method="post" action="${DELETE_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="client" value="${o.client.clientId}">
<div class="actions"><button type="submit" class="danger">Delete client</button><a href="${listPath(o.tenant.id)}">Cancel</a></div>
</form>`,
  };
}

/** Forced rotation: for a secret that may have leaked. No current secret is needed, and nothing
 *  of the old ones survives (no grace period). */
export function forceRotateConfirmation(o: { session: Session; tenant: { id: string; name: string }; client: Client }): View {
  return {
    title: `Force a new secret for ${o.client.name}?`,
    body: html`<p>Use this when a secret of this client may have leaked. <strong>Every secret it has stops working at once</strong>, and every token obtained with one is refused from now on; the new secret is shown once, on the next page. Whatever uses the client fails until it has the new secret.</p>
<dl class="facts">
<dt>Client ID</dt><dd><code>${o.client.clientId}</code></dd>
<dt>Secrets now</dt><dd>${secretsOf(o.client)}</dd>
<dt>Last used</dt><dd>${when(o.client.lastUsedAt)}</dd>
</dl>
<p class="hint">If the client's current secret is at hand and nothing leaked, <a href="${clientPath(ROTATE_PATH, o.tenant.id, o.client.clientId)}">rotate it</a> instead: the old secret can then keep working for a while.</p>
<form method="post" action="${FORCE_ROTATE_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="client" value="${o.client.clientId}">
<div class="actions"><button type="submit" class="danger">Stop every secret and make a new one</button><a href="${listPath(o.tenant.id)}">Cancel</a></div>
</form>`,
  };
}
