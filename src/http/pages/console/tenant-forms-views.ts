// The HTML of the forms that change a tenant (tenant-forms.ts decides which are shown, to whom):
// a new tenant under a partner, the profile and the limits, support access, labels,
// subscriptions, and a partner's services and partner subscriptions. Every value goes through
// the escaping `html`; a form that failed is shown again with what was entered.
import type { TenantLabel } from '../../../labels/model.js';
import type { Session } from '../../../sessions/model.js';
import type { PartnerSubscription, Service } from '../../../subscriptions/model.js';
import type { AssignedSubscription } from '../../../subscriptions/store.js';
import { ENVIRONMENTS, type Environment, type Tenant } from '../../../tenants/model.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../page-kit.js';
import { alert, type View, when } from './layout.js';
import {
  TENANT_EDIT_PATH,
  TENANT_LABELS_PATH,
  TENANT_NEW_PATH,
  TENANT_OFFERINGS_PATH,
  TENANT_SUBSCRIPTIONS_PATH,
  TENANT_SUPPORT_PATH,
  tenantHomePath,
} from './paths.js';
import type { Problem } from './problems.js';
import { expiryOf, supportOf } from './tenants-views.js';

/** What was entered in the form that failed (shown again), and which form it was. */
export type Values = Record<string, string | undefined>;
export const ENVIRONMENT_NAMES = Object.keys(ENVIRONMENTS);

/** A datetime-local value (UTC) of a time. */
const local = (d: Date | null | undefined) => (d ? d.toISOString().slice(0, 16) : '');

function input(
  id: string,
  label: string,
  value: string | undefined,
  o: { type?: string; hint?: string; required?: boolean; max?: number } = {},
): Html {
  return html`<label for="${id}">${label}</label>
<input id="${id}" name="${id}" type="${o.type ?? 'text'}" value="${value ?? ''}"${o.required ? html` required` : ''}${
    o.max ? html` maxlength="${o.max}"` : ''
  }${o.hint ? html` aria-describedby="${id}-hint"` : ''}>
${o.hint ? html`<p id="${`${id}-hint`}" class="hint">${o.hint}</p>` : ''}`;
}

function textarea(id: string, label: string, value: string | undefined, hint?: string): Html {
  return html`<label for="${id}">${label}</label>
<textarea id="${id}" name="${id}" rows="3" maxlength="2000"${hint ? html` aria-describedby="${id}-hint"` : ''}>${value ?? ''}</textarea>
${hint ? html`<p id="${`${id}-hint`}" class="hint">${hint}</p>` : ''}`;
}

function select(id: string, label: string, options: [string, string][], chosen: string | undefined, hint?: string): Html {
  return html`<label for="${id}">${label}</label>
<select id="${id}" name="${id}"${hint ? html` aria-describedby="${id}-hint"` : ''}>${options.map(
    ([v, l]) => html`<option value="${v}"${v === chosen ? html` selected` : ''}>${l}</option>`,
  )}</select>
${hint ? html`<p id="${`${id}-hint`}" class="hint">${hint}</p>` : ''}`;
}

const checkbox = (id: string, label: string, checked: boolean, value = 'yes') =>
  html`<div class="choice"><input type="checkbox" id="${id}" name="${id}" value="${value}"${checked ? html` checked` : ''}><label for="${id}">${label}</label></div>`;

const hidden = (session: Session, tenantId: string, action?: string) =>
  html`${csrfField(session)}<input type="hidden" name="tenant" value="${tenantId}">${action ? html`<input type="hidden" name="action" value="${action}">` : ''}`;

const cancel = (tenantId: string) => html`<a href="${tenantHomePath(tenantId)}">Back to the tenant</a>`;
const yesNo: [string, string][] = [
  ['yes', 'Yes'],
  ['no', 'No'],
];

/** The alert of the form that failed, if it is this one. */
const alertIf = (problem: Problem | undefined, values: Values | undefined, action: string) =>
  problem && (values?.action ?? '') === action ? alert(problem) : '';

