// From a bearer token to the principal behind it: the token must verify (signature, issuer,
// audience, type, region, expiry), and its client (with the secret it was obtained with) or
// user must still be active. Loaded fresh per request, so revocation takes effect at once.
import type { AccessTokens } from '../oauth/access-token.js';
import { InvalidToken } from '../oauth/access-token.js';
import type { Principal } from './principal.js';
import type { PrincipalStore } from './store.js';

export class BearerAuthenticator {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly principals: PrincipalStore,
  ) {}

  async authenticate(token: string): Promise<Principal> {
    const claims = await this.tokens.verify(token);
    const principal =
      claims.pty === 'client'
        ? await this.principals.findClientPrincipal(claims.sub, claims.secret_id!)
        : await this.principals.findUserPrincipal(claims.sub);
    if (!principal || principal.tenantId !== claims.tid) throw new InvalidToken('the token has been revoked');
    return principal;
  }
}
