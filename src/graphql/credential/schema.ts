import { buildExecutableSchema, loadSdl } from '../build-schema.js';
import { credentialResolvers } from './resolvers.js';

export const CREDENTIAL_SDL_URL = new URL('./schema.graphql', import.meta.url);

export function credentialSchema() {
  return buildExecutableSchema(loadSdl(CREDENTIAL_SDL_URL), credentialResolvers);
}
