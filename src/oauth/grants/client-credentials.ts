// grant_type=client_credentials (RFC 6749 section 4.4): a token for the authenticated client,
// in its own tenant and region, narrowed to the roles named in `scope` when there is one
// (scope.ts). The response's scope names what was granted: the requested roles, or without a
// request every role the client holds (left out when it holds none: RFC 6749 section 3.3 has no
// empty scope). No refresh token (section 4.4.3).
import type { AccessTokens } from '../access-token.js';
import type { AuthenticatedClient } from '../client-auth.js';
import { scopeText } from '../../access/scope.js';
import { OAuthError } from '../errors.js';
import type { TokenParams } from '../params.js';
import { grantScope, requestedScope } from '../scope.js';

export interface TokenResponse {
  access_token: string;
  expires_in: number;
  expiry: string;
  token_type: 'Bearer';
  /** the granted role names, space-separated (absent when the client holds no role) */
  scope?: string;
}

export async function clientCredentialsGrant(
  tokens: AccessTokens,
  client: AuthenticatedClient,
  params: TokenParams,
  audience: string,
): Promise<TokenResponse> {
  const requested = requestedScope(params.scope);
  const granted = requested === undefined ? undefined : grantScope(requested, client.roles);
  for (const key of ['resource', 'audience'] as const) {
    const value = params[key];
    if (value !== undefined && value.replace(/\/+$/, '') !== audience) {
      throw new OAuthError('invalid_target', `${key} must be ${audience} or omitted`);
    }
  }
  const issued = await tokens.issue({
    kind: 'client',
    id: client.clientUuid,
    tenantId: client.tenantId,
    clientId: client.clientId,
    secretId: client.secretId,
    ...(granted ? { scope: granted } : {}),
  });
  const scope = scopeText(granted ?? client.roles);
  return {
    access_token: issued.token,
    expires_in: issued.expiresIn,
    expiry: issued.expiresAt.toISOString(),
    token_type: 'Bearer',
    ...(scope ? { scope } : {}),
  };
}
