// Liveness (the process answers) and readiness (the database answers).
import type { FastifyInstance } from 'fastify';
import type { Db } from '../store/db.js';

export function registerHealthRoutes(app: FastifyInstance, db: Db): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    try {
      await db.ping();
      return { status: 'ready', database: db.engine };
    } catch (err) {
      request.log.warn({ err }, 'database not reachable');
      return reply.code(503).header('retry-after', '5').send({ status: 'unavailable', database: db.engine });
    }
  });
}
