// OAuth errors (RFC 6749 section 5.2; RFC 8628 section 3.5 adds the device-grant ones). Their
// names are the wire format; the OAuth endpoints' one error handler (http/oauth/scope.ts)
// is the only place they are sent.
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export const invalidRequest = (description: string) => new OAuthError('invalid_request', description);
/** `region`: this deployment's, named by the endpoints that take a client's secret, since
 *  credentials are valid only in the region whose deployment issued them. */
export const invalidClient = (region?: string) =>
  new OAuthError(
    'invalid_client',
    region === undefined
      ? 'client authentication failed'
      : `client authentication failed: this deployment (region ${region}) has no live client with these credentials; credentials work only in the region whose deployment issued them`,
    401,
    { 'www-authenticate': 'Basic realm="gatehouse"' },
  );
