// POST /auth/api/v2/auth/device/code (RFC 8628 section 3.1-3.2): a public client names the
// account (`login_hint`, the e-mail address the person will sign in with) and receives a device
// code to poll with and a user code for the person to confirm at the verification URI.
import type { FastifyInstance } from 'fastify';
import { displayUserCode } from '../device/model.js';
import type { DeviceService } from '../device/service.js';
import { bodyRefusal, OAuthError, invalidRequest } from './errors.js';
import { addOAuthBodyParsers, OAUTH_BODY_LIMIT_TEXT, tokenParams } from './params.js';

export const DEVICE_AUTHORIZATION_PATH = '/auth/api/v2/auth/device/code';
export const VERIFICATION_PATH = '/device';

export async function registerDeviceEndpoint(app: FastifyInstance, opts: { device: DeviceService; baseUrl: string }): Promise<void> {
  await app.register(async (scope) => {
    addOAuthBodyParsers(scope);
    scope.setErrorHandler((err, request, reply) => {
      reply.header('cache-control', 'no-store');
      const oauth = err instanceof OAuthError ? err : bodyRefusal(err, OAUTH_BODY_LIMIT_TEXT);
      if (!oauth) {
        request.log.error({ err }, 'device authorization failed');
        return reply.code(500).send({ error: 'server_error', error_description: 'internal error' });
      }
      return reply.code(oauth.status).headers(oauth.headers).send({ error: oauth.error, error_description: oauth.description });
    });
    scope.post(DEVICE_AUTHORIZATION_PATH, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const params = tokenParams(request.body);
      if (!opts.device.isPublicClient(params.client_id)) {
        throw new OAuthError('invalid_client', 'client_id must name a public client of this service (gatehouse-cli)', 401);
      }
      const hint = params.login_hint?.trim();
      if (!hint) throw invalidRequest('login_hint is required: the e-mail address of the account to sign in as');
      if (hint.length > 254) throw invalidRequest('login_hint is at most 254 characters');
      const started = await opts.device.start(params.client_id!, hint, request.ip);
      if (started.kind === 'wait') {
        throw new OAuthError('slow_down', `too many device logins from this address; try again in ${started.seconds} seconds`, 429, {
          'retry-after': String(started.seconds),
        });
      }
      const base = opts.baseUrl.replace(/\/+$/, '');
      const shown = displayUserCode(started.userCode);
      return {
        device_code: started.deviceCode,
        user_code: shown,
        verification_uri: `${base}${VERIFICATION_PATH}`,
        verification_uri_complete: `${base}${VERIFICATION_PATH}?user_code=${shown}`,
        expires_in: started.expiresIn,
        interval: started.interval,
      };
    });
  });
}
