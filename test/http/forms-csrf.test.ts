// Every form of the browser pages, found from the routes the app serves (a POST route under
// /login, /logout, /device, /console or /sso without a case here fails the test: deny by default),
// refuses a post without the session's CSRF token, or with the valid token of another session (an
// attacker's own), and changes nothing; the same post with the right token acts (so each case can
// fail). And session fixation: a session id planted before sign-in, whether issued to an attacker
// or made up, never becomes a signed-in session. On both engines.
import { digestOpaqueToken, newOpaqueToken } from '../../src/crypto/opaque-token.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, PASSWORD, setupLink, signedInUser } from '../helpers/pages.js';
import { makeCertificate } from '../helpers/openssl.js';
import { servedRoutes } from '../helpers/routes.js';
import { passkeyOptionsIn, SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { createClient } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const PAGE_PATHS = /^\/(login|logout|device|console|sso)(\/|$)/;
/** POST routes under those paths that are not forms of ours: the SAML ACS takes the IdP's signed
 *  response, posted from the IdP's site; it is bound to the browser session at /sso/saml/finish
 *  (docs/sso.md, "Sign-in"; test/sso/saml-sign-in.test.ts). */
const NOT_FORMS = ['/sso/saml/:id/acs'];

/** The POST routes of the pages (test/helpers/routes.ts reads them from Fastify's route tree). */
function postedPagePaths(t: TestApp): string[] {
  return servedRoutes(t)
    .filter((r) => r.methods.includes('POST') && PAGE_PATHS.test(r.path) && !NOT_FORMS.includes(r.path))
    .map((r) => r.path)
    .sort();
}

interface FormCase {
  /** a person part-way through, on the page with the form; returns the form's fields (no _csrf),
   *  and the URL to post to when the route has a parameter */
  prepare(): Promise<{ client: PageClient; page: Response; fields: Record<string, string>; url?: string }>;
  /** what the refused post must have left as it was */
  unchanged(client: PageClient): Promise<void>;
  /** the status of the same post with the right token: the form acts */
  acts: number;
}

for (const engine of transportEngines()) {
  describe(`every form needs its session's CSRF token (${engine})`, () => {
    let t: TestApp;
    let admin: { client: PageClient; key: string };
    /** a person whose own account page's forms are posted (the admin's password and key stay) */
    let person: { client: PageClient; key: string };
    before(async () => {
      t = await startTestApp({ engine });
      admin = await signedInUser(t, 'forms-admin@example.com', { roles: [ROLE_IDS.Administrator] });
      person = await signedInUser(t, 'forms-person@example.com');
    });
    after(() => t.close());

    /** Whose token an attacker has: their own session's, valid, just not the victim's. */
    async function attackersToken(): Promise<string> {
      const attacker = new PageClient(t);
      return attacker.csrf(await attacker.get('/login'));
    }
    const atStep = async (c: PageClient, text: RegExp) => assert.match((await c.get('/login')).text, text);

    async function atPasswordStep(email = 'forms-admin@example.com') {
      const client = new PageClient(t);
      const first = await client.get('/login');
      await client.post('/login', { _csrf: client.csrf(first), email });
      return { client, page: await client.get('/login') };
    }
    async function deviceCode(hint: string): Promise<{ device_code: string; user_code: string }> {
      const res = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/device/code',
        payload: { client_id: 'gatehouse-cli', login_hint: hint },
      });
      return res.body;
    }
    async function poll(deviceCodeValue: string): Promise<string | undefined> {
      t.clock.advance(10_000);
      const res = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/token',
        payload: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCodeValue, client_id: 'gatehouse-cli' },
      });
      return res.body.error;
    }
    const clientCount = async () =>
      (await t.gql(await t.rootToken(), '{ clients(perPage: 500) { id } }', {}, { tenant: '1' })).body.data.clients.length;

    const ssoConnections = async (): Promise<{ id: string; domains: string[] }[]> =>
      (await t.gql(await t.rootToken(), '{ ssoConnections { id domains } }', {}, { path: '/public/query', tenant: '1' })).body.data.ssoConnections;
    let ssoMade = 0;
    /** a new SSO connection of tenant 1 (Created), serving one domain of its own */
    const ssoConnection = async (): Promise<string> => {
      const res = await t.gql(
        await t.rootToken(),
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
        { c: { name: `Forms console ${++ssoMade}`, type: 'saml', domains: [`forms-console-${ssoMade}.test`] } },
        { path: '/public/query', tenant: '1' },
      );
      return res.body.data.createSSOConnection.id;
    };
    /** SAML requests open (a test sign-in opens one) */
    const samlRequests = async () =>
      Number(
        (
          await t.db.kysely
            .selectFrom('saml_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    let samlRequestsBefore = 0;
    let longPem: string | undefined;
    /** a certificate valid whatever the test clock says (2020 to 2036): a test sign-in needs one valid now */
    const longCertificate = () => {
      longPem ??= makeCertificate({ validity: { notBefore: '20200101000000Z', notAfter: '20361231000000Z' } }).certPem;
      return longPem;
    };
    let pem: string | undefined;
    const certificate = () => {
      pem ??= makeCertificate({ days: 30 }).certPem;
      return pem;
    };

    /** audit events of an action so far */
    const events = async (action: string) =>
      Number((await sql<{ n: string }>`select count(*)::text as n from audit_events where action = ${action}`.execute(t.db.kysely)).rows[0]!.n);
    const USER = 'id disabled_at role_assignments { id role_id }';
    /** a user of tenant 1 (set-up pending), made by the root client */
    const newUser = async (name: string) =>
      (
        await t.gql(
          await t.rootToken(),
          `mutation($e: String!) { createUser(email: $e) { user { ${USER} } } }`,
          { e: `${name}-${Date.now()}@forms.test` },
          { tenant: '1' },
        )
      ).body.data.createUser.user;
    const userNow = async (id: string) =>
      (await t.gql(await t.rootToken(), `query($id: ID!) { user(id: $id) { ${USER} } }`, { id }, { tenant: '1' })).body.data?.user;
    const userForm = async (id: string) => ({ client: admin.client, page: await admin.client.get(`/console/users/user?tenant=1&user=${id}`) });

    const cases = (): Record<string, FormCase> => {
      let ssoBefore = 0;
      let forced: { clientId: string; secret: string } | undefined;
      let ssoEdited = '';
      let target = '';
      let email = '';
      let assignment = '';
      let count = 0;
      let pending = '';
      let countBefore = 0;
      let rotating: { clientId: string; secret: string } | undefined;
      // the tenant pages' forms: a tenant under the vendor tenant, read back through the tenant interface
      let tenantTarget = '';
      let made = '';
      const tenant = async (id: string) =>
        (
          await tq(
            t,
            await t.rootToken(),
            'query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids}) { results { name support_enabled labels { id } partnership { subscriptions { id } } } } }',
            { ids: [id] },
          )
        ).body.data.tenants.results[0];
      const named = async (name: string) =>
        (await tq(t, await t.rootToken(), 'query($n: String) { tenants(tenantsQuery: {name: $n}) { count } }', { n: name })).body.data.tenants.count;
      const servicesOf1 = async () =>
        (await tq(t, await t.rootToken(), '{ services(partner_tenant_id: "1") { name } }')).body.data.services.map((x: { name: string }) => x.name);
      const tenantForm = async (path: string, fields: (id: string) => Record<string, string>) => {
        tenantTarget = await createTenant(t, '1', { name: `forms-tenant-${Date.now()}` });
        return {
          client: admin.client,
          page: await admin.client.get(`${path}?tenant=${tenantTarget}`),
          fields: { tenant: tenantTarget, ...fields(tenantTarget) },
        };
      };
      return {
        '/login': {
          prepare: async () => {
            const { client, page } = await atPasswordStep();
            return { client, page, fields: { password: PASSWORD } };
          },
          unchanged: (c) => atStep(c, /Enter your password/),
          acts: 303,
        },
        '/login/restart': {
          prepare: async () => {
            const { client, page } = await atPasswordStep();
            return { client, page, fields: {} };
          },
          unchanged: (c) => atStep(c, /Enter your password/),
          acts: 303,
        },
        '/login/passkey': {
          prepare: async () => {
            // a person with a passkey, signing in with it alone (no password) in a new browser
            const owner = await signedInUser(t, `forms-passkey-${Date.now()}@example.com`);
            const auth = new SoftAuthenticator({ origin: t.config.baseUrl });
            t.clock.advance(30_000);
            const account = await owner.client.get('/console/account');
            const added = await owner.client.post('/console/account/passkeys', {
              _csrf: owner.client.csrf(account),
              name: 'Forms',
              code: totpCodeAt(owner.key, t.clock.now()),
              response: auth.register(passkeyOptionsIn(account.text, 'create')!),
            });
            assert.equal(added.status, 303, added.text);
            const client = new PageClient(t);
            const page = await client.get('/login');
            return { client, page, fields: { response: auth.assert(passkeyOptionsIn(page.text, 'get')!) } };
          },
          unchanged: async (c) => assert.equal((await c.get('/console')).status, 303, 'not signed in'),
          acts: 303,
        },
        '/login/setup': {
          prepare: async () => {
            const { client } = await signedInUser(t, `forms-switch-${Date.now()}@example.com`);
            await client.get(await setupLink(t, `forms-switch-to-${Date.now()}@example.com`));
            const page = await client.get('/login/setup');
            assert.match(page.text, /Set up another account\?/);
            return { client, page, fields: {} };
          },
          // still signed in as before, still asked
          unchanged: async (c) => {
            assert.equal((await c.get('/console')).status, 200, 'still signed in');
            assert.match((await c.get('/login/setup')).text, /Set up another account\?/);
          },
          acts: 303,
        },
        '/login/setup/cancel': {
          prepare: async () => {
            const { client } = await signedInUser(t, `forms-stay-${Date.now()}@example.com`);
            await client.get(await setupLink(t, `forms-stay-other-${Date.now()}@example.com`));
            return { client, page: await client.get('/login/setup'), fields: {} };
          },
          unchanged: async (c) => assert.match((await c.get('/login/setup')).text, /Set up another account\?/),
          acts: 303,
        },
        '/login/forgot': {
          prepare: async () => {
            const client = new PageClient(t);
            return { client, page: await client.get('/login/forgot'), fields: { email: 'forms-admin@example.com' } };
          },
          // no reset link made, no mail queued
          unchanged: async () => {
            const r = await sql<{ n: string }>`select count(*)::text as n from mail_outbox where template = 'password_reset'`.execute(t.db.kysely);
            assert.equal(r.rows[0]!.n, '0');
          },
          acts: 200,
        },
        '/device': {
          prepare: async () => {
            const code = await deviceCode('forms-admin@example.com');
            const client = new PageClient(t);
            return { client, page: await client.get('/device'), fields: { user_code: code.user_code } };
          },
          // nothing to change yet: the page answered 403 instead of leading on to sign-in
          unchanged: async () => {},
          acts: 303,
        },
        '/device/approve': {
          prepare: async () => {
            const code = await deviceCode('forms-admin@example.com');
            pending = code.device_code;
            const page = await admin.client.get(`/device/approve?user_code=${code.user_code.replace('-', '')}`);
            assert.match(page.text, /Approve this device\?/);
            return { client: admin.client, page, fields: { user_code: code.user_code.replace('-', ''), decision: 'approve' } };
          },
          unchanged: async () => assert.equal(await poll(pending), 'authorization_pending', 'nothing was approved'),
          acts: 200,
        },
        '/console/credentials/new': {
          prepare: async () => {
            countBefore = await clientCount();
            const page = await admin.client.get('/console/credentials/new?tenant=1');
            return {
              client: admin.client,
              page,
              fields: { tenant: '1', name: `forms-${Date.now()}`, [`role_${ROLE_IDS.Analyst}`]: ROLE_IDS.Analyst },
            };
          },
          unchanged: async () => assert.equal(await clientCount(), countBefore),
          acts: 200,
        },
        '/console/credentials/rotate': {
          prepare: async () => {
            const c = await createClient(t, await t.rootToken(), `forms-rotate-${Date.now()}`);
            rotating = c;
            const page = await admin.client.get(`/console/credentials/rotate?tenant=1&client=${c.clientId}`);
            return { client: admin.client, page, fields: { tenant: '1', client: c.clientId, secret: c.secret } };
          },
          // the secret still obtains a token: it was not rotated
          unchanged: async () => assert.equal((await t.tokenResponse(rotating!.clientId, rotating!.secret)).status, 200),
          acts: 200,
        },
        '/console/credentials/delete': {
          prepare: async () => {
            const c = await createClient(t, await t.rootToken(), `forms-delete-${Date.now()}`);
            countBefore = await clientCount();
            const page = await admin.client.get(`/console/credentials/delete?tenant=1&client=${c.clientId}`);
            return { client: admin.client, page, fields: { tenant: '1', client: c.clientId } };
          },
          unchanged: async () => assert.equal(await clientCount(), countBefore),
          acts: 303,
        },
        '/console/credentials/force-rotate': {
          prepare: async () => {
            forced = await createClient(t, await t.rootToken(), `forms-force-${Date.now()}`);
            const page = await admin.client.get(`/console/credentials/force-rotate?tenant=1&client=${forced.clientId}`);
            return { client: admin.client, page, fields: { tenant: '1', client: forced.clientId } };
          },
          // the secret still obtains tokens: no rotation happened
          unchanged: async () => assert.equal((await t.tokenResponse(forced!.clientId, forced!.secret)).status, 200),
          acts: 200,
        },
        '/console/sso/new': {
          prepare: async () => {
            ssoBefore = (await ssoConnections()).length;
            const page = await admin.client.get('/console/sso/new?tenant=1');
            return { client: admin.client, page, fields: { tenant: '1', name: `forms-sso-${Date.now()}`, domains: `forms-new-${Date.now()}.test` } };
          },
          unchanged: async () => assert.equal((await ssoConnections()).length, ssoBefore),
          acts: 303,
        },
        '/console/sso/check': {
          prepare: async () => {
            const id = await ssoConnection();
            const page = await admin.client.get(`/console/sso/connection?tenant=1&connection=${id}`);
            return { client: admin.client, page, fields: { tenant: '1', connection: id, method: 'certificate', signingCert: certificate() } };
          },
          // the check changes nothing either way: the refused post shows no check
          unchanged: async () => {},
          acts: 200,
        },
        '/console/sso/edit': {
          prepare: async () => {
            const id = await ssoConnection();
            ssoEdited = id;
            const page = await admin.client.get(`/console/sso/connection?tenant=1&connection=${id}`);
            return {
              client: admin.client,
              page,
              fields: { tenant: '1', connection: id, change: 'addDomain', value: `forms-more-${Date.now()}.test` },
            };
          },
          unchanged: async () => assert.equal((await ssoConnections()).find((c) => c.id === ssoEdited)?.domains.length, 1),
          acts: 303,
        },
        '/console/sso/refresh': {
          prepare: async () => {
            const id = await ssoConnection();
            const page = await admin.client.get(`/console/sso/connection?tenant=1&connection=${id}`);
            return { client: admin.client, page, fields: { tenant: '1', connection: id } };
          },
          unchanged: async () => {},
          // with the right token the service answers: this connection has no metadata URL to read
          // (a metadata URL on loopback needs GATEHOUSE_SSO_ALLOW_PRIVATE_URLS, which this app has not)
          acts: 400,
        },
        '/console/sso/test': {
          prepare: async () => {
            const id = await ssoConnection();
            // configured (Testing): the test sign-in can start
            await t.gql(
              await t.rootToken(),
              'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { id } }',
              { u: { id, samlConfiguration: { signingCert: longCertificate(), signInEndpoint: 'https://idp.forms.test/sso' } } },
              { path: '/public/query', tenant: '1' },
            );
            samlRequestsBefore = await samlRequests();
            const page = await admin.client.get(`/console/sso/connection?tenant=1&connection=${id}`);
            return { client: admin.client, page, fields: { tenant: '1', connection: id } };
          },
          // a refused post opens no SAML request
          unchanged: async () => assert.equal(await samlRequests(), samlRequestsBefore),
          // with the right token: the page that goes on to the IdP
          acts: 200,
        },
        '/console/sso/delete': {
          prepare: async () => {
            const id = await ssoConnection();
            ssoBefore = (await ssoConnections()).length;
            const page = await admin.client.get(`/console/sso/delete?tenant=1&connection=${id}`);
            return { client: admin.client, page, fields: { tenant: '1', connection: id } };
          },
          unchanged: async () => assert.equal((await ssoConnections()).length, ssoBefore),
          acts: 303,
        },
        '/console/tenant/new': {
          prepare: async () => {
            made = `forms-new-${Date.now()}`;
            return {
              client: admin.client,
              page: await admin.client.get('/console/tenant/new?tenant=1'),
              fields: { tenant: '1', name: made, env_echo: 'yes' },
            };
          },
          unchanged: async () => assert.equal(await named(made), 0),
          acts: 303,
        },
        '/console/tenant/edit': {
          prepare: () => tenantForm('/console/tenant/edit', () => ({ part: 'profile', name: 'forms-renamed' })),
          unchanged: async () => assert.notEqual((await tenant(tenantTarget)).name, 'forms-renamed'),
          acts: 303,
        },
        '/console/tenant/support': {
          prepare: () => tenantForm('/console/tenant/support', () => ({ action: 'enable', reason: 'forms' })),
          unchanged: async () => assert.equal((await tenant(tenantTarget)).support_enabled, false),
          acts: 303,
        },
        '/console/tenant/labels': {
          prepare: () => tenantForm('/console/tenant/labels', () => ({ action: 'create', name: 'forms-label', owner: '1' })),
          unchanged: async () => assert.deepEqual((await tenant(tenantTarget)).labels, []),
          acts: 303,
        },
        '/console/tenant/subscriptions': {
          prepare: async () => {
            const service = await tq(t, await t.rootToken(), 'mutation($s: InputService!) { createService(service_input: $s) { id } }', {
              s: { name: `forms-service-${Date.now()}`, owner_tenant_id: '1' },
            });
            const sub = await tq(
              t,
              await t.rootToken(),
              'mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { id } }',
              {
                s: { service_id: service.body.data.createService.id, name: `forms-sub-${Date.now()}`, partner_tenant_id: '1' },
              },
            );
            const id = sub.body.data.createPartnerSubscription.id as string;
            return tenantForm('/console/tenant/subscriptions', () => ({ action: 'assign', subscription: id }));
          },
          unchanged: async () => assert.deepEqual((await tenant(tenantTarget)).partnership.subscriptions, []),
          acts: 303,
        },
        '/console/tenant/offerings': {
          prepare: async () => {
            made = `forms-offer-${Date.now()}`;
            return {
              client: admin.client,
              page: await admin.client.get('/console/tenant/offerings?tenant=1'),
              fields: { tenant: '1', action: 'service', service_name: made },
            };
          },
          unchanged: async () => assert.ok(!(await servicesOf1()).includes(made)),
          acts: 303,
        },
        '/sso/saml/:id/login': {
          prepare: async () => {
            const res = await t.gql(
              await t.rootToken(),
              `mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }`,
              { c: { name: 'Forms IdP', type: 'saml', domains: ['forms.test'] } },
              { path: '/public/query', tenant: '1' },
            );
            const id = res.body.data.createSSOConnection.id;
            const configured = await t.gql(
              await t.rootToken(),
              `mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }`,
              {
                u: {
                  id,
                  samlConfiguration: {
                    signingCert: makeCertificate({ validity: { notBefore: '20200101000000Z', notAfter: '20400101000000Z' } }).certPem,
                    signInEndpoint: 'https://idp.forms.test/sso',
                  },
                },
              },
              { path: '/public/query', tenant: '1' },
            );
            assert.equal(configured.body.data.updateSSOConnection.status, 'Testing', configured.text);
            const client = new PageClient(t);
            const url = `/sso/saml/${id}/login`;
            return { client, page: await client.get(url), fields: {}, url };
          },
          // the sign-in was not begun: /login still asks for an address
          unchanged: (c) => atStep(c, /E-mail address/),
          acts: 303,
        },
        '/console/users/invite': {
          prepare: async () => {
            email = `forms-invite-${Date.now()}@forms.test`;
            const page = await admin.client.get('/console/users/invite?tenant=1');
            return { client: admin.client, page, fields: { tenant: '1', email, display_name: '', role: ROLE_IDS.Analyst } };
          },
          unchanged: async () =>
            assert.deepEqual((await t.gql(await t.rootToken(), 'query($e: String) { users(email: $e) { id } }', { e: email })).body.data.users, []),
          acts: 200,
        },
        '/console/users/roles': {
          prepare: async () => {
            target = (await newUser('forms-roles')).id;
            return { ...(await userForm(target)), fields: { tenant: '1', user: target, role: ROLE_IDS.Auditor, in: '', expires: '' } };
          },
          unchanged: async () =>
            assert.ok(!(await userNow(target)).role_assignments.some((a: { role_id: string }) => a.role_id === ROLE_IDS.Auditor)),
          acts: 303,
        },
        '/console/users/roles/remove': {
          prepare: async () => {
            target = (await newUser('forms-remove')).id;
            assignment = (await userNow(target)).role_assignments[0].id;
            return { ...(await userForm(target)), fields: { tenant: '1', user: target, in: '1', assignment } };
          },
          unchanged: async () => assert.ok((await userNow(target)).role_assignments.some((a: { id: string }) => a.id === assignment)),
          acts: 303,
        },
        '/console/users/disable': {
          prepare: async () => {
            target = (await newUser('forms-disable')).id;
            return { ...(await userForm(target)), fields: { tenant: '1', user: target } };
          },
          unchanged: async () => assert.equal((await userNow(target)).disabled_at, null),
          acts: 303,
        },
        '/console/users/enable': {
          prepare: async () => {
            target = (await newUser('forms-enable')).id;
            await t.gql(await t.rootToken(), 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: target }, { tenant: '1' });
            return { ...(await userForm(target)), fields: { tenant: '1', user: target } };
          },
          unchanged: async () => assert.notEqual((await userNow(target)).disabled_at, null),
          acts: 303,
        },
        '/console/users/reset': {
          prepare: async () => {
            target = (await newUser('forms-reset')).id;
            count = await events('user.sign_in_reset');
            return { ...(await userForm(target)), fields: { tenant: '1', user: target } };
          },
          unchanged: async () => assert.equal(await events('user.sign_in_reset'), count),
          acts: 200,
        },
        '/console/users/unlock': {
          prepare: async () => {
            target = (await newUser('forms-unlock')).id;
            count = await events('user.sign_in_unlocked');
            return { ...(await userForm(target)), fields: { tenant: '1', user: target } };
          },
          unchanged: async () => assert.equal(await events('user.sign_in_unlocked'), count),
          acts: 303,
        },
        '/console/users/delete': {
          prepare: async () => {
            target = (await newUser('forms-delete')).id;
            const page = await admin.client.get(`/console/users/delete?tenant=1&user=${target}`);
            return { client: admin.client, page, fields: { tenant: '1', user: target } };
          },
          unchanged: async () => assert.ok(await userNow(target), 'the user is still there'),
          acts: 303,
        },
        '/console/account/password': {
          prepare: async () => {
            count = await events('user.password_changed');
            const page = await person.client.get('/console/account');
            const next = 'a new and unusual passphrase';
            return { client: person.client, page, fields: { current: PASSWORD, password: next, confirmation: next } };
          },
          unchanged: async () => assert.equal(await events('user.password_changed'), count),
          acts: 303,
        },
        '/console/account/authenticator': {
          prepare: async () => {
            t.clock.advance(30_000);
            const page = await person.client.get('/console/account');
            return { client: person.client, page, fields: { code: totpCodeAt(person.key, t.clock.now()) } };
          },
          unchanged: async (c) => assert.equal((await c.get('/console/account/authenticator')).status, 303, 'no new key pending'),
          acts: 200,
        },
        '/console/account/authenticator/confirm': {
          prepare: async () => {
            count = await events('user.totp_reenrolled');
            const page = await person.client.get('/console/account/authenticator');
            const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(page.text)![1]!.replace(/ /g, '');
            person.key = key;
            return { client: person.client, page, fields: { code: totpCodeAt(key, t.clock.now()) } };
          },
          unchanged: async () => assert.equal(await events('user.totp_reenrolled'), count),
          acts: 303,
        },
        '/console/account/recovery-codes': {
          prepare: async () => {
            count = await events('user.recovery_codes_renewed');
            t.clock.advance(30_000);
            const page = await person.client.get('/console/account');
            return { client: person.client, page, fields: { code: totpCodeAt(person.key, t.clock.now()) } };
          },
          unchanged: async () => assert.equal(await events('user.recovery_codes_renewed'), count),
          acts: 200,
        },
        '/console/account/passkeys': {
          prepare: async () => {
            count = await events('passkey.registered');
            t.clock.advance(30_000);
            const page = await person.client.get('/console/account');
            const response = new SoftAuthenticator({ origin: t.config.baseUrl }).register(passkeyOptionsIn(page.text, 'create')!);
            return { client: person.client, page, fields: { name: 'Forms key', code: totpCodeAt(person.key, t.clock.now()), response } };
          },
          unchanged: async () => assert.equal(await events('passkey.registered'), count),
          acts: 303,
        },
        '/console/account/passkeys/remove': {
          prepare: async () => {
            count = await events('passkey.removed');
            const page = await person.client.get('/console/account');
            const id = /passkeys\/remove\?passkey=([0-9a-f-]+)/.exec(page.text)![1]!;
            return { client: person.client, page, fields: { passkey: id } };
          },
          unchanged: async () => assert.equal(await events('passkey.removed'), count),
          acts: 303,
        },
        '/console/account/email': {
          prepare: async () => {
            count = await events('user.email_change_requested');
            t.clock.advance(30_000);
            return {
              client: person.client,
              page: await person.client.get('/console/account'),
              fields: { email: `forms-new-${Date.now()}@example.test`, code: totpCodeAt(person.key, t.clock.now()) },
            };
          },
          unchanged: async () => assert.equal(await events('user.email_change_requested'), count),
          acts: 303,
        },
        '/console/account/email/confirm': {
          prepare: async () => {
            count = await events('user.email_changed');
            // someone of their own, with a new address waiting (its link's token known here)
            const mover = await signedInUser(t, `forms-mover-${Date.now()}@example.test`);
            const row = await t.db.kysely
              .selectFrom('users')
              .select('id')
              .where('email_normalized', 'like', 'forms-mover-%')
              .orderBy('created_at', 'desc')
              .executeTakeFirstOrThrow();
            const token = newOpaqueToken();
            await t.service.store.users.setPendingEmail(
              row.id,
              {
                email: `forms-moved-${Date.now()}@example.test`,
                tokenHash: digestOpaqueToken(token),
                expiresAt: new Date(t.clock.now().getTime() + 3600_000),
                mailed: false,
              },
              t.clock.now(),
            );
            const page = await mover.client.get(`/console/account/email/confirm?token=${token}`);
            assert.equal(page.status, 200, page.text.slice(0, 300));
            return { client: mover.client, page, fields: { token } };
          },
          unchanged: async () => assert.equal(await events('user.email_changed'), count),
          acts: 303,
        },
        '/console/account/sessions': {
          prepare: async () => {
            count = await events('user.sessions_ended');
            return { client: person.client, page: await person.client.get('/console/account'), fields: {} };
          },
          unchanged: async () => assert.equal(await events('user.sessions_ended'), count),
          acts: 303,
        },
        // last: it ends the administrator's session
        '/logout': {
          prepare: async () => ({ client: admin.client, page: await admin.client.get('/console'), fields: {} }),
          unchanged: async (c) => assert.equal((await c.get('/console')).status, 200, 'still signed in'),
          acts: 303,
        },
      };
    };

    it('has a case for every form the pages serve', () => {
      assert.deepEqual(postedPagePaths(t), Object.keys(cases()).sort());
    });

    const table = cases();
    for (const [path, c] of Object.entries(table)) {
      it(`${path}: no token or another session's token is refused and changes nothing; the right token acts`, async () => {
        const { client, page, fields, url = path } = await c.prepare();
        // none; an attacker's own valid token; one as long in characters but not in bytes
        for (const token of [undefined, await attackersToken(), 'é'.repeat(43)]) {
          const res = await client.post(url, token === undefined ? fields : { ...fields, _csrf: token });
          assert.equal(res.status, 403, `${path} with ${token === undefined ? 'no' : 'a wrong'} token: ${res.text.slice(0, 200)}`);
          assert.match(res.text, /This form has expired/);
          await c.unchanged(client);
        }
        const res = await client.post(url, { ...fields, _csrf: client.csrf(page) });
        assert.equal(res.status, c.acts, `${path} with the right token: ${res.text.slice(0, 300)}`);
      });
    }

    it('session fixation: a session id issued to an attacker, planted before sign-in, is not signed in after it', async () => {
      const attacker = new PageClient(t);
      await attacker.get('/login');
      const planted = attacker.cookie!;
      const victim = new PageClient(t);
      victim.cookie = planted;
      let page = await victim.get('/login');
      await victim.post('/login', { _csrf: victim.csrf(page), email: 'forms-admin@example.com' });
      page = await victim.get('/login');
      await victim.post('/login', { _csrf: victim.csrf(page), password: PASSWORD });
      page = await victim.get('/login');
      t.clock.advance(30_000);
      const done = await victim.post('/login', { _csrf: victim.csrf(page), code: totpCodeAt(admin.key, t.clock.now()) });
      assert.equal(done.status, 303, done.text);
      assert.notEqual(victim.cookie, planted, 'a new session id at sign-in');
      assert.equal((await victim.get('/console')).status, 200, 'the victim is signed in');
      assert.equal((await attacker.get('/console')).status, 303, 'the planted id is not');
      assert.equal((await attacker.get('/console')).headers.location, '/login?return_to=%2Fconsole');
    });

    it('a planted session id stops at the password: its planter can neither guess codes nor see an authenticator key', async () => {
      // the attacker's own anonymous session, planted in the victim's browser
      const attacker = new PageClient(t);
      const attackerPage = await attacker.get('/login');
      const planted = attacker.cookie!;
      const plantedCsrf = attacker.csrf(attackerPage);
      const victim = new PageClient(t);
      victim.cookie = planted;
      let page = await victim.get('/login');
      await victim.post('/login', { _csrf: victim.csrf(page), email: 'forms-admin@example.com' });
      page = await victim.get('/login');
      assert.equal(victim.cookie, planted, 'the e-mail step raises no trust: same id');
      await victim.post('/login', { _csrf: victim.csrf(page), password: PASSWORD });
      assert.notEqual(victim.cookie, planted, 'a new session id once the password passed');
      assert.match((await victim.get('/login')).text, /Enter your code/, 'the victim goes on');
      // the planter, with the planted id and its CSRF token, is not at the code step
      const guess = await attacker.post('/login', { _csrf: plantedCsrf, code: '123456' });
      assert.equal(guess.status, 403, `a code guess in the planted session: ${guess.text.slice(0, 200)}`);

      // the first-start administrator, at enrolment: the planter does not see the key
      const spy = new PageClient(t);
      await spy.get('/login');
      const plantedAgain = spy.cookie!;
      const admin1 = new PageClient(t);
      admin1.cookie = plantedAgain;
      page = await admin1.get('/login');
      await admin1.post('/login', { _csrf: admin1.csrf(page), email: 'admin@gatehouse.local' });
      page = await admin1.get('/login');
      await admin1.post('/login', { _csrf: admin1.csrf(page), password: 'test-admin-password-1' });
      assert.match((await admin1.get('/login')).text, /Set up your authenticator/);
      const seen = await spy.get('/login');
      assert.doesNotMatch(seen.text, /Set up your authenticator|Key: <code>/, 'the planted id shows no authenticator key');
    });

    it('session fixation: a made-up session id is never adopted', async () => {
      const victim = new PageClient(t);
      const madeUp = 'A'.repeat(43);
      victim.cookie = madeUp;
      const res = await victim.get('/login');
      assert.notEqual(victim.cookie, madeUp, 'the server issues its own id');
      assert.match(String(res.headers['set-cookie']), /^gatehouse_session=[A-Za-z0-9_-]{43};/);
    });
  });
}
