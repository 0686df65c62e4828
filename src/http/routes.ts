// The one route table: every route of the service (method, path, handler), by family, each in
// the scope that gives the family what it shares (error format, body parsers, headers; set up by
// oauthScope, graphqlScope, pageScope). A handler lives with its family (http/oauth/, http/pages/,
// graphql-route.ts…); no other file registers a route. (GET /metrics is on a listener of its own:
// http/metrics.ts.)
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { credentialSchema } from '../graphql/credential/schema.js';
import { CostBudget } from '../graphql/budget.js';
import { GraphQLExecutor } from '../graphql/executor.js';
import { tenantSchema } from '../graphql/tenant/schema.js';
import type { Metrics } from '../observability/metrics.js';
import type { Services } from '../services.js';
import type { VersionInfo } from '../version.js';
import { jsonErrorHandler } from './error-handler.js';
import { graphqlScope, OTHER_METHODS } from './graphql-route.js';
import { type DatabaseHealth, liveness, readiness } from './health.js';
import { countRequests } from './metrics.js';
import { DEVICE_AUTHORIZATION_PATH, deviceAuthorization } from './oauth/device-authorization.js';
import { discovery, JWKS_PATH, METADATA_PATH } from './oauth/metadata.js';
import { INTROSPECTION_PATH, introspectionEndpoint } from './oauth/introspection-endpoint.js';
import { REVOCATION_PATH, revocationEndpoint } from './oauth/revocation-endpoint.js';
import { oauthScope } from './oauth/scope.js';
import { TOKEN_PATH, tokenEndpoint, tokenEndpointPostOnly } from './oauth/token-endpoint.js';
import { copyScript, passkeyScript, stylesheet } from './pages/assets.js';
import { credentialPages } from './pages/console/credentials.js';
import { userPages } from './pages/console/users.js';
import { accountPages } from './pages/console/account.js';
import { homePages } from './pages/console/home.js';
import { consoleKit } from './pages/console/kit.js';
import { auditPages } from './pages/console/audit.js';
import {
  ACCOUNT_AUTHENTICATOR_CONFIRM_PATH,
  ACCOUNT_AUTHENTICATOR_PATH,
  ACCOUNT_PASSWORD_PATH,
  ACCOUNT_PATH,
  ACCOUNT_RECOVERY_CODES_PATH,
  ACCOUNT_PASSKEYS_PATH,
  ACCOUNT_PASSKEY_REMOVE_PATH,
  ACCOUNT_EMAIL_PATH,
  ACCOUNT_EMAIL_CONFIRM_PATH,
  ACCOUNT_SESSIONS_PATH,
  AUDIT_PATH,
  CONSOLE_PATH,
  CREDENTIALS_PATH,
  DELETE_PATH,
  FORCE_ROTATE_PATH,
  NEW_PATH,
  ROTATE_PATH,
  TENANTS_PATH,
  TENANT_EDIT_PATH,
  TENANT_LABELS_PATH,
  TENANT_NEW_PATH,
  TENANT_OFFERINGS_PATH,
  TENANT_PATH,
  TENANT_SUBSCRIPTIONS_PATH,
  TENANT_SUPPORT_PATH,
  USERS_PATH,
  USER_DELETE_PATH,
  USER_DISABLE_PATH,
  USER_ENABLE_PATH,
  USER_INVITE_PATH,
  USER_PATH,
  USER_RESET_PATH,
  USER_UNLOCK_PATH,
  USER_ROLE_ASSIGN_PATH,
  USER_ROLE_REMOVE_PATH,
  SSO_CHECK_PATH,
  SSO_CONNECTION_PATH,
  SSO_DELETE_PATH,
  SSO_EDIT_PATH,
  SSO_NEW_PATH,
  SSO_PATH,
  SSO_REFRESH_PATH,
  SSO_TEST_PATH,
} from './pages/console/paths.js';
import { ssoPages as ssoConsolePages } from './pages/console/sso.js';
import { tenantForms } from './pages/console/tenant-forms.js';
import { tenantPages } from './pages/console/tenants.js';
import { COPY_SCRIPT_PATH } from './pages/copy-script.js';
import { PASSKEY_SCRIPT_PATH } from './pages/passkey-script.js';
import { devicePages } from './pages/device-pages.js';
import { STYLESHEET_PATH } from './pages/html.js';
import { pageScope } from './pages/page-scope.js';
import { signInPages } from './pages/sign-in-pages.js';
import { ACS_BODY_LIMIT, ssoPages } from './pages/sso-pages.js';
import { bearerAuth } from './plugins/bearer-auth.js';
import { VERSION_PATHS, version as versionRoute } from './version.js';

