// POST /auth/api/v2/auth/introspect (RFC 7662). Steps: parameters without repeats (the scope);
// client authentication through the guessing throttle (client-authentication.ts); the caller's
// permission and the token's state (oauth/introspection.ts). Errors as RFC 6749 section 5.2.
import type { FastifyRequest } from 'fastify';
import { type IntrospectionDeps, introspect } from '../../oauth/introspection.js';
import { type ClientAuthDeps, throttledClientAuth } from './client-authentication.js';
import { oauthParams } from './scope.js';

export const INTROSPECTION_PATH = '/auth/api/v2/auth/introspect';

/** The handler of POST INTROSPECTION_PATH. */
export function introspectionEndpoint(deps: ClientAuthDeps & IntrospectionDeps) {
  return async function introspection(request: FastifyRequest) {
    const params = oauthParams(request.body);
    const caller = await throttledClientAuth(deps, request, params);
    return introspect(deps, caller, params);
  };
}
