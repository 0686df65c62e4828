// The layer rules of ARCHITECTURE.md, checked by `npm run layers` (and so by CI). Imports point
// down only:
//
//   cli → compose → app/http → graphql → services.ts → capabilities → bottom
//                                                      ↑ store interfaces (each capability's store.ts)
//   persister (src/store/**) implements the store interfaces; only compose and cli open it.
//
// Capabilities: access, attempts, audit, bootstrap, credentials, device, keys, labels, mail, maintenance, oauth,
// sessions, signin, sso, subscriptions, tenants, users, observability. Bottom: config (config.ts and the table of settings in
// config/), errors, clock, ids, paging, text, time, logger, version, transaction, crypto. Type-only
// imports count: a type that points up is a dependency that points up.
//
// HTTP is http/'s (and app.ts's): no capability, nor the bottom, nor services.ts imports Fastify.
// A capability uses another's model and store interface, never its use cases: where it needs
// one (the sign-in flow its sessions, the labels a visible tenant), it declares what it needs as
// an interface (in its own files or the other's model.ts) and services.ts hands it the service.
const CAPABILITIES = '(access|attempts|audit|bootstrap|credentials|device|keys|labels|mail|maintenance|oauth|sessions|signin|sso|subscriptions|tenants|users|observability)';
// (used as `^src/(${BOTTOM})`: alternatives relative to src/)
const BOTTOM = '(config|errors|clock|ids|paging|text|time|logger|version|transaction)\\.ts$|config/|crypto/';

module.exports = {
  forbidden: [
    {
      name: 'bottom-imports-only-bottom',
      comment: 'config, errors, clock, ids, paging, text, time, logger, version, transaction and crypto depend on nothing of the application above them',
      severity: 'error',
      from: { path: `^src/(${BOTTOM})` },
      to: { path: '^src/', pathNot: `^src/(${BOTTOM})` },
    },
    {
      name: 'capabilities-below-transport',
      comment: 'a capability (model, service, store interface) knows nothing of HTTP, GraphQL, the CLI, the composition or the aggregate services',
      severity: 'error',
      from: { path: `^src/${CAPABILITIES}/` },
      to: { path: '^src/(http|graphql|cli)/|^src/(compose|app|services)\\.ts$' },
    },
    {
      name: 'no-http-below-transport',
      comment: 'Fastify (and its plugins, and light-my-request) is the HTTP transport: only http/, app.ts and what composes them use it',
      severity: 'error',
      from: { path: `^src/(${CAPABILITIES}/|services\\.ts$|${BOTTOM})` },
      to: { path: '(^|/)node_modules/(fastify|@fastify/[^/]+|light-my-request)/' },
    },
    {
      name: 'capability-uses-no-other-service',
      comment:
        "a capability does not call another capability's use cases (its service.ts; sso/sign-in.ts is sso's second): it declares the interface it needs, and services.ts wires the service in",
      severity: 'error',
      from: { path: `^src/${CAPABILITIES}/` },
      to: { path: '^src/[^/]+/service\\.ts$|^src/sso/sign-in\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'persister-only-from-composition',
      comment: 'only compose.ts and the CLI open the database and the persister; everything else sees the store interfaces of its capability',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(store/|compose\\.ts$|cli/)' },
      to: { path: '^src/store/' },
    },
    {
      name: 'persister-implements-only',
      comment: 'the persister imports the capabilities it implements (their models and store interfaces) and the bottom, never a service or a transport',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(http|graphql|cli)/|^src/(compose|app|services)\\.ts$|^src/[^/]+/service\\.ts$' },
    },
    {
      name: 'graphql-below-http',
      comment: 'the GraphQL schemas and resolvers know nothing of the HTTP transport, the CLI or the composition',
      severity: 'error',
      from: { path: '^src/graphql/' },
      to: { path: '^src/(http|cli)/|^src/(compose|app)\\.ts$' },
    },
    {
      name: 'services-below-transport',
      comment: 'the aggregate of use cases knows nothing of transports',
      severity: 'error',
      from: { path: '^src/services\\.ts$' },
      to: { path: '^src/(http|graphql|cli)/|^src/(compose|app)\\.ts$' },
    },
    {
      name: 'http-below-composition',
      comment: 'the HTTP transport is composed; it does not compose',
      severity: 'error',
      from: { path: '^src/(http/|app\\.ts$)' },
      to: { path: '^src/cli/|^src/compose\\.ts$' },
    },
    {
      name: 'no-slow-hash-on-token-path',
      comment:
        'the token endpoint and the client credentials check secrets by SHA-256 (they are 256-bit random): argon2, which costs tens of milliseconds of a core, stays off that path (docs/benchmarks.md; item 124 of docs/security.md)',
      severity: 'error',
      from: { path: '^src/(oauth|credentials|http/oauth)/' },
      to: { path: '(^|/)node_modules/@node-rs/argon2/|^src/users/password\\.ts$' },
    },
    {
      name: 'no-cycles',
      comment: 'modules that import each other cannot be understood, or changed, one at a time',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
