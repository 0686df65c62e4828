// The forms that change a tenant, each through the same service call as its GraphQL mutation
// (src/graphql/tenant/resolvers.ts): /console/tenant/new (createTenant under the acting partner),
// /edit (updateTenant: the profile, and the environments, disabling and expiry its partner
// decides), /support (enableTenantSupport / disableTenantSupport), /labels (createTenantLabel,
// updateTenantLabel, deleteTenantLabel), /subscriptions (assignSubscription /
// unassignSubscription), /offerings (a partner's createService, createPartnerSubscription,
// retirePartnerSubscription). Success redirects (303) with a notice; a failure the form can
// correct shows it again with what was entered; any other is the error page.
import type { FastifyReply } from 'fastify';
import { assertCan, can, supportActive } from '../../../access/policy.js';
import { ROOT_TENANT_ID } from '../../../access/roles.js';
import { badInput } from '../../../errors.js';
import { checkUuid } from '../../../ids.js';
import type { TenantLabel } from '../../../labels/model.js';
import type { PartnerSubscription } from '../../../subscriptions/model.js';
import { scopeOf } from '../../../tenants/model.js';
import type { TenantUpdateInput } from '../../../tenants/service.js';
import { html } from '../html.js';
import type { Form } from '../page-kit.js';
import { formTime } from './form-times.js';
import { type ConsoleKit, type InTenant, text } from './kit.js';
import { noticeOf, type View } from './layout.js';
import { TENANT_LABELS_PATH, TENANT_OFFERINGS_PATH, TENANT_SUBSCRIPTIONS_PATH, tenantHomePath, tenantPage } from './paths.js';
import { notInThisTenant, type Problem } from './problems.js';
import {
  editForms,
  ENVIRONMENT_NAMES,
  labelsPage,
  newTenantForm,
  offeringsPage,
  subscriptionsPage,
  supportForm,
  type Values,
} from './tenant-forms-views.js';
import { rightsIn } from './tenants.js';

/** The form's string fields, as entered (shown again when it fails). */
const valuesOf = (form: Form): Values =>
  Object.fromEntries(Object.entries(form).filter(([k, v]) => k !== '_csrf' && typeof v === 'string')) as Values;

/** A field that may be left out: undefined when absent, null when emptied (removes the value). */
const optional = (form: Form, k: string): string | null | undefined => {
  const v = text(form[k]);
  return v === undefined ? undefined : v.trim() === '' ? null : v;
};
const yesNo = (v: string | undefined) => (v === 'yes' ? true : v === 'no' ? false : undefined);

/** A datetime-local field (form-times.ts, read as UTC) as a time; empty is none. */
const timeOf = (raw: string | undefined, field: string): Date | null => formTime(raw, field) ?? null;

/** The partners at or above the tenant (the viewer sees), top first. */
const partnersOver = (t: InTenant) => [...t.ancestors, t.tenant].filter((a) => a.isPartner);

