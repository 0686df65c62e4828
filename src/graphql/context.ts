// Per-request context handed to every resolver.
import type { FastifyBaseLogger } from 'fastify';
import type { Caller } from '../access/principal.js';
import type { Services } from '../services.js';
import type { TenantLoaders } from '../tenants/loaders.js';

export interface GraphQLContext {
  caller: Caller;
  services: Services;
  log: FastifyBaseLogger;
  /** batch loaders of this request (created on first use) */
  loaders: TenantLoaders;
}
