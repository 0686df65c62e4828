// From a bearer token to the principal behind it: the token must verify (signature, issuer,
// audience, type, region, expiry), and its client (with the secret it was obtained with) or
// user must still be active, and the token itself not revoked (RFC 7009, oauth/revocation-store.ts). Looked up on every request (the persister may answer from a cache
// that every change voids at once: docs/performance.md), so revocation takes effect at once; a
// scoped token's principal is then narrowed to its scope (scope.ts).
import type { AccessTokenClaims, AccessTokens } from '../oauth/access-token.js';
import { InvalidToken } from '../oauth/access-token.js';
import type { RevokedTokenStore } from '../oauth/revocation-store.js';
import type { Principal } from './principal.js';
import type { RoleName } from './roles.js';
import { narrowToScope } from './scope.js';
import type { PrincipalStore } from './store.js';

export class BearerAuthenticator {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly principals: PrincipalStore,
    private readonly revoked: Pick<RevokedTokenStore, 'findRevocation'>,
  ) {}

  async authenticate(token: string): Promise<Principal> {
    return (await this.inspect(token)).principal;
  }

  /** The token's claims and the principal as of now (scope applied), or InvalidToken. */
  async inspect(token: string): Promise<{ claims: AccessTokenClaims; principal: Principal }> {
    const claims = await this.tokens.verify(token);
    if ((await this.revoked.findRevocation(claims.jti)).revoked) {
      throw new InvalidToken('the token has been revoked by its client (RFC 7009)');
    }
    const principal =
      claims.pty === 'client'
        ? await this.principals.findClientPrincipal(claims.sub, claims.secret_id!)
        : await this.principals.findUserPrincipal(claims.sub);
    if (!principal || principal.tenantId !== claims.tid) {
      throw new InvalidToken(
        'the token has been revoked: its client was deleted or its secret replaced, its user disabled or deleted, or its tenant disabled',
      );
    }
    // iat has whole seconds: a token of the second in which access was cut counts as before it
    if (principal.tokensValidAfter && claims.iat < Math.ceil(principal.tokensValidAfter.getTime() / 1000)) {
      throw principal.kind === 'user'
        ? new InvalidToken(
            'the token was issued before access was cut (the user or its tenant was disabled, or its sign-in reset)',
            'Sign in again for a new token.',
          )
        : new InvalidToken('the token was issued before its tenant was disabled');
    }
    // after loading: the roles held now, cut down to those the token was granted
    return { claims, principal: claims.scope === undefined ? principal : narrowToScope(principal, claims.scope.split(' ') as RoleName[]) };
  }
}
