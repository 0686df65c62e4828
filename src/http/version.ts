// GET /assets/version, /auth/version, /public/version: {tag, revision, timestamp}, Bearer token required.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import type { VersionInfo } from '../version.js';
import { jsonErrorHandler } from './error-handler.js';
import { bearerAuth } from './plugins/bearer-auth.js';

export const VERSION_PATHS = ['/assets/version', '/auth/version', '/public/version'];

export async function registerVersionRoutes(app: FastifyInstance, services: Services, version: VersionInfo): Promise<void> {
  await app.register(async (scope) => {
    scope.setErrorHandler(jsonErrorHandler);
    for (const path of VERSION_PATHS) scope.get(path, { preHandler: bearerAuth(services) }, async () => version);
  });
}
