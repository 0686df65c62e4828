// POST /auth/api/v2/auth/token. Steps, in order: no-store headers; parameters from a form or JSON
// body (no repeats); grant_type present and supported; one client-authentication method; the
// guessing throttle; client authentication (its failures counted); the grant. Errors follow RFC
// 6749 section 5.2.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CredentialService } from '../credentials/service.js';
import type { AccessTokens } from './access-token.js';
import type { Metrics } from '../observability/metrics.js';
import { authenticateClient, presentedCredentials, type AuthenticatedClient } from './client-auth.js';
import { bodyRefusal, OAuthError, invalidRequest } from './errors.js';
import type { FailureThrottle } from './failure-throttle.js';
import { clientCredentialsGrant } from './grants/client-credentials.js';
import { DEVICE_CODE_GRANT, deviceCodeGrant } from './grants/device-code.js';
import type { DeviceService } from '../device/service.js';
import { addOAuthBodyParsers, OAUTH_BODY_LIMIT_TEXT, tokenParams } from './params.js';

export const TOKEN_PATH = '/auth/api/v2/auth/token';
export const GRANT_TYPES = ['client_credentials', DEVICE_CODE_GRANT] as const;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

interface Options {
  credentials: Pick<CredentialService, 'authenticate' | 'recordSecretUse'>;
  tokens: AccessTokens;
  /** counts failed client authentications across processes (failure-throttle.ts) */
  throttle: FailureThrottle;
  metrics: Metrics;
  audience: string;
  /** the device grant's polls */
  device: DeviceService;
}

export async function registerTokenEndpoint(app: FastifyInstance, opts: Options): Promise<void> {
  const { throttle } = opts;
  await app.register(async (scope) => {
    // both body formats keep enough of the raw text to refuse repeated parameters
    addOAuthBodyParsers(scope);
    scope.setErrorHandler((err, request, reply) => sendOAuthError(err, request, reply, opts.metrics));
    scope.post(TOKEN_PATH, async (request, reply) => {
      reply.headers(NO_STORE);
      const params = tokenParams(request.body);
      const grantType = params.grant_type;
      if (grantType === undefined || grantType === '') throw invalidRequest('grant_type is required');
      if (!(GRANT_TYPES as readonly string[]).includes(grantType)) {
        throw new OAuthError('unsupported_grant_type', `grant_type ${JSON.stringify(grantType.slice(0, 64))} is not supported`);
      }
      if (grantType === DEVICE_CODE_GRANT) {
        // a public client: no secret to check, the device code is the proof (section 3.4)
        const response = await deviceCodeGrant({ device: opts.device, tokens: opts.tokens }, params);
        opts.metrics.tokensIssued.inc({ grant_type: grantType });
        return response;
      }
      const presented = presentedCredentials(request.headers.authorization, params);
      // only failures count (failure-throttle.ts): a guesser's attempt is counted before its
      // secret is checked, and given back if it authenticates
      const attempt = await throttle.begin(presented?.clientId ?? '', request.ip);
      if (typeof attempt === 'number') throw throttled(attempt);
      let client: AuthenticatedClient;
      try {
        client = await authenticateClient(opts.credentials, presented);
      } catch (err) {
        if (err instanceof OAuthError && err.error === 'invalid_client') refuseWhileThrottled(await throttle.fail(attempt));
        else await throttle.abandon(attempt);
        throw err;
      }
      await throttle.succeed(attempt);
      const response = await clientCredentialsGrant(opts.tokens, client, params, opts.audience);
      // only a request that obtained a token counts as a use of the secret
      opts.credentials.recordSecretUse(client.secretId);
      opts.metrics.tokensIssued.inc({ grant_type: grantType });
      return response;
    });
    scope.get(TOKEN_PATH, async (_request, reply) => {
      reply.header('allow', 'POST');
      throw new OAuthError('invalid_request', 'the token endpoint accepts POST only', 405);
    });
  });
}

/** 429 with Retry-After when the guessing throttle says wait (seconds > 0). */
function refuseWhileThrottled(seconds: number): void {
  if (seconds > 0) throw throttled(seconds);
}

function throttled(seconds: number): OAuthError {
  return new OAuthError('temporarily_unavailable', `too many failed attempts; retry in ${seconds} seconds`, 429, { 'retry-after': String(seconds) });
}

function sendOAuthError(err: unknown, request: FastifyRequest, reply: FastifyReply, metrics: Metrics) {
  reply.headers(NO_STORE);
  const oauth = err instanceof OAuthError ? err : bodyRefusal(err, OAUTH_BODY_LIMIT_TEXT);
  if (!oauth) {
    request.log.error({ err }, 'token endpoint failed');
    metrics.tokenErrors.inc({ error: 'server_error' });
    return reply.code(500).send({ error: 'server_error', error_description: 'internal error' });
  }
  metrics.tokenErrors.inc({ error: oauth.error });
  return reply.code(oauth.status).headers(oauth.headers).send({ error: oauth.error, error_description: oauth.description });
}
