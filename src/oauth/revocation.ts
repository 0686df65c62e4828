// Token revocation (RFC 7009): a client ends a token of its own before it expires. A confidential
// client authenticates (as at the token endpoint) and revokes the tokens it obtained; the
// device flow's public client (gatehouse-cli) names itself and revokes a user token, which is
// the only kind it obtains (`gatehouse logout`). As section 2.2 asks, the answer is the same
// (200) for a token that is invalid, expired, unknown or another client's, and such a token is
// left as it was. A revoked token's id is kept until its expiry (revocation-store.ts) and refused
// by bearer authentication in every process from then on (access/authenticate.ts).
import { type AccessTokens, InvalidToken } from './access-token.js';
import { invalidRequest } from './errors.js';
import type { TokenParams } from './params.js';
import type { RevokedTokenStore } from './revocation-store.js';

/** Who asks: an authenticated API client, or the public client of the device flow. */
export type Revoker = { kind: 'client'; clientUuid: string } | { kind: 'public'; clientId: string };

export interface RevocationDeps {
  tokens: Pick<AccessTokens, 'verify'>;
  revoked: Pick<RevokedTokenStore, 'revokeToken' | 'findRevocation'>;
}

/** Whether a token was revoked by this request (the endpoint answers 200 either way). */
export async function revoke(deps: RevocationDeps, revoker: Revoker, params: TokenParams): Promise<boolean> {
  const token = params.token;
  if (token === undefined || token === '') throw invalidRequest('token is required: send the access token to revoke as the token parameter');
  // token_type_hint is only a hint (section 2.1): this server issues access tokens only
  let claims: Awaited<ReturnType<AccessTokens['verify']>>;
  try {
    claims = await deps.tokens.verify(token);
  } catch (err) {
    if (err instanceof InvalidToken) return false;
    throw err;
  }
  const own = revoker.kind === 'client' ? claims.pty === 'client' && claims.sub === revoker.clientUuid : claims.pty === 'user';
  if (!own) return false;
  // revoked already: nothing to write. Each write tells every process to drop its authentication
  // caches, so one token revoked in a loop must not do it again and again.
  if ((await deps.revoked.findRevocation(claims.jti)).revoked) return false;
  await deps.revoked.revokeToken(claims.jti, claims.tid, new Date(claims.exp * 1000));
  return true;
}
