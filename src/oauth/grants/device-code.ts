// grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 section 3.4): a public client
// polls with its device code; each outcome of the poll is one answer of section 3.5. An approved
// code yields the person's token once; it is a user token like any other (same checks, same
// revocation).
import type { PollResult } from '../../device/model.js';
import type { AccessTokens } from '../access-token.js';
import { publicClient } from '../client-auth.js';
import { OAuthError, invalidRequest } from '../errors.js';
import type { TokenParams } from '../params.js';
import type { TokenResponse } from './client-credentials.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** What the grant asks of the device logins (DeviceService): one poll of a code. */
export interface DevicePolls {
  poll(deviceCode: string, clientId: string): Promise<PollResult>;
}

export async function deviceCodeGrant(
  deps: { device: DevicePolls; tokens: AccessTokens; region: string },
  params: TokenParams,
): Promise<TokenResponse> {
  const clientId = publicClient(params);
  if (!params.device_code) throw invalidRequest('device_code is required');
  const result = await deps.device.poll(params.device_code, clientId);
  switch (result.kind) {
    case 'pending':
      throw new OAuthError('authorization_pending', 'the person has not approved this device yet; poll again after the interval');
    case 'slow_down':
      throw new OAuthError('slow_down', `polling too fast; poll at most every ${result.interval} seconds`);
    case 'expired':
      throw new OAuthError('expired_token', 'the device code expired; start a new device login');
    case 'denied':
      throw new OAuthError('access_denied', 'the person denied this device');
    case 'invalid':
      throw new OAuthError(
        'invalid_grant',
        `the device code is not valid in this deployment (region ${deps.region}): unknown, of another client, or already used; a device code works only with the server of the region that issued it`,
      );
  }
  const issued = await deps.tokens.issue({ kind: 'user', id: result.userId, tenantId: result.tenantId });
  return { access_token: issued.token, expires_in: issued.expiresIn, expiry: issued.expiresAt.toISOString(), token_type: 'Bearer' };
}
