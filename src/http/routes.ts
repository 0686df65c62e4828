// The one route table: every endpoint of the service, in the order a newcomer would look for it.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { credentialSchema } from '../graphql/credential/schema.js';
import { GraphQLExecutor } from '../graphql/executor.js';
import { tenantSchema } from '../graphql/tenant/schema.js';
import { registerMetadataRoutes } from '../oauth/metadata.js';
import { registerDeviceEndpoint } from '../oauth/device-endpoint.js';
import { registerTokenEndpoint } from '../oauth/token-endpoint.js';
import type { Services } from '../services.js';
import type { VersionInfo } from '../version.js';
import { registerGraphQLRoute } from './graphql-route.js';
import { registerHealthRoutes, type DatabaseHealth } from './health.js';
import type { Metrics } from '../observability/metrics.js';
import { countRequests } from './metrics.js';
import { registerSignInPages } from './pages/sign-in-pages.js';
import { registerVersionRoutes } from './version.js';

export interface RouteDeps {
  config: Config;
  database: DatabaseHealth;
  clock: Clock;
  services: Services;
  metrics: Metrics;
  version: VersionInfo;
}

export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const { config, database, services, metrics, version } = deps;

  // GET /healthz, GET /readyz (GET /metrics is on a listener of its own: http/metrics.ts)
  registerHealthRoutes(app, database);
  countRequests(app, metrics);

  // GET /assets/version, /auth/version, /public/version (Bearer)
  await registerVersionRoutes(app, services, version);

  // GET /.well-known/oauth-authorization-server, GET /.well-known/jwks.json
  await registerMetadataRoutes(app, { issuer: config.baseUrl, keys: services.keys });

  // POST /auth/api/v2/auth/token
  await registerTokenEndpoint(app, {
    credentials: services.credentials,
    tokens: services.tokens,
    throttle: services.tokenThrottle,
    device: services.device,
    metrics,
    audience: config.baseUrl,
  });

  // POST /auth/api/v2/auth/device/code (RFC 8628)
  await registerDeviceEndpoint(app, { device: services.device, baseUrl: config.baseUrl });

  // POST /graphql: credential interface (Bearer, X-Tenant-Context)
  await registerGraphQLRoute(app, {
    paths: ['/graphql'],
    executor: new GraphQLExecutor(credentialSchema(), { introspection: config.graphqlIntrospection }),
    services,
  });

  // GET/POST /login, GET /login/setup, POST /logout, GET /console: browser pages (session cookie)
  await registerSignInPages(app, { services, baseUrl: config.baseUrl, vendor: config.vendorName });

  // GET /: the service's address opened in a browser goes to sign-in (which sends a signed-in
  // person on to /console); GET /favicon.ico, which browsers ask for by themselves: no icon, no
  // content (204, cached for a day), so neither the browser nor the log reports a failure
  app.get('/', async (_req, reply) => reply.redirect('/login', 302));
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());

  // POST /public/query (also /query, /public-test/query): tenant interface (Bearer)
  await registerGraphQLRoute(app, {
    paths: ['/public/query', '/query', '/public-test/query'],
    executor: new GraphQLExecutor(tenantSchema(), { introspection: config.graphqlIntrospection }),
    services,
  });
}
