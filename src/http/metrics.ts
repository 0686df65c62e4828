// Prometheus over HTTP: the public listener counts its requests into the service's metrics
// (observability/metrics.ts); /metrics itself is served only by a listener of its own
// (GATEHOUSE_METRICS_PORT), so that it is never open to whoever reaches the public port.
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';

/** Counts every request the app answers. */
export function countRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.requests.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });
}

/** The metrics listener's app: GET /metrics and nothing else. Scrapes are neither counted nor logged. */
export async function buildMetricsApp(metrics: Metrics, logger: Logger): Promise<FastifyInstance> {
  // scrapes every few seconds would drown the request log: warnings and errors at most
  const level = (logger.levels.values[logger.level] ?? 0) >= logger.levels.values.warn! ? logger.level : 'warn';
  const app = Fastify({ loggerInstance: logger.child({ listener: 'metrics' }, { level }) }) as unknown as FastifyInstance;
  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
  await app.ready();
  return app;
}