export function newTenantForm(o: { session: Session; partner: Tenant; mayCreatePartner: boolean; values?: Values; problem?: Problem }): View {
  const v = o.values ?? {};
  const envs = new Set(ENVIRONMENT_NAMES.filter((e) => (o.values ? v[`env_${e}`] === 'yes' : e === 'echo')));
  return {
    title: `Create a tenant under ${o.partner.name}`,
    body: html`${alert(o.problem)}
<form class="fields" method="post" action="${TENANT_NEW_PATH}">${hidden(o.session, o.partner.id)}
${input('name', 'Name', v.name, { required: true, max: 200, hint: 'Its name, as people know it; 1 to 200 characters.' })}
<fieldset><legend>Environments</legend><p class="hint">Where it is enabled from the start: at least one.</p>
${ENVIRONMENT_NAMES.map((e) => checkbox(`env_${e}`, e, envs.has(e)))}</fieldset>
${o.mayCreatePartner ? html`<fieldset><legend>Kind</legend>${checkbox('is_partner', 'A partner: it can have tenants of its own (fixed once created)', v.is_partner === 'yes')}</fieldset>` : ''}
${input('domain', 'Domain (optional)', v.domain, { max: 253, hint: 'For example example.com.' })}
${textarea('description', 'Description (optional)', v.description)}
${select('allow_response_actions', 'Response actions allowed', yesNo, v.allow_response_actions ?? 'no')}
${input('actions_approver', 'Actions approver (optional)', v.actions_approver, { max: 254, hint: 'Who approves response actions, e.g. an e-mail address.' })}
<div class="actions"><button type="submit">Create tenant</button>${cancel(o.partner.id)}</div>
</form>`,
  };
}

export function editForms(o: {
  session: Session;
  tenant: Tenant;
  envs: Environment[];
  disablesAt: Date | null;
  now: Date;
  manage: boolean;
  values?: Values;
  problem?: Problem;
}): View {
  const t = o.tenant;
  const failed = o.values?.part;
  const v = (part: string): Values => (failed === part ? (o.values ?? {}) : {});
  const p = v('profile');
  const l = v('limits');
  const enabled = new Map(o.envs.map((e) => [e.name, e.enabled]));
  return {
    title: `Edit ${t.name}`,
    body: html`<h2>Profile</h2>
${failed === 'profile' ? alert(o.problem) : ''}
<form class="fields" method="post" action="${TENANT_EDIT_PATH}">${hidden(o.session, t.id)}<input type="hidden" name="part" value="profile">
${input('name', 'Name', p.name ?? t.name, { required: true, max: 200 })}
${input('domain', 'Domain', p.domain ?? t.domain ?? '', { max: 253, hint: 'Leave it empty to remove it.' })}
${textarea('description', 'Description', p.description ?? t.description ?? '', 'Leave it empty to remove it.')}
${select('allow_response_actions', 'Response actions allowed', yesNo, p.allow_response_actions ?? (t.allowResponseActions ? 'yes' : 'no'))}
${input('actions_approver', 'Actions approver', p.actions_approver ?? t.actionsApprover ?? '', { max: 254, hint: 'Leave it empty to remove it.' })}
<div class="actions"><button type="submit">Save the profile</button>${cancel(t.id)}</div>
</form>
${
  o.manage
    ? html`<h2>Environments and expiry</h2>
<p>State: <strong>${t.enabled ? 'Active' : 'Disabled'}</strong>. ${expiryOf(t, o.disablesAt, o.now)}</p>
<p class="hint">Decided by the partner above it. A tenant is active while at least one environment is enabled. A tenant disabled by its expiry can be enabled again only with a later expiry, or with its expiry removed, in the same change.</p>
${failed === 'limits' ? alert(o.problem) : ''}
<form class="fields" method="post" action="${TENANT_EDIT_PATH}">${hidden(o.session, t.id)}<input type="hidden" name="part" value="limits">
<fieldset><legend>Environments</legend>
${ENVIRONMENT_NAMES.map((e) =>
  select(
    `env_${e}`,
    e,
    [
      ['on', 'Enabled'],
      ['off', 'Not enabled'],
    ],
    l[`env_${e}`] ?? (enabled.get(e) ? 'on' : 'off'),
  ),
)}</fieldset>
${checkbox('disable', 'Disable it everywhere (overrides the environments above)', l.disable === 'yes')}
${input('expires_at', 'Expires at (UTC)', l.expires_at ?? local(t.expiresAt), { type: 'datetime-local', hint: 'Leave it as it is to keep the expiry.' })}
${checkbox('clear_expiration', 'Remove the expiry: it never expires', l.clear_expiration === 'yes')}
<div class="actions"><button type="submit">Save environments and expiry</button>${cancel(t.id)}</div>
</form>`
    : html`<p class="hint">Its environments, disabling and expiry are decided by the partner above it; your roles there do not allow it.</p>`
}`,
  };
}

