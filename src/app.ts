// buildApp: the Fastify instance with every route; it never listens (server start is in
// compose.ts / cli), so tests drive it with app.inject().
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import { jsonErrorHandler } from './http/error-handler.js';
import type { DatabaseHealth } from './http/health.js';
import type { Metrics } from './observability/metrics.js';
import { registerRoutes } from './http/routes.js';
import './http/types.js';
import type { Services } from './services.js';
import type { VersionInfo } from './version.js';

export interface AppDeps {
  config: Config;
  database: DatabaseHealth;
  clock: Clock;
  services: Services;
  logger: Logger;
  version: VersionInfo;
  metrics: Metrics;
}

export const BODY_LIMIT = 1024 * 1024;

/**
 * One log line per request, when it is answered, with what it asked and how it ended (Fastify
 * writes two). A line of a request that completed holds only what the serializers let through
 * (method, path without its query, address, status, time) and the request id (checked below), so
 * it skips the redaction that every other line goes through: a tenth of a cached request's work.
 */
class OneLinePerRequest extends LogController {
  private readonly fixedShape: Logger;

  constructor(logger: Logger) {
    super();
    this.fixedShape = logger.child({}, { redact: [] });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else this.fixedShape.info({ reqId: request.id, req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: BODY_LIMIT,
    // a caller's X-Request-Id is kept when it is sane, so logs join up across services
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    logController: new OneLinePerRequest(deps.logger),
    // behind an ingress, the client address (token-endpoint throttle, logs) comes from X-Forwarded-For
    trustProxy: deps.config.trustProxy as boolean | string[], // a number is a hop count (Fastify documents it; its types lag)
  }) as unknown as FastifyInstance;

  // callback hooks: an async one costs a promise per request, and these cannot fail
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers({ 'x-request-id': request.id, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
    done();
  });
  app.setErrorHandler(jsonErrorHandler);
  app.setNotFoundHandler(async (request, reply) =>
    reply.code(404).send({ error: 'NOT_FOUND', message: `No route for ${request.method} ${request.url.split('?')[0]}` }),
  );

  await registerRoutes(app, deps);
  return app;
}
