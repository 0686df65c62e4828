// POST /auth/api/v2/auth/revoke (RFC 7009). Steps: parameters without repeats (the scope); the
// revoker: a confidential client authenticated through the guessing throttle
// (client-authentication.ts), or, with no secret at all, the device flow's public client naming
// itself; then the revocation (oauth/revocation.ts). 200 with an empty object whether or not a
// token was revoked (section 2.2).
import type { FastifyRequest } from 'fastify';
import { publicClient } from '../../oauth/client-auth.js';
import { type RevocationDeps, type Revoker, revoke } from '../../oauth/revocation.js';
import { type ClientAuthDeps, throttledClientAuth } from './client-authentication.js';
import { oauthParams } from './scope.js';

export const REVOCATION_PATH = '/auth/api/v2/auth/revoke';

/** The handler of POST REVOCATION_PATH. */
export function revocationEndpoint(deps: ClientAuthDeps & RevocationDeps) {
  return async function revocation(request: FastifyRequest) {
    const params = oauthParams(request.body);
    let revoker: Revoker;
    if (request.headers.authorization === undefined && params.client_secret === undefined && params.client_id !== undefined) {
      revoker = { kind: 'public', clientId: publicClient(params) };
    } else {
      const client = await throttledClientAuth(deps, request, params);
      revoker = { kind: 'client', clientUuid: client.clientUuid };
    }
    await revoke(deps, revoker, params);
    return {};
  };
}
