// The credentials of a tenant (docs/users.md, "Console"): /console/credentials?tenant=ID lists its
// API clients, and /new, /rotate and /delete create, rotate and delete them, through the same
// CredentialService calls as the GraphQL resolvers.
//
// Forms are POST with the session's CSRF token; a deletion redirects (303) to the list with a
// notice in the session; a new secret is in the answer to the POST that made it, and nowhere else
// (never a URL, never the session).
import { mayGrant } from '../../../access/grants.js';
import { assertCan, can } from '../../../access/policy.js';
import { heldRoleNames } from '../../../access/scope.js';
import { ROOT_TENANT_ID, roleName, TENANT_ROLES, VENDOR_ROLES } from '../../../access/roles.js';
import type { Client } from '../../../credentials/model.js';
import { assertMayTakeOver } from '../../../credentials/takeover.js';
import { badInput, notFound } from '../../../errors.js';
import { COPY_SCRIPT_PATH } from '../copy-script.js';
import {
  createForm,
  credentialList,
  deleteConfirmation,
  forceRotateConfirmation,
  ROLE_FIELD_PREFIX,
  rotateForm,
  secretShown,
} from './credentials-views.js';
import { type ConsoleKit, type InTenant, PER_PAGE, pageNumber, queryOf, text } from './kit.js';
import { listPath } from './paths.js';