export function supportForm(o: { session: Session; tenant: Tenant; active: boolean; values?: Values; problem?: Problem }): View {
  const t = o.tenant;
  const v = o.values ?? {};
  return {
    title: `Support access to ${t.name}`,
    body: html`<p>${supportOf(t, o.active)}</p>
<p class="hint">Turning it on is your consent that the vendor’s Support staff read this tenant (they cannot change anything), for example while they work on a ticket.</p>
${alertIf(o.problem, o.values, 'enable')}
<form class="fields" method="post" action="${TENANT_SUPPORT_PATH}">${hidden(o.session, t.id, 'enable')}
${input('until', 'Until (UTC)', v.until ?? local(t.supportExpiresAt), { type: 'datetime-local', hint: 'When it ends by itself: within 366 days. Empty: until you turn it off.' })}
${input('reason', 'Reason', v.reason ?? t.supportReason ?? '', { max: 500, hint: 'Why, e.g. a ticket number; at most 500 characters.' })}
<div class="actions"><button type="submit">${o.active ? 'Change support access' : 'Turn support access on'}</button>${cancel(t.id)}</div>
</form>
${
  o.active
    ? html`<form method="post" action="${TENANT_SUPPORT_PATH}">${hidden(o.session, t.id, 'disable')}<div class="actions"><button type="submit" class="danger">Turn support access off now</button></div></form>`
    : ''
}`,
  };
}

