import { buildExecutableSchema, loadSdl } from '../build-schema.js';
import { tenantResolvers } from './resolvers.js';

export const TENANT_SDL_URL = new URL('./schema.graphql', import.meta.url);

export function tenantSchema() {
  return buildExecutableSchema(loadSdl(TENANT_SDL_URL), tenantResolvers);
}
