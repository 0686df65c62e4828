// Liveness (the process answers) and readiness (the database answers); routes.ts registers them.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** What readiness asks of the database (compose.ts hands it the open database). */
export interface DatabaseHealth {
  engine: string;
  /** resolves when the database answers a trivial query */
  ping(): Promise<void>;
}

/** GET /healthz */
export async function liveness() {
  return { status: 'ok' };
}

/** GET /readyz */
export function readiness(db: DatabaseHealth) {
  return async function ready(request: FastifyRequest, reply: FastifyReply) {
    try {
      await db.ping();
      return { status: 'ready', database: db.engine };
    } catch (err) {
      request.log.warn({ err }, 'database not reachable');
      return reply.code(503).header('retry-after', '5').send({ status: 'unavailable', database: db.engine });
    }
  };
}
