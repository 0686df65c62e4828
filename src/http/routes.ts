// The one route table: every route of the service (method, path, handler), by family, each in
// the scope that gives the family what it shares (error format, body parsers, headers; set up by
// oauthScope, graphqlScope, pageScope). A handler lives with its family (http/oauth/, http/pages/,
// graphql-route.ts…); no other file registers a route. (GET /metrics is on a listener of its own:
// http/metrics.ts.)
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { credentialSchema } from '../graphql/credential/schema.js';
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
import { copyScript, stylesheet } from './pages/assets.js';
import { credentialPages } from './pages/console/credentials.js';
import { homePages } from './pages/console/home.js';
import { consoleKit } from './pages/console/kit.js';
import { CONSOLE_PATH, CREDENTIALS_PATH, DELETE_PATH, NEW_PATH, ROTATE_PATH } from './pages/console/paths.js';
import {
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
import { COPY_SCRIPT_PATH } from './pages/copy-script.js';
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
  // /graphql: the credential interface (X-Tenant-Context)
  await app.register(async (scope) => {
    const graphql = graphqlScope(scope, {
      executor: new GraphQLExecutor(credentialSchema(), { introspection: config.graphqlIntrospection }),
      services,
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

    // their files: GET /ui/gatehouse.css, GET /ui/copy.js
    pages.get(STYLESHEET_PATH, stylesheet);
    pages.get(COPY_SCRIPT_PATH, copyScript);

    // sign-in (pages/sign-in-pages.ts)
    const signIn = signInPages(kit);
    pages.get('/login', signIn.form);
    pages.post('/login', signIn.submit);
    pages.post('/login/restart', signIn.restart);
    pages.get('/login/setup', signIn.openSetup);
    pages.post('/login/setup', signIn.confirmSetup);
    pages.post('/login/setup/cancel', signIn.cancelSetup);
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
      scope.get(DELETE_PATH, credentials.deleteForm); // /console/credentials/delete
      scope.post(DELETE_PATH, credentials.delete);
      // a tenant's single sign-on: the connections and the set-up wizard (pages/console/sso.ts)
      const ssoConsole = ssoConsolePages(c);
      scope.get(SSO_PATH, ssoConsole.list); // /console/sso
      scope.get(SSO_NEW_PATH, ssoConsole.newForm); // /console/sso/new
      scope.post(SSO_NEW_PATH, ssoConsole.create);
      scope.get(SSO_CONNECTION_PATH, ssoConsole.connection); // /console/sso/connection
      scope.post(SSO_CHECK_PATH, ssoConsole.check); // /console/sso/check
      scope.post(SSO_EDIT_PATH, ssoConsole.edit); // /console/sso/edit
      scope.post(SSO_REFRESH_PATH, ssoConsole.refresh); // /console/sso/refresh
      scope.get(SSO_TEST_PATH, ssoConsole.test); // /console/sso/test
      scope.get(SSO_DELETE_PATH, ssoConsole.deleteForm); // /console/sso/delete
      scope.post(SSO_DELETE_PATH, ssoConsole.delete);
      scope.all(`${CONSOLE_PATH}/*`, home.unknownPage);
    });
  });
}
