// The HTML of the users pages (users.ts decides what each shows, and who may see it). Each view
// returns the title and body of one page; every value goes through the escaping `html`.
import type { RoleName } from '../../../access/roles.js';
import { roleName } from '../../../access/roles.js';
import type { Session } from '../../../sessions/model.js';
import type { RoleAssignment } from '../../../access/principal.js';
import { setupPending, type User } from '../../../users/model.js';
import { html } from '../html.js';
import { csrfField } from '../page-kit.js';
import { alert, noticeOf, pager, type View, when } from './layout.js';
import {
  USER_DELETE_PATH,
  USER_DISABLE_PATH,
  USER_ENABLE_PATH,
  USER_INVITE_PATH,
  USER_PATH,
  USER_RESET_PATH,
  USER_UNLOCK_PATH,
  USER_ROLE_ASSIGN_PATH,
  USER_ROLE_REMOVE_PATH,
  type UserFilters,
  USERS_PATH,
  userPath,
  usersPath,
} from './paths.js';
import type { Problem } from './problems.js';

type TenantRef = { id: string; name: string };
type RoleChoice = { id: string; name: RoleName };

/** What the role form was sent with: the role, its end, and `in`, the tenant it is given in (empty: the page's). */
export type RoleFormValues = { role: string; expires: string; in: string };

/** the address's state (docs/users.md "Invitations and proven addresses") in a person's words */
export const EMAIL_STATUS_WORDS: Record<User['emailStatus'], string> = {
  verified: 'Proven: the person followed a link mailed to it, or signed in through single sign-on in a domain this organisation proved',
  unverified: 'Not proven yet: an account elsewhere may take this address by proving it first',
  claimed_elsewhere:
    'Proven by another account: this account can no longer sign in with it, and its set-up link stopped working. Delete it, or invite the person with another address',
};

export function statusOf(u: User): 'Disabled' | 'Set-up pending' | 'Active' {
  if (u.status === 'disabled') return 'Disabled';
  return setupPending(u) ? 'Set-up pending' : 'Active';
}

const nameOf = (u: User) => u.displayName || u.email;

export const STATUS_CHOICES = [
  { value: 'active', label: 'Active' },
  { value: 'pending', label: 'Set-up pending' },
  { value: 'disabled', label: 'Disabled' },
] as const;
export const SIGNIN_CHOICES = [
  { value: 'password', label: 'Password and authenticator' },
  { value: 'sso', label: 'Single sign-on' },
] as const;
export const LAST_CHOICES = [
  { value: 'never', label: 'Never signed in' },
  { value: '30d', label: 'In the last 30 days' },
  { value: 'stale90', label: 'Not in the last 90 days' },
] as const;

function select(id: string, label: string, chosen: string | undefined, choices: readonly { value: string; label: string }[]) {
  return html`<div class="filter-field"><label for="${id}">${label}</label>
<select id="${id}" name="${id}"><option value="">Any</option>${choices.map(
    (c) => html`<option value="${c.value}"${c.value === chosen ? html` selected` : ''}>${c.label}</option>`,
  )}</select></div>`;
}

