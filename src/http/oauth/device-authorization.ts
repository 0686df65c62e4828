// POST /auth/api/v2/auth/device/code (RFC 8628 section 3.1-3.2): a public client names the
// account (`login_hint`, the e-mail address the person will sign in with) and receives a device
// code to poll with and a user code for the person to confirm at the verification URI. Errors
// are answered by the OAuth scope (scope.ts).
import type { FastifyRequest } from 'fastify';
import { displayUserCode } from '../../device/model.js';
import type { DeviceService } from '../../device/service.js';
import { publicClient } from '../../oauth/client-auth.js';
import { invalidRequest, OAuthError } from '../../oauth/errors.js';
import { oauthParams } from './scope.js';

export const DEVICE_AUTHORIZATION_PATH = '/auth/api/v2/auth/device/code';
/** where the person confirms the code: the device pages (http/pages/device-pages.ts) */
export const VERIFICATION_PATH = '/device';

/** The handler of POST DEVICE_AUTHORIZATION_PATH. */
export function deviceAuthorization(deps: { device: Pick<DeviceService, 'start'>; baseUrl: string }) {
  const base = deps.baseUrl.replace(/\/+$/, '');
  return async function authorize(request: FastifyRequest) {
    const params = oauthParams(request.body);
    const clientId = publicClient(params);
    const hint = params.login_hint?.trim();
    if (!hint) throw invalidRequest('login_hint is required: the e-mail address of the account to sign in as');
    if (hint.length > 254) throw invalidRequest('login_hint is at most 254 characters');
    const started = await deps.device.start(clientId, hint, request.ip);
    if (started.kind === 'wait') {
      throw new OAuthError('slow_down', `too many device logins from this address; try again in ${started.seconds} seconds`, 429, {
        'retry-after': String(started.seconds),
      });
    }
    const shown = displayUserCode(started.userCode);
    return {
      device_code: started.deviceCode,
      user_code: shown,
      verification_uri: `${base}${VERIFICATION_PATH}`,
      verification_uri_complete: `${base}${VERIFICATION_PATH}?user_code=${shown}`,
      expires_in: started.expiresIn,
      interval: started.interval,
    };
  };
}