export interface RouteDeps {
  config: Config;
  database: DatabaseHealth;
  clock: Clock;
  services: Services;
  metrics: Metrics;
  version: VersionInfo;
}

export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { config, services, metrics } = deps;

  // Health: GET /healthz, GET /readyz (plain JSON, no authentication, not counted)
  app.get('/healthz', liveness);
  app.get('/readyz', readiness(deps.database));
  countRequests(app, metrics);

  // GET / (the service's address opened in a browser) goes to sign-in, which sends a signed-in
  // person on to /console; GET /favicon.ico, which browsers ask for by themselves: no icon, no
  // content (204, cached for a day), so neither the browser nor the log reports a failure
  app.get('/', async (_req, reply) => reply.redirect('/login', 302));
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());

  // Version: GET /assets/version, /auth/version, /public/version (Bearer), JSON errors
  await app.register(async (scope) => {
    scope.setErrorHandler(jsonErrorHandler);
    for (const path of VERSION_PATHS) scope.get(path, { preHandler: bearerAuth(services) }, versionRoute(deps.version));
  });

  // OAuth discovery (RFC 8414): GET /.well-known/oauth-authorization-server, GET /.well-known/jwks.json
  const found = discovery({ issuer: config.baseUrl, keys: services.keys });
  app.get(METADATA_PATH, found.metadata);
  app.get(JWKS_PATH, found.jwks);

  // OAuth endpoints (http/oauth/scope.ts: form or JSON bodies of at most 16 KiB, no-store,
  // errors as RFC 6749 section 5.2)
  await app.register(async (oauth) => {
    oauthScope(oauth, metrics);
    // POST /auth/api/v2/auth/token (GET: 405)
    oauth.post(
      TOKEN_PATH,
      { config: { oauthEndpoint: 'token endpoint' } },
      tokenEndpoint({
        credentials: services.credentials,
        tokens: services.tokens,
        throttle: services.tokenThrottle,
        device: services.device,
        metrics,
        audience: config.baseUrl,
        region: config.region,
      }),
    );
    oauth.get(TOKEN_PATH, { config: { oauthEndpoint: 'token endpoint' } }, tokenEndpointPostOnly);
    // POST /auth/api/v2/auth/device/code (RFC 8628)
    oauth.post(
      DEVICE_AUTHORIZATION_PATH,
      { config: { oauthEndpoint: 'device authorization' } },
      deviceAuthorization({ device: services.device, baseUrl: config.baseUrl }),
    );
    // POST /auth/api/v2/auth/introspect (RFC 7662): API clients whose roles allow it
    oauth.post(
      INTROSPECTION_PATH,
      { config: { oauthEndpoint: 'introspection endpoint' } },
      introspectionEndpoint({
        credentials: services.credentials,
        throttle: services.tokenThrottle,
        region: config.region,
        ...services.introspection,
      }),
    );
    // POST /auth/api/v2/auth/revoke (RFC 7009): a client's own tokens
    oauth.post(
      REVOCATION_PATH,
      { config: { oauthEndpoint: 'revocation endpoint' } },
      revocationEndpoint({
        credentials: services.credentials,
        throttle: services.tokenThrottle,
        region: config.region,
        ...services.revocation,
      }),
    );
  });

  // GraphQL over HTTP (graphql-route.ts: Bearer, GraphQL-shaped errors): POST, GET for queries,
  // 405 for HEAD, PUT, PATCH, DELETE and OPTIONS.
  // one cost budget for both interfaces: a caller flooding one is held back on the other too
  const budget = new CostBudget({ callerPerMinute: config.graphqlCostPerMinute, tenantPerMinute: config.graphqlTenantCostPerMinute }, () =>
    services.clock.now().getTime(),
  );
  // /graphql: the credential interface (X-Tenant-Context)
  await app.register(async (scope) => {
    const graphql = graphqlScope(scope, {
      executor: new GraphQLExecutor(credentialSchema(), { introspection: config.graphqlIntrospection }),
      services,
      budget,
      name: 'credential-graphql',
    });
    scope.post('/graphql', graphql.post);
    scope.get('/graphql', graphql.get);
    scope.route({ method: OTHER_METHODS, url: '/graphql', handler: graphql.methodNotAllowed });
  });
  // /public/query (also /query, /public-test/query): the tenant interface
  await app.register(async (scope) => {
    const graphql = graphqlScope(scope, {
      executor: new GraphQLExecutor(tenantSchema(), { introspection: config.graphqlIntrospection }),
      services,
      budget,
      name: 'tenant-graphql',
    });
    for (const path of ['/public/query', '/query', '/public-test/query']) {
      scope.post(path, graphql.post);
      scope.get(path, graphql.get);
      scope.route({ method: OTHER_METHODS, url: path, handler: graphql.methodNotAllowed });
    }
  });

  // Browser pages (pages/page-scope.ts: session cookie, forms with CSRF tokens, CSP, no-store,
  // failures as pages)
  await app.register(async (pages) => {
    const kit = pageScope(pages, { services, baseUrl: config.baseUrl, vendor: config.vendorName, region: config.region });

    // their files: GET /ui/gatehouse.css, GET /ui/copy.js, GET /ui/passkey.js
    pages.get(STYLESHEET_PATH, stylesheet);
    pages.get(COPY_SCRIPT_PATH, copyScript);
    pages.get(PASSKEY_SCRIPT_PATH, passkeyScript);

    // sign-in (pages/sign-in-pages.ts)
    const signIn = signInPages(kit);
    pages.get('/login', signIn.form);
    pages.post('/login', signIn.submit);
    pages.post('/login/restart', signIn.restart);
    pages.post('/login/passkey', signIn.passkey);
    pages.get('/login/setup', signIn.openSetup);
    pages.post('/login/setup', signIn.confirmSetup);
    pages.post('/login/setup/cancel', signIn.cancelSetup);
    pages.get('/login/forgot', signIn.forgotForm);
    pages.post('/login/forgot', signIn.requestReset);
    pages.get('/login/reset', signIn.openReset);
    pages.post('/logout', signIn.logout);

    // device login, the browser's side (pages/device-pages.ts)
    const device = devicePages(kit);
    pages.get('/device', device.entry);
    pages.post('/device', device.enter);
    pages.get('/device/approve', device.approval);
    pages.post('/device/approve', device.decide);

    // SAML single sign-on (pages/sso-pages.ts)
    const sso = ssoPages(kit);
    pages.get('/sso/saml/:id/metadata', sso.metadata);
    pages.get('/sso/saml/:id/login', sso.begin);
    pages.post('/sso/saml/:id/login', sso.choose);
    pages.post('/sso/saml/:id/acs', { bodyLimit: ACS_BODY_LIMIT, errorHandler: sso.acsBodyTooLarge }, sso.acs);
    pages.get('/sso/saml/finish', sso.finish);

    // the console (pages/console/): its failures are pages of its own (pages/console/kit.ts, failed)
    await pages.register(async (scope) => {
      const c = consoleKit(kit);
      scope.setErrorHandler(c.failed);
      const home = homePages(c);
      scope.get(CONSOLE_PATH, home.tenants); // /console
      // a tenant's API credentials (pages/console/credentials.ts)
      const credentials = credentialPages(c);
      scope.get(CREDENTIALS_PATH, credentials.credentials); // /console/credentials
      scope.get(NEW_PATH, credentials.newForm); // /console/credentials/new
      scope.post(NEW_PATH, credentials.create);
      scope.get(ROTATE_PATH, credentials.rotateForm); // /console/credentials/rotate
      scope.post(ROTATE_PATH, credentials.rotate);
      scope.get(FORCE_ROTATE_PATH, credentials.forceRotateForm); // /console/credentials/force-rotate
      scope.post(FORCE_ROTATE_PATH, credentials.forceRotate);
      scope.get(DELETE_PATH, credentials.deleteForm); // /console/credentials/delete
      scope.post(DELETE_PATH, credentials.delete);
      // tenants: the overview, the search, and the forms that change them (pages/console/tenants.ts, tenant-forms.ts)
      const tenants = tenantPages(c);
      const tenantForm = tenantForms(c);
      scope.get(TENANT_PATH, tenants.overview); // /console/tenant
      scope.get(TENANTS_PATH, tenants.search); // /console/tenants
      scope.get(TENANT_NEW_PATH, tenantForm.newForm); // /console/tenant/new
      scope.post(TENANT_NEW_PATH, tenantForm.create);
      scope.get(TENANT_EDIT_PATH, tenantForm.editForm); // /console/tenant/edit
      scope.post(TENANT_EDIT_PATH, tenantForm.update);
      scope.get(TENANT_SUPPORT_PATH, tenantForm.supportForm); // /console/tenant/support
      scope.post(TENANT_SUPPORT_PATH, tenantForm.support);
      scope.get(TENANT_LABELS_PATH, tenantForm.labels); // /console/tenant/labels
      scope.post(TENANT_LABELS_PATH, tenantForm.label);
      scope.get(TENANT_SUBSCRIPTIONS_PATH, tenantForm.subscriptions); // /console/tenant/subscriptions
      scope.post(TENANT_SUBSCRIPTIONS_PATH, tenantForm.assign);
      scope.get(TENANT_OFFERINGS_PATH, tenantForm.offerings); // /console/tenant/offerings
      scope.post(TENANT_OFFERINGS_PATH, tenantForm.offer);
      // a tenant's audit trail (pages/console/audit.ts)
      scope.get(AUDIT_PATH, auditPages(c).trail); // /console/audit
      // a tenant's users (pages/console/users.ts) and the person's own account (pages/console/account.ts)
      const users = userPages(c);
      scope.get(USERS_PATH, users.users); // /console/users
      scope.get(USER_INVITE_PATH, users.inviteForm); // /console/users/invite
      scope.post(USER_INVITE_PATH, users.invite);
      scope.get(USER_PATH, users.user); // /console/users/user
      scope.post(USER_ROLE_ASSIGN_PATH, users.assignRole); // /console/users/roles
      scope.post(USER_ROLE_REMOVE_PATH, users.removeRole); // /console/users/roles/remove
      scope.post(USER_DISABLE_PATH, users.disable); // /console/users/disable
      scope.post(USER_ENABLE_PATH, users.enable); // /console/users/enable
      scope.post(USER_RESET_PATH, users.reset); // /console/users/reset
      scope.post(USER_UNLOCK_PATH, users.unlock); // /console/users/unlock
      scope.get(USER_DELETE_PATH, users.deleteForm); // /console/users/delete
      scope.post(USER_DELETE_PATH, users.delete);
      const account = accountPages(c);
      scope.get(ACCOUNT_PATH, account.account); // /console/account
      scope.post(ACCOUNT_PASSWORD_PATH, account.changePassword); // /console/account/password
      scope.post(ACCOUNT_SESSIONS_PATH, account.signOutEverywhere); // /console/account/sessions
      scope.get(ACCOUNT_AUTHENTICATOR_PATH, account.pendingReenrolment); // /console/account/authenticator
      scope.post(ACCOUNT_AUTHENTICATOR_PATH, account.beginReenrolment);
      scope.post(ACCOUNT_AUTHENTICATOR_CONFIRM_PATH, account.confirmReenrolment); // /console/account/authenticator/confirm
      scope.post(ACCOUNT_RECOVERY_CODES_PATH, account.renewRecoveryCodes); // /console/account/recovery-codes
      scope.post(ACCOUNT_PASSKEYS_PATH, account.addPasskey); // /console/account/passkeys
      scope.get(ACCOUNT_PASSKEY_REMOVE_PATH, account.confirmPasskeyRemoval); // /console/account/passkeys/remove
      scope.post(ACCOUNT_PASSKEY_REMOVE_PATH, account.removePasskey);
      scope.post(ACCOUNT_EMAIL_PATH, account.requestEmailChange); // /console/account/email
      scope.get(ACCOUNT_EMAIL_CONFIRM_PATH, account.showEmailChange); // /console/account/email/confirm
      scope.post(ACCOUNT_EMAIL_CONFIRM_PATH, account.confirmEmailChange);
      // a tenant's single sign-on: the connections and the set-up wizard (pages/console/sso.ts)
      const ssoConsole = ssoConsolePages(c);
      scope.get(SSO_PATH, ssoConsole.list); // /console/sso
      scope.get(SSO_NEW_PATH, ssoConsole.newForm); // /console/sso/new
      scope.post(SSO_NEW_PATH, ssoConsole.create);
      scope.get(SSO_CONNECTION_PATH, ssoConsole.connection); // /console/sso/connection
      scope.post(SSO_CHECK_PATH, ssoConsole.check); // /console/sso/check
      scope.post(SSO_EDIT_PATH, ssoConsole.edit); // /console/sso/edit
      scope.post(SSO_REFRESH_PATH, ssoConsole.refresh); // /console/sso/refresh
      scope.get(SSO_TEST_PATH, ssoConsole.testByLink); // /console/sso/test: to the connection's page
      scope.post(SSO_TEST_PATH, ssoConsole.test);
      scope.get(SSO_DELETE_PATH, ssoConsole.deleteForm); // /console/sso/delete
      scope.post(SSO_DELETE_PATH, ssoConsole.delete);
      scope.all(`${CONSOLE_PATH}/*`, home.unknownPage);
    });
  });
}