export function labelsPage(o: {
  session: Session;
  tenant: Tenant;
  labels: TenantLabel[];
  owners: Map<string, string>;
  /** the partners in whose name the viewer may label (the create form's owners) */
  writable: Tenant[];
  mayRestrict: boolean;
  values?: Values;
  problem?: Problem;
}): View {
  const t = o.tenant;
  const v = o.values ?? {};
  const mayWrite = new Set(o.writable.map((w) => w.id));
  const row = (l: TenantLabel) => {
    const editable = mayWrite.has(l.ownerPartnerTenantId) && !l.restricted;
    const mine = v.label === l.id ? v : {};
    return html`<tr><th scope="row">${l.name}${l.restricted ? ' (restricted)' : ''}</th><td data-label="Value">${l.value ?? ''}</td><td data-label="Owner">${
      o.owners.get(l.ownerPartnerTenantId) ?? `tenant ${l.ownerPartnerTenantId}`
    }</td><td data-label="Changed">${when(l.updatedAt)}</td><td class="row-actions">${
      editable
        ? html`${mine.action === 'update' || mine.action === 'delete' ? alert(o.problem) : ''}<div class="row-forms"><form class="inline-form" method="post" action="${TENANT_LABELS_PATH}">${hidden(o.session, t.id, 'update')}<input type="hidden" name="label" value="${l.id}">
<label for="${`name-${l.id}`}">Name<span class="visually-hidden"> of label ${l.name}</span></label><input id="${`name-${l.id}`}" name="name" type="text" required maxlength="100" value="${mine.name ?? l.name}">
<label for="${`value-${l.id}`}">Value<span class="visually-hidden"> of label ${l.name}</span></label><input id="${`value-${l.id}`}" name="value" type="text" maxlength="1000" value="${mine.value ?? l.value ?? ''}">
<button type="submit">Save<span class="visually-hidden"> label ${l.name}</span></button></form>
<form method="post" action="${TENANT_LABELS_PATH}">${hidden(o.session, t.id, 'delete')}<input type="hidden" name="label" value="${l.id}"><button type="submit" class="danger">Delete<span class="visually-hidden"> label ${l.name}</span></button></form></div>`
        : l.restricted
          ? 'Restricted: nobody can change it.'
          : 'Owned by a partner your roles do not let you label for.'
    }</td></tr>`;
  };
  return {
    title: `Labels of ${t.name}`,
    body: html`<p class="lead">A label is a name and a value a partner puts on a tenant below it. Only its owner partner (or one above it) changes it.</p>
${
  o.labels.length === 0
    ? html`<p>No labels.</p>`
    : html`<div class="scroll"><table class="stack"><caption>Labels</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Owner</th><th scope="col">Changed</th><th scope="col">Actions</th></tr></thead>
<tbody>${o.labels.map(row)}</tbody></table></div>`
}
${
  o.writable.length > 0
    ? html`<h2>Add a label</h2>
${alertIf(o.problem, o.values, 'create')}
<form class="fields" method="post" action="${TENANT_LABELS_PATH}">${hidden(o.session, t.id, 'create')}
${input('name', 'Name', v.action === 'create' ? v.name : '', { required: true, max: 100, hint: 'Unique per owner on this tenant, ignoring case.' })}
${input('value', 'Value (optional)', v.action === 'create' ? v.value : '', { max: 1000 })}
${select(
  'owner',
  'Owner',
  o.writable.map((w) => [w.id, `${w.name} (${w.id})`]),
  v.owner ?? o.writable[o.writable.length - 1]!.id,
  'The partner in whose name it is put.',
)}
${o.mayRestrict ? checkbox('restricted', 'Restricted: nobody can change or delete it afterwards', v.restricted === 'yes') : ''}
<div class="actions"><button type="submit">Add label</button>${cancel(t.id)}</div>
</form>`
    : html`<p class="hint">Your roles do not let you label this tenant.</p><p>${cancel(t.id)}</p>`
}`,
  };
}

export function subscriptionsPage(o: {
  session: Session;
  tenant: Tenant;
  assigned: AssignedSubscription[];
  /** the partners whose subscriptions the viewer manages */
  manages: Set<string>;
  /** what the viewer may assign here: live subscriptions of partners above it */
  assignable: PartnerSubscription[];
  services: Map<string, string>;
  values?: Values;
  problem?: Problem;
}): View {
  const t = o.tenant;
  return {
    title: `Subscriptions of ${t.name}`,
    body: html`${alertIf(o.problem, o.values, o.values?.action ?? '')}
${
  o.assigned.length === 0
    ? html`<p>No subscriptions.</p>`
    : html`<div class="scroll"><table class="stack"><caption>Subscriptions</caption>
<thead><tr><th scope="col">Subscription</th><th scope="col">Service</th><th scope="col">Partner</th><th scope="col">Actions</th></tr></thead>
<tbody>${o.assigned.map(
        (a) =>
          html`<tr><th scope="row">${a.subscription.name}${a.subscription.retiredAt ? ' (retired)' : ''}</th><td data-label="Service">${a.service.name}</td><td data-label="Partner">${
            a.subscription.partnerTenantId
          }</td><td class="row-actions">${
            o.manages.has(a.subscription.partnerTenantId)
              ? html`<form method="post" action="${TENANT_SUBSCRIPTIONS_PATH}">${hidden(o.session, t.id, 'unassign')}<input type="hidden" name="subscription" value="${a.subscription.id}"><button type="submit" class="danger">Take away<span class="visually-hidden"> ${a.subscription.name}</span></button></form>`
              : ''
          }</td></tr>`,
      )}</tbody></table></div>`
}
${
  o.assignable.length > 0
    ? html`<h2>Assign a subscription</h2>
<form class="fields" method="post" action="${TENANT_SUBSCRIPTIONS_PATH}">${hidden(o.session, t.id, 'assign')}
${select(
  'subscription',
  'Subscription',
  o.assignable.map((s) => [s.id, `${s.name} (${o.services.get(s.serviceId) ?? 'service'}, partner ${s.partnerTenantId})`]),
  o.values?.subscription,
)}
<div class="actions"><button type="submit">Assign</button>${cancel(t.id)}</div>
</form>`
    : html`<p class="hint">No subscription you manage can be assigned here.</p><p>${cancel(t.id)}</p>`
}`,
  };
}

