// The layer rules of ARCHITECTURE.md, checked by `npm run layers` (and so by CI). Imports point
// down only:
//
//   cli → compose → app/http → graphql → services.ts → capabilities → bottom
//                                                      ↑ store interfaces (each capability's store.ts)
//   persister (src/store/**) implements the store interfaces; only compose and cli open it.
//
// Capabilities: access, attempts, audit, bootstrap, credentials, device, keys, labels, maintenance, oauth,
// sessions, signin, sso, subscriptions, tenants, users, observability. Bottom: config (config.ts and the table of settings in
// config/), errors, clock, ids, text, time, logger, version, transaction, crypto. Type-only
// imports count: a type that points up is a dependency that points up.
const CAPABILITIES = '(access|attempts|audit|bootstrap|credentials|device|keys|labels|maintenance|oauth|sessions|signin|sso|subscriptions|tenants|users|observability)';
// (used as `^src/(${BOTTOM})`: alternatives relative to src/)
const BOTTOM = '(config|errors|clock|ids|text|time|logger|version|transaction)\\.ts$|config/|crypto/';

module.exports = {
  forbidden: [
    {
      name: 'bottom-imports-only-bottom',
      comment: 'config, errors, clock, ids, text, time, logger, version, transaction and crypto depend on nothing of the application above them',
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