export function userList(o: {
  tenant: TenantRef;
  users: User[];
  filters: UserFilters;
  roles: RoleChoice[];
  page: number;
  hasMore: boolean;
  manage: boolean;
  roleNames: (u: User) => string[];
  notice: string | undefined;
}): View {
  const { tenant, users, filters: f } = o;
  const intro = o.manage
    ? html`<p><a class="button" href="${`${USER_INVITE_PATH}?tenant=${tenant.id}`}">Invite a user</a></p>`
    : html`<p class="hint">Your roles in this tenant let you see its users, not change them.</p>`;
  const filterForm = html`<form class="filter users-filter" method="get" action="${USERS_PATH}" role="search">
<input type="hidden" name="tenant" value="${tenant.id}">
<div class="filter-field"><label for="email">E-mail address</label><input id="email" name="email" type="search" value="${f.email ?? ''}" aria-describedby="email-hint"></div>
${select(
  'role',
  'Holds the role (in any tenant)',
  f.role,
  o.roles.map((r) => ({ value: r.id, label: r.name })),
)}
${select('status', 'Status', f.status, STATUS_CHOICES)}
${select('signin', 'Signs in with', f.signin, SIGNIN_CHOICES)}
${select('last', 'Last sign-in', f.last, LAST_CHOICES)}
<div class="filter-field"><button type="submit">Filter</button></div>
<p id="email-hint" class="hint">The whole address, or part of it with % for any characters (for example %@example.com).</p>
</form>`;
  const rows = users.map(
    (u) => html`<tr>
<th scope="row"><a href="${userPath(USER_PATH, tenant.id, u.id)}">${u.email}</a>${u.displayName ? html`<br><span class="hint">${u.displayName}</span>` : ''}</th>
<td data-label="Roles">${o.roleNames(u).join(', ') || 'none'}</td>
<td data-label="Status">${statusOf(u)}</td>
<td data-label="Signs in with">${u.ssoSignIn ? 'Single sign-on' : 'Password'}</td>
<td data-label="Last sign-in">${when(u.lastSignInAt)}</td>
</tr>
`,
  );
  return {
    title: `Users of ${tenant.name}`,
    body: html`${noticeOf(o.notice)}
<p class="lead">Tenant <strong>${tenant.name}</strong>, id ${tenant.id}: the people whose home tenant it is.</p>
${intro}
${filterForm}
${
  users.length === 0
    ? html`<p>${f.email || f.role || f.status || f.signin || f.last ? 'No user matches the filters.' : o.page === 1 ? 'This tenant has no users.' : 'No more users.'}</p>`
    : html`<div class="scroll"><table class="stack">
<caption>Users</caption>
<thead><tr><th scope="col">User</th><th scope="col">Roles</th><th scope="col">Status</th><th scope="col">Signs in with</th><th scope="col">Last sign-in</th></tr></thead>
<tbody>
${rows}</tbody>
</table></div>`
}
${pager((p) => usersPath(tenant.id, f, p), o.page, o.hasMore)}`,
  };
}

export function inviteForm(o: {
  session: Session;
  tenant: TenantRef;
  grantable: RoleChoice[];
  values?: { email: string; displayName: string; role: string };
  problem?: Problem;
}): View {
  const chosen = o.values?.role ?? o.grantable.find((r) => r.name === 'Analyst')?.id;
  return {
    title: 'Invite a user',
    body: html`${alert(o.problem)}
<p>The new user gets a set-up link: they open it to choose a password and enrol an authenticator. Give it to them yourself; it is shown once.</p>
<form class="fields" method="post" action="${USER_INVITE_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" maxlength="254" required autofocus autocomplete="off" value="${o.values?.email ?? ''}" aria-describedby="email-hint">
<p id="email-hint" class="hint">They sign in with it. Unique across every tenant.</p>
<label for="display_name">Name (optional)</label>
<input id="display_name" name="display_name" type="text" maxlength="200" autocomplete="off" value="${o.values?.displayName ?? ''}">
<fieldset>
<legend>Role in ${o.tenant.name}</legend>
<p class="hint">You can give only roles you could hold yourself. More roles can be given on the user’s page.</p>
${o.grantable.map(
  (r) =>
    html`<div class="choice"><input type="radio" id="role-${r.name}" name="role" value="${r.id}"${r.id === chosen ? html` checked` : ''}><label for="role-${r.name}">${r.name}</label></div>\n`,
)}</fieldset>
<div class="actions"><button type="submit">Invite</button><a href="${usersPath(o.tenant.id)}">Cancel</a></div>
</form>`,
  };
}

/** The one page that ever shows a set-up link: in the answer to the form that made it. With an
 *  SMTP server the link was mailed instead (`url` null): the page says where it went. */
