// Liveness (the process answers) and readiness (the database answers).
import type { FastifyInstance } from 'fastify';

/** What readiness asks of the database (compose.ts hands it the open database). */
export interface DatabaseHealth {
  engine: string;
  /** resolves when the database answers a trivial query */
  ping(): Promise<void>;
}

export function registerHealthRoutes(app: FastifyInstance, db: DatabaseHealth): void {
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
