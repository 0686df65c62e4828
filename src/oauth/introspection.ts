// Token introspection (RFC 7662): a resource server, authenticated as an API client whose roles
// allow it (`tokens.introspect`), asks whether an access token is active now. Active means what
// the service's own bearer authentication accepts (access/authenticate.ts): signature by a key
// of the ring, this issuer, audience and region, not expired, not revoked (RFC 7009), its client
// and secret live, its user enabled, its tenant enabled and access not cut since it was issued.
// A token of a tenant the caller may not introspect is answered exactly like an invalid one,
// `active: false`, so that the answer reveals nothing of other tenants (section 2.2).
import type { AccessTokenClaims } from './access-token.js';
import { InvalidToken } from './access-token.js';
import type { AuthenticatedClient } from '../credentials/model.js';
import type { Principal, TenantScope } from '../access/principal.js';
import { can } from '../access/policy.js';
import { PERMISSION_ROLES } from '../access/roles.js';
import type { PrincipalStore } from '../access/store.js';
import type { Clock } from '../clock.js';
import { invalidClient, invalidRequest, OAuthError } from './errors.js';
import type { TokenParams } from './params.js';

/** What introspection asks of bearer authentication (BearerAuthenticator.inspect). */
export interface TokenInspector {
  inspect(token: string): Promise<{ claims: AccessTokenClaims; principal: Principal }>;
}

export interface IntrospectionDeps {
  inspector: TokenInspector;
  principals: Pick<PrincipalStore, 'findClientPrincipal'>;
  tenants: { findScope(id: string): Promise<TenantScope | undefined> };
  clock: Clock;
}

/** RFC 7662 section 2.2; the fields of an inactive token are left out (nothing is said of it). */
export type IntrospectionResponse =
  | { active: false }
  | {
      active: true;
      token_type: 'Bearer';
      client_id?: string;
      sub: string;
      iss: string;
      aud: string;
      exp: number;
      iat: number;
      jti: string;
      /** the roles the token was narrowed to; absent: every role its principal holds */
      scope?: string;
      /** additions: the token's home tenant, its principal's kind and its region */
      tid: string;
      principal_type: 'client' | 'user';
      region: string;
    };

const INACTIVE: IntrospectionResponse = Object.freeze({ active: false });

export async function introspect(deps: IntrospectionDeps, caller: AuthenticatedClient, params: TokenParams): Promise<IntrospectionResponse> {
  const now = deps.clock.now();
  // authorization first: the caller as a principal (its roles per tenant)
  const principal = await deps.principals.findClientPrincipal(caller.clientUuid, caller.secretId);
  if (!principal) throw invalidClient();
  const allowing = PERMISSION_ROLES['tokens.introspect'];
  if (!principal.assignments.some((a) => allowing.includes(a.roleId as never) && (a.expiresAt === null || a.expiresAt > now))) {
    throw new OAuthError(
      'unauthorized_client',
      'this client may not introspect tokens: it needs the Administrator role (in the tenants whose tokens it checks, or a partner above them) or Operations',
      403,
    );
  }
  const token = params.token;
  if (token === undefined || token === '') throw invalidRequest('token is required: send the access token to introspect as the token parameter');
  // token_type_hint is only a hint (section 2.1): this server issues access tokens only
  let found: Awaited<ReturnType<TokenInspector['inspect']>>;
  try {
    found = await deps.inspector.inspect(token);
  } catch (err) {
    if (err instanceof InvalidToken) return INACTIVE;
    throw err;
  }
  const { claims } = found;
  const scope = await deps.tenants.findScope(claims.tid);
  if (!scope || !can(principal, scope, 'tokens.introspect', now)) return INACTIVE;
  return {
    active: true,
    token_type: 'Bearer',
    ...(claims.client_id !== undefined ? { client_id: claims.client_id } : {}),
    sub: claims.sub,
    iss: claims.iss,
    aud: claims.aud,
    exp: claims.exp,
    iat: claims.iat,
    jti: claims.jti,
    ...(claims.scope !== undefined ? { scope: claims.scope } : {}),
    tid: claims.tid,
    principal_type: claims.pty,
    region: claims.region,
  };
}
