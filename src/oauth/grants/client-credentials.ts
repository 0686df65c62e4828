// grant_type=client_credentials (RFC 6749 section 4.4): a token for the authenticated client,
// in its own tenant and region. No refresh token (section 4.4.3).
import type { AccessTokens } from '../access-token.js';
import type { AuthenticatedClient } from '../client-auth.js';
import { OAuthError } from '../errors.js';
import type { TokenParams } from '../params.js';

export interface TokenResponse {
  access_token: string;
  expires_in: number;
  expiry: string;
  token_type: 'Bearer';
}

export async function clientCredentialsGrant(
  tokens: AccessTokens,
  client: AuthenticatedClient,
  params: TokenParams,
  audience: string,
): Promise<TokenResponse> {
  // Tokens carry the client's roles, not scopes: a requested scope cannot be honoured.
  if (params.scope !== undefined && params.scope.trim() !== '') {
    throw new OAuthError('invalid_scope', "this server issues tokens that carry the client's roles; omit scope");
  }
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
  });
  return {
    access_token: issued.token,
    expires_in: issued.expiresIn,
    expiry: issued.expiresAt.toISOString(),
    token_type: 'Bearer',
  };
}
