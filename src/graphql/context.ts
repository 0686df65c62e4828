// Per-request context handed to every resolver.
import type { FastifyBaseLogger } from 'fastify';
import type { Caller } from '../access/principal.js';
import type { Services } from '../services.js';

export interface GraphQLContext {
  caller: Caller;
  services: Services;
  log: FastifyBaseLogger;
}
