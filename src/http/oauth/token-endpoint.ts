// POST /auth/api/v2/auth/token. Steps, in order (the scope, scope.ts, has already made the answer
// no-store and read the body): parameters without repeats; grant_type present and supported; one
// client-authentication method; the guessing throttle; client authentication (its failures
// counted); the grant. Errors follow RFC 6749 section 5.2 (scope.ts answers them).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokens } from '../../oauth/access-token.js';
import { invalidRequest, OAuthError } from '../../oauth/errors.js';
import type { FailureThrottle } from '../../oauth/failure-throttle.js';
import { clientCredentialsGrant } from '../../oauth/grants/client-credentials.js';
import { DEVICE_CODE_GRANT, type DevicePolls, deviceCodeGrant } from '../../oauth/grants/device-code.js';
import type { Metrics } from '../../observability/metrics.js';
import { type RefusalRecordingAuthenticator, throttledClientAuth } from './client-authentication.js';
import { oauthParams } from './scope.js';

export const TOKEN_PATH = '/auth/api/v2/auth/token';
export const GRANT_TYPES = ['client_credentials', DEVICE_CODE_GRANT] as const;

export interface TokenEndpointDeps {
  credentials: RefusalRecordingAuthenticator & { recordSecretUse(secretId: string): void };
  tokens: AccessTokens;
  /** counts failed client authentications across processes (oauth/failure-throttle.ts) */
  throttle: FailureThrottle;
  metrics: Metrics;
  audience: string;
  /** the device grant's polls */
  device: DevicePolls;
  /** this deployment's region, named when a secret or a device code is not one of its own */
  region: string;
}

/** The handler of POST TOKEN_PATH. */
export function tokenEndpoint(deps: TokenEndpointDeps) {
  return async function token(request: FastifyRequest) {
    const params = oauthParams(request.body);
    const grantType = params.grant_type;
    if (grantType === undefined || grantType === '') throw invalidRequest('grant_type is required');
    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw new OAuthError('unsupported_grant_type', `grant_type ${JSON.stringify(grantType.slice(0, 64))} is not supported`);
    }
    if (grantType === DEVICE_CODE_GRANT) {
      // a public client: no secret to check, the device code is the proof (section 3.4)
      const response = await deviceCodeGrant({ device: deps.device, tokens: deps.tokens, region: deps.region }, params);
      deps.metrics.tokensIssued.inc({ grant_type: grantType });
      return response;
    }
    // only failures count (client-authentication.ts)
    const client = await throttledClientAuth(deps, request, params);
    const response = await clientCredentialsGrant(deps.tokens, client, params, deps.audience);
    // only a request that obtained a token counts as a use of the secret
    deps.credentials.recordSecretUse(client.secretId);
    deps.metrics.tokensIssued.inc({ grant_type: grantType });
    return response;
  };
}

/** GET TOKEN_PATH (and any method but POST): 405. */
export async function tokenEndpointPostOnly(_request: FastifyRequest, reply: FastifyReply): Promise<never> {
  reply.header('allow', 'POST');
  throw new OAuthError('invalid_request', 'the token endpoint accepts POST only', 405);
}
