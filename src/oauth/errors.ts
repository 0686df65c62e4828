// OAuth errors (RFC 6749 section 5.2; RFC 8628 section 3.5 adds the device-grant ones). Their
// names are the wire format; the token endpoint's error handler is the only place they are sent.
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
export const invalidClient = () =>
  new OAuthError('invalid_client', 'client authentication failed', 401, { 'www-authenticate': 'Basic realm="gatehouse"' });

/**
 * Fastify's own refusals of a request's body on the OAuth endpoints, as OAuth errors; undefined
 * for anything else (a fault of the server, answered as server_error by the caller).
 */
export function bodyRefusal(err: unknown, limitText: string): OAuthError | undefined {
  const fe = err as { statusCode?: unknown; code?: unknown };
  if (typeof fe?.statusCode !== 'number' || fe.statusCode < 400 || fe.statusCode >= 500) return undefined;
  const description =
    fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
      ? `the request body is larger than ${limitText}`
      : fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'send application/x-www-form-urlencoded or application/json'
        : 'malformed request body';
  return new OAuthError('invalid_request', description, fe.statusCode === 413 ? 413 : 400);
}
