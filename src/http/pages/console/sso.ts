// A tenant's single sign-on (docs/sso.md): /console/sso?tenant=ID lists its SAML connections;
// /new is the wizard's first step (createSSOConnection); /connection is a connection's page, the
// wizard's later steps while it is being set up (the values to paste at the IdP, the IdP's side
// with the live check of /check, getSSOConnectionConfig), then its domains, testers, status,
// certificates and metadata; /edit posts each change (updateSSOConnection), /refresh reads the
// metadata again (refreshSSOConnectionMetadata), /delete deletes after a confirmation. Every
// handler calls the same SsoService methods as the GraphQL resolvers: the same authorization.
import type { FastifyReply } from 'fastify';
import { assertCan } from '../../../access/policy.js';
import { AppError, badInput } from '../../../errors.js';
import type { SamlConfigurationInput, UpdateSsoConnectionInput } from '../../../sso/service.js';
import type { SsoConnection, SsoConnectionStatus } from '../../../sso/model.js';
import { checkConnectionName, STATUSES } from '../../../sso/model.js';
import { COPY_SCRIPT_PATH } from '../copy-script.js';
import { type ConsoleKit, type InTenant, queryOf, text } from './kit.js';
import { connectionPath, SSO_CONNECTION_PATH, ssoListPath } from './paths.js';
import type { Problem } from './problems.js';
import { type ConnectionPageParts, connectionList, connectionPage, deleteConfirmation, testHop } from './sso-views.js';
import { type IdpValues, idpForm, type NewValues, newConnectionForm } from './sso-wizard.js';

/** A textarea's values: one a line (commas and spaces separate too), empty ones left out. */
const lines = (raw: string) => raw.split(/[\s,;]+/).filter((v) => v !== '');

/** What the IdP form was sent with. */
function idpValues(form: Record<string, unknown>): IdpValues {
  return {
    method: text(form.method) === 'certificate' ? 'certificate' : 'metadata',
    metadataURL: (text(form.metadataURL) ?? '').trim(),
    signingCert: text(form.signingCert) ?? '',
    signInEndpoint: (text(form.signInEndpoint) ?? '').trim(),
  };
}

/** The SAML configuration the IdP form asks for; refused, saying what is missing, when incomplete
 *  (the live check reads the certificate alone: the sign-in URL is needed only to save). */
function samlOf(v: IdpValues, c: SsoConnection, checkOnly = false): SamlConfigurationInput {
  if (v.method === 'metadata') {
    if (v.metadataURL === '') throw badInput('Enter the metadata URL, or choose “Certificate and sign-in URL”.', { field: 'metadataURL' });
    return { metadataURL: v.metadataURL };
  }
  if (v.signingCert.trim() === '') throw badInput('Paste the signing certificate, or choose “Metadata URL”.', { field: 'signingCert' });
  if (v.signInEndpoint === '' && !c.signInEndpoint && !checkOnly)
    throw badInput('Enter the sign-in URL with the certificate.', { field: 'signInEndpoint' });
  return { signingCert: v.signingCert, ...(v.signInEndpoint ? { signInEndpoint: v.signInEndpoint } : {}) };
}

/** The connection's name checked as the service checks it (sso/model.ts), its refusal under a
 *  field of its own: the console's words for a credential's name (credentials-problems.ts) do not fit it. */
function connectionName(raw: string): string {
  try {
    return checkConnectionName(raw);
  } catch (err) {
    if (err instanceof AppError && err.code === 'BAD_USER_INPUT') throw badInput(err.message, { field: 'connectionName' });
    throw err;
  }
}

/** What each `change` of the edit form asks of updateSSOConnection. */
const CHANGES: Record<string, (value: string) => Partial<UpdateSsoConnectionInput>> = {
  addDomain: (v) => ({ addDomains: [v] }),
  removeDomain: (v) => ({ removeDomains: [v] }),
  addTester: (v) => ({ addTesters: [v] }),
  removeTester: (v) => ({ removeTesters: [v] }),
  name: (v) => ({ name: connectionName(v) }),
  removeCertificate: (v) => ({ samlConfiguration: { removeCertificates: [v] } }),
};

/** Which part of the connection's page a change's failure is shown in. */
const PART_OF: Record<string, 'domains' | 'testers' | 'name' | 'certificates'> = {
  checkDomain: 'domains',
  regenerateDomain: 'domains',
  name: 'name',
  removeCertificate: 'certificates',
  addDomain: 'domains',
  removeDomain: 'domains',
  addTester: 'testers',
  removeTester: 'testers',
};

const STATUS_NOTICE: Record<SsoConnectionStatus, string> = {
  Created: '',
  Testing: 'The connection is Testing: only its testers sign in through it.',
  Enabled: 'The connection is enabled: everyone in its domains now signs in through the identity provider.',
  Disabled: 'The connection is disabled: nobody signs in through it.',
};