export function offeringsPage(o: {
  session: Session;
  partner: Tenant;
  services: Service[];
  subscriptions: PartnerSubscription[];
  manage: boolean;
  values?: Values;
  problem?: Problem;
}): View {
  const t = o.partner;
  const v = o.values ?? {};
  const names = new Map(o.services.map((s) => [s.id, s.name]));
  const own = o.services.filter((s) => s.ownerTenantId === t.id);
  return {
    title: `Services and subscriptions of ${t.name}`,
    body: html`<p class="lead">A partner packages services (its own, or those of the partners above it) as partner subscriptions, and assigns them to the tenants below it.</p>
${alertIf(o.problem, o.values, 'retire')}
<h2>Partner subscriptions</h2>
${
  o.subscriptions.length === 0
    ? html`<p>No partner subscriptions.</p>`
    : html`<div class="scroll"><table class="stack"><caption>Partner subscriptions</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Service</th><th scope="col">Created</th><th scope="col">Retired</th>${o.manage ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
<tbody>${o.subscriptions.map(
        (s) =>
          html`<tr><th scope="row">${s.name}</th><td data-label="Service">${names.get(s.serviceId) ?? s.serviceId}</td><td data-label="Created">${when(
            s.createdAt,
          )}</td><td data-label="Retired">${when(s.retiredAt, 'no')}</td>${
            o.manage
              ? html`<td class="row-actions">${
                  s.retiredAt
                    ? ''
                    : html`<form method="post" action="${TENANT_OFFERINGS_PATH}">${hidden(o.session, t.id, 'retire')}<input type="hidden" name="subscription" value="${s.id}"><button type="submit" class="danger">Retire<span class="visually-hidden"> ${s.name}</span></button></form>`
                }</td>`
              : ''
          }</tr>`,
      )}</tbody></table></div>`
}
<h2>Services it can package</h2>
${
  o.services.length === 0
    ? html`<p>No services.</p>`
    : html`<ul>${o.services.map((s) => html`<li><strong>${s.name}</strong>${s.ownerTenantId === t.id ? ' (its own)' : html` (of tenant ${s.ownerTenantId})`}${s.description ? html`: ${s.description}` : ''}</li>`)}</ul>`
}
${
  o.manage
    ? html`${
        o.services.length > 0
          ? html`<h2>Create a partner subscription</h2>
${alertIf(o.problem, o.values, 'subscription')}
<form class="fields" method="post" action="${TENANT_OFFERINGS_PATH}">${hidden(o.session, t.id, 'subscription')}
${select(
  'service',
  'Service',
  o.services.map((s) => [s.id, s.name]),
  v.service,
)}
${input('sub_name', 'Name', v.action === 'subscription' ? v.sub_name : '', { required: true, max: 200 })}
${textarea('sub_description', 'Description (optional)', v.action === 'subscription' ? v.sub_description : '')}
<div class="actions"><button type="submit">Create subscription</button></div>
</form>`
          : ''
      }
<h2>Create a service</h2>
${alertIf(o.problem, o.values, 'service')}
<form class="fields" method="post" action="${TENANT_OFFERINGS_PATH}">${hidden(o.session, t.id, 'service')}
${input('service_name', 'Name', v.action === 'service' ? v.service_name : '', { required: true, max: 200, hint: `Unique among the services of ${t.name}; it has ${own.length}.` })}
${textarea('service_description', 'Description (optional)', v.action === 'service' ? v.service_description : '')}
<div class="actions"><button type="submit">Create service</button>${cancel(t.id)}</div>
</form>`
    : html`<p>${cancel(t.id)}</p>`
}`,
  };
}