export function setupLinkShown(o: { tenant: TenantRef; user: User; url: string | null; expiresAt: Date; heading: string; reset: boolean }): View {
  if (o.url === null) {
    return {
      title: o.heading,
      body: html`<p role="status"><strong>Set-up link sent to ${o.user.email}.</strong> It works once, until ${when(o.expiresAt)}. Completing the set-up through it proves the address is theirs.</p>
${o.reset ? html`<p>The password, authenticator and recovery codes of ${o.user.email} were cleared; their sessions ended.</p>\n` : ''}<p>If it does not arrive, check the address, then reset their sign-in to send a new link; an operator sees the mail's state with <code>gatehouse mail</code>.</p>
<p><a href="${userPath(USER_PATH, o.tenant.id, o.user.id)}">To the user’s page</a></p>`,
    };
  }
  return {
    title: o.heading,
    body: html`<div class="warning"><p><strong>Copy the set-up link now: it is shown only on this page.</strong> Give it to ${o.user.email} yourself, by a channel you trust. It works once, until ${when(o.expiresAt)}.</p><p>No mail server is configured, so it was not mailed (only written to the service’s outbox folder), and using it does not prove the address.</p></div>
${o.reset ? html`<p>The password, authenticator and recovery codes of ${o.user.email} were cleared; their sessions ended.</p>\n` : ''}<label for="setup_url">Set-up link for ${o.user.email}</label>
<div class="copyable"><input id="setup_url" type="text" class="mono" readonly value="${o.url}" autocomplete="off" spellcheck="false"><button type="button" class="copy" data-copy="setup_url" hidden>Copy link</button></div>
<p id="setup_url-status" class="hint" role="status"></p>
<p><a href="${userPath(USER_PATH, o.tenant.id, o.user.id)}">I have passed it on: to the user’s page</a></p>`,
  };
}

const hidden = (tenant: TenantRef, user: User) =>
  html`<input type="hidden" name="tenant" value="${tenant.id}"><input type="hidden" name="user" value="${user.id}">`;

