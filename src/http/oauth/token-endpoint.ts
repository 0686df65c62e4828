// POST /auth/api/v2/auth/token. Steps, in order (the scope, scope.ts, has already made the answer
// no-store and read the body): parameters without repeats; grant_type present and supported; one
// client-authentication method; the guessing throttle; client authentication (its failures
// counted); the grant. Errors follow RFC 6749 section 5.2 (scope.ts answers them).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccessTokens } from '../../oauth/access-token.js';
import { type AuthenticatedClient, authenticateClient, type ClientAuthenticator, presentedCredentials } from '../../oauth/client-auth.js';
import { invalidRequest, OAuthError } from '../../oauth/errors.js';
import type { FailureThrottle } from '../../oauth/failure-throttle.js';
import type { RequestInfo } from '../../audit/model.js';
import { clientCredentialsGrant } from '../../oauth/grants/client-credentials.js';
import { DEVICE_CODE_GRANT, type DevicePolls, deviceCodeGrant } from '../../oauth/grants/device-code.js';
import type { Metrics } from '../../observability/metrics.js';
import { oauthParams } from './scope.js';

export const TOKEN_PATH = '/auth/api/v2/auth/token';
export const GRANT_TYPES = ['client_credentials', DEVICE_CODE_GRANT] as const;

export interface TokenEndpointDeps {
  credentials: ClientAuthenticator & {
    recordSecretUse(secretId: string): void;
    credentialsRefused(clientId: string, request: RequestInfo): Promise<void>;
  };
  tokens: AccessTokens;
  /** counts failed client authentications across processes (oauth/failure-throttle.ts) */
  throttle: FailureThrottle;
  metrics: Metrics;
  audience: string;
  /** the device grant's polls */
  device: DevicePolls;
}

/** The handler of POST TOKEN_PATH. */
export function tokenEndpoint(deps: TokenEndpointDeps) {
  const { throttle } = deps;
  return async function token(request: FastifyRequest) {
    const params = oauthParams(request.body);
    const grantType = params.grant_type;
    if (grantType === undefined || grantType === '') throw invalidRequest('grant_type is required');
    if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
      throw new OAuthError('unsupported_grant_type', `grant_type ${JSON.stringify(grantType.slice(0, 64))} is not supported`);
    }
    if (grantType === DEVICE_CODE_GRANT) {
      // a public client: no secret to check, the device code is the proof (section 3.4)
      const response = await deviceCodeGrant({ device: deps.device, tokens: deps.tokens }, params);
      deps.metrics.tokensIssued.inc({ grant_type: grantType });
      return response;
    }
    const presented = presentedCredentials(request.headers.authorization, params);
    // only failures count (failure-throttle.ts): a guesser's attempt is counted before its
    // secret is checked, and given back if it authenticates
    const attempt = await throttle.begin(presented?.clientId ?? '', request.ip);
    if (typeof attempt === 'number') throw throttled(attempt);
    let client: AuthenticatedClient;
    try {
      client = await authenticateClient(deps.credentials, presented);
    } catch (err) {
      if (err instanceof OAuthError && err.error === 'invalid_client') {
        // the refusal is an audit event of the client named, if it exists (written before the
        // throttle's answer, which may be a 429)
        if (presented) await deps.credentials.credentialsRefused(presented.clientId, { id: request.id, address: request.ip });
        refuseWhileThrottled(await throttle.fail(attempt));
      } else await throttle.abandon(attempt);
      throw err;
    }
    await throttle.succeed(attempt);
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

/** 429 with Retry-After when the guessing throttle says wait (seconds > 0). */
function refuseWhileThrottled(seconds: number): void {
  if (seconds > 0) throw throttled(seconds);
}

function throttled(seconds: number): OAuthError {
  return new OAuthError('temporarily_unavailable', `too many failed attempts; retry in ${seconds} seconds`, 429, { 'retry-after': String(seconds) });
}
