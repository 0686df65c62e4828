// preHandler: `Authorization: Bearer <token>` -> request.principal, or 401 with WWW-Authenticate
// (RFC 6750: no error code when no credentials were sent, invalid_token otherwise).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidToken } from '../../oauth/access-token.js';
import { TOKEN_PATH } from '../oauth/token-endpoint.js';
import type { Services } from '../../services.js';
import { AppError } from '../../errors.js';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
export const REALM = 'gatehouse';

export function unauthenticated(message: string, tokenSent: boolean): AppError {
  return new AppError('UNAUTHENTICATED', message, {
    challenge: tokenSent ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`,
  });
}

/** What to do about a refused token, unless the refusal says otherwise. */
export const TOKEN_REMEDY = `Obtain a new access token from the token endpoint (POST ${TOKEN_PATH}) and send it as "Authorization: Bearer <token>".`;

export function bearerAuth(services: Services) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') throw unauthenticated('Authentication required: send Authorization: Bearer <token>', false);
    const match = BEARER.exec(header);
    if (!match) {
      throw unauthenticated(
        `The Authorization header is not of the form "Bearer <token>": send the word Bearer, a space and one access token, without quotes. ${TOKEN_REMEDY}`,
        true,
      );
    }
    try {
      // a copy: the authenticator may hand the same principal to several requests
      request.principal = { ...(await services.bearer.authenticate(match[1]!)), request: { id: request.id, address: request.ip } };
    } catch (err) {
      if (err instanceof InvalidToken) throw unauthenticated(`Invalid access token: ${err.message}. ${err.remedy ?? TOKEN_REMEDY}`, true);
      throw err;
    }
  };
}