export function userPage(o: {
  session: Session;
  tenant: TenantRef;
  user: User;
  now: Date;
  /** tenant names by id, for the assignments ("tenant <id>" where the viewer does not see it) */
  tenantName: (id: string) => string;
  manage: boolean;
  self: boolean;
  grantable: RoleChoice[];
  /** whether the viewer may remove the assignment (acting in its tenant) */
  removable: (a: RoleAssignment) => boolean;
  /** the tenants right below this one, offered for giving a role there */
  below: TenantRef[];
  values?: RoleFormValues;
  problem?: Problem | undefined;
  notice?: string | undefined;
}): View {
  const { user: u, tenant } = o;
  const canChange = o.manage && !o.self;
  const assignments = [...u.roleAssignments].sort((a, b) => a.tenantId.localeCompare(b.tenantId) || a.roleId.localeCompare(b.roleId));
  const roleRows = assignments.map((a) => {
    const expired = a.expiresAt !== null && a.expiresAt <= o.now;
    const name = roleName(a.roleId) ?? a.roleId;
    return html`<tr>
<th scope="row">${name}</th>
<td data-label="Tenant">${o.tenantName(a.tenantId)}</td>
<td data-label="Until">${a.expiresAt ? html`${when(a.expiresAt)}${expired ? ' (expired)' : ''}` : 'No end'}</td>
${
  canChange
    ? html`<td class="row-actions">${
        o.removable(a)
          ? html`<form method="post" action="${USER_ROLE_REMOVE_PATH}">${csrfField(o.session)}${hidden(tenant, u)}<input type="hidden" name="in" value="${a.tenantId}"><input type="hidden" name="assignment" value="${a.id}"><button type="submit" class="link">Remove<span class="visually-hidden"> ${name} in ${o.tenantName(a.tenantId)}</span></button></form>`
          : ''
      }</td>`
    : ''
}
</tr>
`;
  });
  // the tenants right below, offered as they are typed in (any id below can be entered)
  const belowList =
    o.below.length > 0 ? html`<datalist id="in-below">${o.below.map((b) => html`<option value="${b.id}">${b.name}</option>`)}</datalist>` : '';
  const assignForm = canChange
    ? html`<h2>Give a role</h2>
<form class="fields" method="post" action="${USER_ROLE_ASSIGN_PATH}">${csrfField(o.session)}${hidden(tenant, u)}
<label for="role">Role</label>
<select id="role" name="role">${o.grantable.map((r) => html`<option value="${r.id}"${r.id === o.values?.role ? html` selected` : ''}>${r.name}</option>`)}</select>
<label for="in">In the tenant (optional)</label>
<input id="in" name="in" type="text" inputmode="numeric" autocomplete="off" value="${o.values?.in ?? ''}" aria-describedby="in-hint"${o.below.length > 0 ? html` list="in-below"` : ''}>
${belowList}
<p id="in-hint" class="hint">Leave it empty to give the role in ${tenant.name}, the user’s home tenant. To give it in a tenant below it (a customer’s, for example), enter that tenant’s id.</p>
<label for="expires">Until (optional)</label>
<input id="expires" name="expires" type="datetime-local" value="${o.values?.expires ?? ''}" aria-describedby="expires-hint">
<p id="expires-hint" class="hint">A date and time in UTC; leave it empty for a role with no end. Giving a role the user holds in that tenant already replaces its end.</p>
<div class="actions"><button type="submit">Give role</button></div>
</form>`
    : '';
  const actions = canChange
    ? html`<h2>Account</h2>
<div class="actions">
${
  u.status === 'disabled'
    ? html`<form method="post" action="${USER_ENABLE_PATH}">${csrfField(o.session)}${hidden(tenant, u)}<button type="submit">Enable</button></form>`
    : html`<form method="post" action="${USER_DISABLE_PATH}">${csrfField(o.session)}${hidden(tenant, u)}<button type="submit">Disable</button></form>`
}
<form method="post" action="${USER_UNLOCK_PATH}">${csrfField(o.session)}${hidden(tenant, u)}<button type="submit">Unlock sign-in</button></form>
<form method="post" action="${USER_RESET_PATH}">${csrfField(o.session)}${hidden(tenant, u)}<button type="submit">Reset sign-in</button></form>
<a class="button danger" href="${userPath(USER_DELETE_PATH, tenant.id, u.id)}">Delete…</a>
</div>
<p class="hint">Disabling ends the user’s sessions and tokens at once. Unlocking clears the failed sign-in attempts that hold them back and keeps their password and authenticator; if wrong codes were tried after a correct password, someone knows the password: reset instead. Resetting clears their password, authenticator and recovery codes and gives a new set-up link.</p>`
    : o.self
      ? html`<p class="hint">This is you: nobody changes their own roles or account here. Your own password and sessions are on <a href="/console/account">your account page</a>.</p>`
      : '';
  return {
    title: nameOf(u),
    body: html`${noticeOf(o.notice)}${alert(o.problem)}
<dl class="facts">
<dt>E-mail address</dt><dd>${u.email}</dd>
<dt>Address</dt><dd>${EMAIL_STATUS_WORDS[u.emailStatus]}</dd>
<dt>Status</dt><dd>${statusOf(u)}</dd>
<dt>Signs in with</dt><dd>${u.ssoSignIn ? 'Single sign-on' : 'Password and authenticator'}</dd>
<dt>Last sign-in</dt><dd>${when(u.lastSignInAt)}</dd>
<dt>Created</dt><dd>${when(u.createdAt)}</dd>
<dt>User id</dt><dd><code>${u.id}</code></dd>
</dl>
<h2>Roles</h2>
${
  assignments.length === 0
    ? html`<p>This user holds no role.</p>`
    : html`<div class="scroll"><table class="stack">
<caption class="visually-hidden">Roles of ${u.email}</caption>
<thead><tr><th scope="col">Role</th><th scope="col">Tenant</th><th scope="col">Until</th>${canChange ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
<tbody>
${roleRows}</tbody>
</table></div>`
}
${assignForm}
${actions}
<p><a href="${usersPath(tenant.id)}">Back to the users</a></p>`,
  };
}

export function deleteUserConfirmation(o: { session: Session; tenant: TenantRef; user: User; roleNames: string[] }): View {
  return {
    title: `Delete ${o.user.email}?`,
    body: html`<p><strong>This cannot be undone.</strong> The user can no longer sign in; their sessions and tokens stop working at once. To stop them for a while, disable them instead.</p>
<dl class="facts">
<dt>E-mail address</dt><dd>${o.user.email}</dd>
<dt>Roles</dt><dd>${o.roleNames.join(', ') || 'none'}</dd>
<dt>Last sign-in</dt><dd>${when(o.user.lastSignInAt)}</dd>
</dl>
<form method="post" action="${USER_DELETE_PATH}">${csrfField(o.session)}${hidden(o.tenant, o.user)}
<div class="actions"><button type="submit" class="danger">Delete user</button><a href="${userPath(USER_PATH, o.tenant.id, o.user.id)}">Cancel</a></div>
</form>`,
  };
}