export function tenantForms(c: ConsoleKit) {
  const { services } = c;
  const section = 'tenant';

  /** Sends a page with the notice the last change left, if any. */
  async function withNotice(reply: FastifyReply, t: InTenant, view: View) {
    const notice = await c.takeNotice(t);
    return c.show(reply, 200, { title: view.title, body: html`${noticeOf(notice)}${view.body}` }, { who: t, in: t, section });
  }

  // A page acts in its one tenant, while the label and subscription services accept any of a
  // tenant the viewer's roles reach (a tenant below included): the label or subscription a form
  // names is read first, among the page's tenant's own, and one of another tenant (below, out of
  // reach, or none) is refused alike (notInThisTenant), before anything is changed. Neither ever
  // moves to another tenant: reading it first and changing it after is no race (deleted
  // meanwhile, the change is refused as not found).

  /** The label `raw` if it is on the page's tenant. */
  async function ownLabel(t: InTenant, raw: unknown): Promise<TenantLabel> {
    const id = checkUuid(text(raw) ?? '', 'label_id');
    const labels = await services.loaders(t.caller).labels.load(t.tenant.id);
    const label = labels.find((l) => l.id === id);
    if (!label) throw notInThisTenant('label', t.tenant);
    return label;
  }

  /** The partner subscription `raw` if it is the page's tenant's (as a partner; retired ones too). */
  async function ownSubscription(t: InTenant, raw: unknown): Promise<PartnerSubscription> {
    const id = checkUuid(text(raw) ?? '', 'subscription_id');
    const own = t.tenant.isPartner ? await services.subscriptions.listSubscriptions(t.caller, t.tenant.id, true) : [];
    const subscription = own.find((s) => s.id === id);
    if (!subscription) throw notInThisTenant('subscription', t.tenant);
    return subscription;
  }

  function newView(t: InTenant, values?: Values, problem?: Problem) {
    if (!t.tenant.isPartner)
      throw badInput(`tenant ${t.tenant.id} is not a partner; tenants are created under partners`, { field: 'partnerTenantID' });
    assertCan(t.principal, t.caller.tenant, 'tenants.create', t.now);
    const mayCreatePartner = can(t.principal, t.caller.tenant, 'tenants.createPartner', t.now);
    return newTenantForm({ session: t.session, partner: t.tenant, mayCreatePartner, ...(values ? { values } : {}), ...(problem ? { problem } : {}) });
  }

  async function editView(t: InTenant, values?: Values, problem?: Problem) {
    assertCan(t.principal, t.caller.tenant, 'tenants.edit', t.now);
    const envs = await services.loaders(t.caller).environments.load(t.tenant.id);
    return editForms({
      session: t.session,
      tenant: t.tenant,
      envs,
      disablesAt: services.tenants.disablesAt(t.tenant),
      now: t.now,
      manage: rightsIn(t).manage,
      ...(values ? { values } : {}),
      ...(problem ? { problem } : {}),
    });
  }

  function supportView(t: InTenant, values?: Values, problem?: Problem) {
    assertCan(t.principal, t.caller.tenant, 'tenants.support', t.now);
    const active = supportActive(scopeOf(t.tenant), t.now);
    return supportForm({ session: t.session, tenant: t.tenant, active, ...(values ? { values } : {}), ...(problem ? { problem } : {}) });
  }

  async function labelsView(t: InTenant, values?: Values, problem?: Problem) {
    const labels = await services.loaders(t.caller).labels.load(t.tenant.id);
    const root = [...t.ancestors, t.tenant].find((a) => a.id === ROOT_TENANT_ID);
    return labelsPage({
      session: t.session,
      tenant: t.tenant,
      labels,
      owners: new Map([...t.ancestors, t.tenant].map((a) => [a.id, a.name])),
      writable: partnersOver(t).filter((p) => can(t.principal, scopeOf(p), 'labels.write', t.now)),
      mayRestrict: root !== undefined && can(t.principal, scopeOf(root), 'labels.writeRestricted', t.now),
      ...(values ? { values } : {}),
      ...(problem ? { problem } : {}),
    });
  }

  async function subscriptionsView(t: InTenant, values?: Values, problem?: Problem) {
    const assigned = await services.loaders(t.caller).subscriptions.load(t.tenant.id);
    // the partners strictly above it whose subscriptions the viewer manages
    const managed = t.ancestors.filter((p) => p.isPartner && can(t.principal, scopeOf(p), 'subscriptions.manage', t.now));
    const have = new Set(assigned.map((a) => a.subscription.id));
    const offered = await Promise.all(
      managed.map(async (p) => ({
        subscriptions: await services.subscriptions.listSubscriptions(t.caller, p.id, false),
        services: await services.subscriptions.listServices(t.caller, p.id),
      })),
    );
    const assignable: PartnerSubscription[] = offered.flatMap((o) => o.subscriptions).filter((s) => !have.has(s.id));
    return subscriptionsPage({
      session: t.session,
      tenant: t.tenant,
      assigned,
      manages: new Set(managed.map((p) => p.id)),
      assignable,
      services: new Map(offered.flatMap((o) => o.services).map((s) => [s.id, s.name])),
      ...(values ? { values } : {}),
      ...(problem ? { problem } : {}),
    });
  }

  async function offeringsView(t: InTenant, values?: Values, problem?: Problem) {
    if (!t.tenant.isPartner) throw badInput(`tenant ${t.tenant.id} is not a partner`, { field: 'partner_tenant_id' });
    const [offered, subscriptions] = await Promise.all([
      services.subscriptions.listServices(t.caller, t.tenant.id),
      services.subscriptions.listSubscriptions(t.caller, t.tenant.id, true),
    ]);
    return offeringsPage({
      session: t.session,
      partner: t.tenant,
      services: offered,
      subscriptions,
      manage: can(t.principal, t.caller.tenant, 'subscriptions.manage', t.now),
      ...(values ? { values } : {}),
      ...(problem ? { problem } : {}),
    });
  }

  /** A GET page of the acting tenant, with the notice the last change left. */
  const page = (view: (t: InTenant) => View | Promise<View>) => c.page(async (t, _req, reply) => withNotice(reply, t, await view(t)));

  /** A POST form of the acting tenant: `change` does it and redirects; a correctable failure shows `again`. */
  const post = (
    change: (t: InTenant, form: Form, reply: FastifyReply) => Promise<FastifyReply>,
    again: (t: InTenant, values: Values, problem: Problem) => View | Promise<View>,
  ) =>
    c.form(async (t, form, req, reply) => {
      try {
        return await change(t, form, reply);
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        return c.show(reply, problem.status, await again(t, valuesOf(form), problem), { who: t, in: t, section });
      }
    });

  return {
    /** GET /console/tenant/new?tenant=…: a new tenant under this partner */
    newForm: page((t) => newView(t)),

    /** POST /console/tenant/new: createTenant */
    create: post(
      async (t, form, reply) => {
        const made = await services.tenants.create(t.caller, {
          name: text(form.name) ?? '',
          partnerTenantID: t.tenant.id,
          environments: ENVIRONMENT_NAMES.filter((e) => form[`env_${e}`] === 'yes'),
          isPartner: form.is_partner === 'yes',
          domain: optional(form, 'domain') ?? null,
          description: optional(form, 'description') ?? null,
          allow_response_actions: yesNo(text(form.allow_response_actions)) ?? false,
          actions_approver: optional(form, 'actions_approver') ?? null,
        });
        return c.done(
          reply,
          t,
          `${made.isPartner ? 'Partner' : 'Tenant'} ${made.name} (id ${made.id}) was created under ${t.tenant.name}.`,
          tenantHomePath(made.id),
        );
      },
      (t, values, problem) => newView(t, values, problem),
    ),

    /** GET /console/tenant/edit?tenant=… */
    editForm: page((t) => editView(t)),

    /** POST /console/tenant/edit: updateTenant, the profile (part=profile) or the limits (part=limits) */
    update: post(
      async (t, form, reply) => {
        const input: TenantUpdateInput = {};
        if (form.part === 'limits') {
          input.environments = ENVIRONMENT_NAMES.filter((e) => form[`env_${e}`] === 'on' || form[`env_${e}`] === 'off').map((e) => ({
            name: e,
            enabled: form[`env_${e}`] === 'on',
          }));
          if (form.disable === 'yes') input.disable = true;
          if (form.clear_expiration === 'yes') input.clearExpiration = true;
          else {
            // the expiry shown (to the minute) and sent back unchanged is no change
            const shown = t.tenant.expiresAt?.toISOString().slice(0, 16) ?? '';
            const given = text(form.expires_at)?.trim() ?? '';
            if (given !== shown) input.expiresAt = timeOf(given, 'expiresAt');
          }
        } else {
          const name = text(form.name);
          if (name !== undefined) input.name = name;
          for (const k of ['domain', 'description', 'actions_approver'] as const) {
            const v = optional(form, k);
            if (v !== undefined) input[k] = v;
          }
          const allow = yesNo(text(form.allow_response_actions));
          if (allow !== undefined) input.allow_response_actions = allow;
        }
        const after = await services.tenants.update(t.caller, t.tenant.id, input);
        return c.done(reply, t, `${after.name} was saved.`, tenantHomePath(t.tenant.id));
      },
      (t, values, problem) => editView(t, values, problem),
    ),

    /** GET /console/tenant/support?tenant=… */
    supportForm: page((t) => supportView(t)),

    /** POST /console/tenant/support: enableTenantSupport (action=enable, until, reason) or disableTenantSupport (action=disable) */
    support: post(
      async (t, form, reply) => {
        const enable = form.action !== 'disable';
        const after = enable
          ? await services.tenants.setSupport(t.caller, t.tenant.id, true, {
              until: timeOf(text(form.until), 'until'),
              reason: optional(form, 'reason') ?? null,
            })
          : await services.tenants.setSupport(t.caller, t.tenant.id, false);
        const notice = enable
          ? `Support access to ${after.name} is on${after.supportExpiresAt ? ` until ${after.supportExpiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC` : ''}.`
          : `Support access to ${after.name} is off.`;
        return c.done(reply, t, notice, tenantHomePath(t.tenant.id));
      },
      (t, values, problem) => supportView(t, values, problem),
    ),

    /** GET /console/tenant/labels?tenant=… */
    labels: page((t) => labelsView(t)),

    /** POST /console/tenant/labels: createTenantLabel (action=create), updateTenantLabel (update), deleteTenantLabel (delete) */
    label: post(
      async (t, form, reply) => {
        const back = tenantPage(TENANT_LABELS_PATH, t.tenant.id);
        // creating names no label; changing or deleting one, it must be this tenant's
        const id = form.action === 'delete' || form.action === 'update' ? (await ownLabel(t, form.label)).id : '';
        if (form.action === 'delete') {
          const gone = await services.labels.delete(t.caller, id);
          return c.done(reply, t, `Label ${gone.name} was deleted.`, back);
        }
        const label = { name: text(form.name) ?? '', value: optional(form, 'value') ?? null };
        const saved =
          form.action === 'update'
            ? await services.labels.update(t.caller, id, label)
            : await services.labels.create(t.caller, t.tenant.id, {
                ...label,
                owner_partner_tenant_id: text(form.owner) || null,
                ...(form.restricted === 'yes' ? { restricted: true } : {}),
              });
        return c.done(reply, t, `Label ${saved.name} was ${form.action === 'update' ? 'saved' : 'added'}.`, back);
      },
      (t, values, problem) => labelsView(t, values, problem),
    ),

    /** GET /console/tenant/subscriptions?tenant=… */
    subscriptions: page((t) => subscriptionsView(t)),

    /** POST /console/tenant/subscriptions: assignSubscription (action=assign) or unassignSubscription (unassign) */
    assign: post(
      async (t, form, reply) => {
        const assign = form.action !== 'unassign';
        await services.subscriptions.assign(t.caller, t.tenant.id, text(form.subscription) ?? '', assign);
        const notice = assign ? `The subscription was assigned to ${t.tenant.name}.` : `The subscription was taken away from ${t.tenant.name}.`;
        return c.done(reply, t, notice, tenantPage(TENANT_SUBSCRIPTIONS_PATH, t.tenant.id));
      },
      (t, values, problem) => subscriptionsView(t, values, problem),
    ),

    /** GET /console/tenant/offerings?tenant=…: a partner's services and partner subscriptions */
    offerings: page((t) => offeringsView(t)),

    /** POST /console/tenant/offerings: createService (action=service), createPartnerSubscription (subscription), retirePartnerSubscription (retire) */
    offer: post(
      async (t, form, reply) => {
        const back = tenantPage(TENANT_OFFERINGS_PATH, t.tenant.id);
        if (form.action === 'retire') {
          const own = await ownSubscription(t, form.subscription);
          const retired = await services.subscriptions.retireSubscription(t.caller, own.id);
          return c.done(reply, t, `Subscription ${retired.name} was retired: it can no longer be assigned.`, back);
        }
        if (form.action === 'subscription') {
          const made = await services.subscriptions.createSubscription(t.caller, {
            service_id: text(form.service) ?? '',
            name: text(form.sub_name) ?? '',
            description: optional(form, 'sub_description') ?? null,
            partner_tenant_id: t.tenant.id,
          });
          return c.done(reply, t, `Subscription ${made.name} was created.`, back);
        }
        const made = await services.subscriptions.createService(t.caller, {
          name: text(form.service_name) ?? '',
          description: optional(form, 'service_description') ?? null,
          owner_tenant_id: t.tenant.id,
        });
        return c.done(reply, t, `Service ${made.name} was created.`, back);
      },
      (t, values, problem) => offeringsView(t, values, problem),
    ),
  };
}