/** The handlers of a tenant's credentials (routes.ts registers them). */
export function credentialPages(c: ConsoleKit) {
  const { services } = c;
  const section = 'credentials';

  /** One live client of the acting tenant, read as `clients(clientIDs: [id])` reads it. */
  async function clientOf(t: InTenant, raw: unknown): Promise<Client> {
    const [client] = await services.credentials.listClients(t.caller, { clientIDs: [text(raw) ?? ''], perPage: 1 });
    if (!client) throw notFound('Client');
    return client;
  }

  /** The names of the roles a client holds now, in the order of the role table. */
  const roleNames = (cl: Client, now: Date) => heldRoleNames(cl.roleAssignments, now);

  /** The roles the viewer may give a new client here (the service checks them again). */
  const grantable = (t: InTenant) =>
    [...TENANT_ROLES, ...(t.tenant.id === ROOT_TENANT_ID ? VENDOR_ROLES : [])]
      .filter((id) => mayGrant(t.caller, id, t.now))
      .map((id) => ({ id, name: roleName(id)! }));

  return {
    /** GET /console/credentials?tenant=…: the clients of a tenant */
    credentials: c.section(async (t, req, reply) => {
      const q = queryOf(req);
      const page = pageNumber(q.page);
      // one more than shown: whether there is a next page
      const clients = await services.credentials.listClients(t.caller, { page, perPage: PER_PAGE + 1 });
      const notice = await c.takeNotice(t);
      const view = credentialList({
        tenant: t.tenant,
        clients: clients.slice(0, PER_PAGE),
        page,
        hasMore: clients.length > PER_PAGE,
        rights: {
          create: can(t.principal, t.caller.tenant, 'clients.create', t.now),
          rotate: can(t.principal, t.caller.tenant, 'clients.rotate', t.now),
          forceRotate: can(t.principal, t.caller.tenant, 'clients.forceRotate', t.now),
          delete: can(t.principal, t.caller.tenant, 'clients.delete', t.now),
        },
        roleNames: (c) => roleNames(c, t.now),
        notice,
      });
      return c.show(reply, 200, view, { who: t, in: t, section });
    }),

    /** GET /console/credentials/new?tenant=… */
    newForm: c.page(async (t, req, reply) => {
      assertCan(t.principal, t.caller.tenant, 'clients.create', t.now);
      return c.show(reply, 200, createForm({ session: t.session, tenant: t.tenant, grantable: grantable(t) }), { who: t, in: t, section });
    }),

    /** POST /console/credentials/new */
    create: c.form(async (t, form, req, reply) => {
      const name = text(form.name) ?? '';
      const roles = Object.entries(form)
        .filter(([k, v]) => k.startsWith(ROLE_FIELD_PREFIX) && typeof v === 'string')
        .map(([, v]) => v);
      try {
        if (roles.length === 0) throw badInput('Choose at least one role for the credential.', { field: 'roles' });
        const made = await services.credentials.createClient(t.caller, { name, roles });
        const view = secretShown({ tenant: t.tenant, client: made.client, secret: made.clientSecret, heading: 'Credential created', rotated: false });
        return c.show(reply, 200, view, { who: t, in: t, section, scripts: [COPY_SCRIPT_PATH] });
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        const view = createForm({ session: t.session, tenant: t.tenant, grantable: grantable(t), values: { name, roles }, problem });
        return c.show(reply, problem.status, view, { who: t, in: t, section });
      }
    }),

    /** GET /console/credentials/rotate?tenant=…&client=… */
    rotateForm: c.page(async (t, req, reply) => {
      assertCan(t.principal, t.caller.tenant, 'clients.rotate', t.now);
      const client = await clientOf(t, queryOf(req).client);
      return c.show(reply, 200, rotateForm({ session: t.session, tenant: t.tenant, client }), { who: t, in: t, section });
    }),

    /** POST /console/credentials/rotate */
    rotate: c.form(async (t, form, req, reply) => {
      const grace = text(form.grace);
      try {
        const rotated = await services.credentials.rotateClientSecret(t.caller, {
          id: text(form.client) ?? '',
          secret: text(form.secret) ?? '',
          gracePeriodSeconds: grace === undefined || grace === '' ? null : Number(grace),
        });
        const oldSecretUntil = rotated.client.secrets.find((s) => s.expiresAt !== null)?.expiresAt ?? undefined;
        const view = secretShown({
          tenant: t.tenant,
          client: rotated.client,
          secret: rotated.clientSecret,
          heading: 'New secret',
          rotated: true,
          oldSecretUntil,
        });
        return c.show(reply, 200, view, { who: t, in: t, section, scripts: [COPY_SCRIPT_PATH] });
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        const client = await clientOf(t, form.client);
        return c.show(reply, problem.status, rotateForm({ session: t.session, tenant: t.tenant, client, problem, grace }), {
          who: t,
          in: t,
          section,
        });
      }
    }),

    /** GET /console/credentials/force-rotate?tenant=…&client=… */
    forceRotateForm: c.page(async (t, req, reply) => {
      assertCan(t.principal, t.caller.tenant, 'clients.forceRotate', t.now);
      const client = await clientOf(t, queryOf(req).client);
      // the form is not offered to whom the rotation would refuse the new secret
      assertMayTakeOver(t.caller, client, t.now);
      return c.show(reply, 200, forceRotateConfirmation({ session: t.session, tenant: t.tenant, client }), { who: t, in: t, section });
    }),

    /** POST /console/credentials/force-rotate */
    forceRotate: c.form(async (t, form, req, reply) => {
      const rotated = await services.credentials.forceRotateClientSecret(t.caller, { id: text(form.client) ?? '' });
      const view = secretShown({
        tenant: t.tenant,
        client: rotated.client,
        secret: rotated.clientSecret,
        heading: 'New secret',
        rotated: true,
        forced: true,
      });
      return c.show(reply, 200, view, { who: t, in: t, section, scripts: [COPY_SCRIPT_PATH] });
    }),

    /** GET /console/credentials/delete?tenant=…&client=… */
    deleteForm: c.page(async (t, req, reply) => {
      assertCan(t.principal, t.caller.tenant, 'clients.delete', t.now);
      const client = await clientOf(t, queryOf(req).client);
      const view = deleteConfirmation({ session: t.session, tenant: t.tenant, client, roleNames: roleNames(client, t.now) });
      return c.show(reply, 200, view, { who: t, in: t, section });
    }),

    /** POST /console/credentials/delete */
    delete: c.form(async (t, form, req, reply) => {
      const deleted = await services.credentials.deleteClient(t.caller, { id: text(form.client) ?? '' });
      const notice = `Client ${deleted.name} (${deleted.clientId}) was deleted. Its secrets no longer work.`;
      return c.done(reply, t, notice, listPath(t.tenant.id));
    }),
  };
}