/** The handlers of a tenant's SSO connections (routes.ts registers them). */
export function ssoPages(c: ConsoleKit) {
  const { services } = c;
  const section = 'sso';

  const showPage = async (
    reply: FastifyReply,
    status: number,
    t: InTenant,
    conn: SsoConnection,
    o: {
      /** the notice of this answer (not one left in the session) */
      notice?: string;
      idp?: { values?: IdpValues; checked?: Awaited<ReturnType<typeof services.sso.inspect>>; problem?: Problem };
      problem?: ConnectionPageParts['problem'];
    } = {},
  ) => {
    const notice = o.notice ?? (status === 200 && !o.idp?.checked ? await c.takeNotice(t) : undefined);
    const idp = idpForm({
      session: t.session,
      tenant: t.tenant,
      connectionId: conn.id,
      now: t.now,
      configuredBefore: conn.status !== 'Created',
      ...(o.idp?.values ? { values: o.idp.values } : {}),
      ...(o.idp?.checked ? { checked: o.idp.checked } : {}),
      ...(o.idp?.problem ? { problem: o.idp.problem } : {}),
    });
    const view = connectionPage({
      session: t.session,
      tenant: t.tenant,
      c: conn,
      sp: services.sso.parameters(conn),
      proofs: services.sso.domainProofs(conn),
      now: t.now,
      notice,
      parts: { idp, ...(o.problem ? { problem: o.problem } : {}) },
    });
    return c.show(reply, status, view, { who: t, in: t, section, scripts: [COPY_SCRIPT_PATH] });
  };

  return {
    /** GET /console/sso?tenant=…: the connections */
    list: c.section(async (t, _req, reply) => {
      const connections = await services.sso.list(t.caller);
      const notice = await c.takeNotice(t);
      return c.show(reply, 200, connectionList({ tenant: t.tenant, connections, now: t.now, notice }), { who: t, in: t, section });
    }),

    /** GET /console/sso/new?tenant=…: the wizard's first step */
    newForm: c.page(async (t, req, reply) => {
      assertCan(t.principal, t.caller.tenant, 'sso.manage', t.now);
      return c.show(reply, 200, newConnectionForm({ session: t.session, tenant: t.tenant }), { who: t, in: t, section });
    }),

    /** POST /console/sso/new: createSSOConnection, then on to the connection's page */
    create: c.form(async (t, form, req, reply) => {
      const values: NewValues = { name: text(form.name) ?? '', domains: text(form.domains) ?? '', testers: text(form.testers) ?? '' };
      try {
        const made = await services.sso.create(t.caller, {
          name: connectionName(values.name),
          type: 'saml',
          domains: lines(values.domains),
          testers: lines(values.testers),
        });
        const notice = `Connection ${made.name} created. Now give your identity provider the values below, and prove your domains (under Domains: ask for each one’s DNS value).`;
        return await c.done(reply, t, notice, connectionPath(SSO_CONNECTION_PATH, t.tenant.id, made.id, '#sp-values'));
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        return c.show(reply, problem.status, newConnectionForm({ session: t.session, tenant: t.tenant, values, problem }), {
          who: t,
          in: t,
          section,
        });
      }
    }),

    /** GET /console/sso/connection?tenant=…&connection=…: a connection (and the wizard's later steps) */
    connection: c.page(async (t, req, reply) => {
      const q = queryOf(req);
      const conn = await services.sso.get(t.caller, text(q.connection) ?? '');
      return showPage(reply, 200, t, conn);
    }),

    /** POST /console/sso/check: the live check (getSSOConnectionConfig); nothing is saved */
    check: c.form(async (t, form, req, reply) => {
      const values = idpValues(form);
      const conn = await services.sso.get(t.caller, text(form.connection) ?? '');
      try {
        const saml = samlOf(values, conn, true);
        const checked = await services.sso.inspect(t.caller, saml.metadataURL ?? null, saml.metadataURL ? null : (saml.signingCert ?? null));
        return showPage(reply, 200, t, conn, { idp: { values, checked } });
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        return showPage(reply, problem.status, t, conn, { idp: { values, problem } });
      }
    }),

    /** POST /console/sso/edit: one change (updateSSOConnection): the IdP's side, a domain, a tester, the status */
    edit: c.form(async (t, form, req, reply) => {
      const id = text(form.connection) ?? '';
      const kind = text(form.change) ?? '';
      const value = (text(form.value) ?? '').trim();
      const values = idpValues(form);
      let notice: string;
      try {
        let input: UpdateSsoConnectionInput;
        if (kind === 'idp') {
          const before = await services.sso.get(t.caller, id);
          input = { id, samlConfiguration: samlOf(values, before) };
        } else if (kind === 'regenerateDomain' || kind === 'checkDomain') {
          if (value === '') throw badInput('Choose a domain from the page.', { field: 'value' });
          if (kind === 'regenerateDomain') {
            // the new value is shown in this answer only (never left in the session): no redirect
            const renewed = await services.sso.regenerateDomainChallenge(t.caller, id, value);
            return await showPage(reply, 200, t, renewed, {
              notice: `A new value for ${value}: publish it as shown below. The previous value no longer proves the domain.`,
            });
          }
          const checked = await services.sso.checkDomainNow(t.caller, id, value);
          const proof = checked.domainProofs.find((d) => d.domain === value);
          notice =
            proof?.status === 'proven'
              ? `${value} is proven: people in it sign in through this connection.`
              : `${value} is not proven (${proof?.status ?? 'unknown'})${proof?.checkError ? `: ${proof.checkError}` : ''}.`;
          return await c.done(reply, t, notice, connectionPath(SSO_CONNECTION_PATH, t.tenant.id, id, '#domains'));
        } else if (kind === 'status') {
          const status = STATUSES.find((s) => s === text(form.status));
          if (!status) throw badInput('Choose a status from the page.', { field: 'status' });
          input = { id, status };
        } else if (CHANGES[kind]) {
          if (value === '')
            throw badInput(
              {
                domains: 'Enter a domain, like acme.com.',
                testers: 'Enter an e-mail address.',
                name: 'Enter a name.',
                certificates: 'Choose a certificate.',
              }[PART_OF[kind] ?? 'name'],
              { field: 'value' },
            );
          input = { id, ...CHANGES[kind](value) };
        } else {
          throw badInput('Send one of the forms of the connection’s page.', { field: 'change' });
        }
        const after = await services.sso.update(t.caller, input);
        notice =
          kind === 'idp'
            ? after.status === 'Testing'
              ? 'The identity provider’s side is saved, and the connection is Testing: add a tester and try the test sign-in.'
              : 'The identity provider’s side is saved.'
            : kind === 'status'
              ? STATUS_NOTICE[after.status]
              : kind === 'name'
                ? `Renamed ${after.name}.`
                : kind === 'removeCertificate'
                  ? 'The certificate was removed.'
                  : `Saved: ${kind.startsWith('add') ? 'added' : 'removed'} ${value}.`;
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        const conn = await services.sso.get(t.caller, id);
        if (kind === 'idp') return showPage(reply, problem.status, t, conn, { idp: { values, problem } });
        const of = PART_OF[kind] ?? 'status';
        return showPage(reply, problem.status, t, conn, {
          problem: { of, problem, typed: kind.startsWith('add') || kind === 'name' ? value : undefined },
        });
      }
      return c.done(reply, t, notice, connectionPath(SSO_CONNECTION_PATH, t.tenant.id, id));
    }),

    /** POST /console/sso/refresh: refreshSSOConnectionMetadata */
    refresh: c.form(async (t, form, req, reply) => {
      const id = text(form.connection) ?? '';
      try {
        await services.sso.refreshMetadata(t.caller, id);
      } catch (err) {
        const problem = c.formProblem(err, req, reply, t.tenant);
        const conn = await services.sso.get(t.caller, id);
        return showPage(reply, problem.status, t, conn, { problem: { of: 'refresh', problem } });
      }
      return c.done(reply, t, 'The metadata was read again.', connectionPath(SSO_CONNECTION_PATH, t.tenant.id, id));
    }),

    /** POST /console/sso/test (tenant, connection): a test sign-in, in the new tab its form opened
     *  (target=_blank). It opens a SAML request of 10 minutes, a change: a form with the session's
     *  CSRF token, so that no link elsewhere starts one in an Administrator's browser. The browser
     *  goes on to the IdP by itself (a meta refresh, no script), the link there if it does not: a
     *  redirect from a form's POST to another site would break form-action 'self'. The ACS shows
     *  what it received and signs nobody in. */
    test: c.form(async (t, form, req, reply) => {
      const conn = await services.sso.get(t.caller, text(form.connection) ?? '');
      const started = await services.ssoSignIn.startTest(conn.id, t.session);
      if (started.kind === 'refused') throw badInput(started.message, { field: 'test' });
      const view = { title: 'Test sign-in', body: testHop(conn, started.url) };
      return c.show(reply, 200, view, { who: t, in: t, section, refreshTo: started.url });
    }),

    /** GET /console/sso/test?tenant=…&connection=…: a test starts from the connection page's form
     *  (a POST); a link or an old bookmark is sent to that page, where whoever may see it finds the button. */
    testByLink: c.page(async (t, req, reply) => {
      const q = queryOf(req);
      const conn = await services.sso.get(t.caller, text(q.connection) ?? '');
      return reply.redirect(connectionPath(SSO_CONNECTION_PATH, t.tenant.id, conn.id, '#test'), 303);
    }),

    /** GET /console/sso/delete?tenant=…&connection=… */
    deleteForm: c.page(async (t, req, reply) => {
      const q = queryOf(req);
      const conn = await services.sso.get(t.caller, text(q.connection) ?? '');
      return c.show(reply, 200, deleteConfirmation({ session: t.session, tenant: t.tenant, c: conn }), { who: t, in: t, section });
    }),

    /** POST /console/sso/delete: deleteSSOConnection */
    delete: c.form(async (t, form, req, reply) => {
      const deleted = await services.sso.delete(t.caller, text(form.connection) ?? '');
      const notice = `Connection ${deleted.name} was deleted. People of ${deleted.domains.join(', ')} sign in with a password again.`;
      return c.done(reply, t, notice, ssoListPath(t.tenant.id));
    }),
  };
}
