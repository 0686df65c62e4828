// The scope of the OAuth endpoints (the token endpoint, the device authorization endpoint): what
// every answer of theirs shares. Bodies are forms or JSON, at most OAUTH_BODY_LIMIT, kept with
// enough of the raw text to refuse repeated parameters (oauth/params.ts); answers are never
// cached; and one error handler answers every failure in the form of RFC 6749 section 5.2.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../../errors.js';
import { invalidRequest, OAuthError } from '../../oauth/errors.js';
import { checkedParams, type ParsedParams, parseForm, parseJson, type TokenParams } from '../../oauth/params.js';
import type { Metrics } from '../../observability/metrics.js';
import { bodyRefusal, sizeInWords } from '../body-refusal.js';

/** Token and device-authorization requests are a few hundred bytes; 16 KiB leaves room for long
 *  ids and scopes and keeps a hostile body from costing the event loop more than a moment. */
export const OAUTH_BODY_LIMIT = 16 * 1024;

const PARSED_BODY = Symbol('OAuth request body');
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Sets up the scope the OAuth endpoints are registered in (before any of its routes). */
export function oauthScope(scope: FastifyInstance, metrics: Metrics): void {
  // every route of the scope reads at most this much (a route's limit is the one its parsers use)
  scope.addHook('onRoute', (route) => {
    route.bodyLimit ??= OAUTH_BODY_LIMIT;
  });
  scope.addHook('onRequest', (_request, reply, done) => {
    reply.headers(NO_STORE);
    done();
  });
  // Fastify's own text/plain parser would read the body before the refusal: other types are
  // refused unread (415, answered as invalid_request)
  scope.removeContentTypeParser('text/plain');
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, { [PARSED_BODY]: parseForm(body as string) });
  });
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, { [PARSED_BODY]: parseJson(body as string) });
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  scope.setErrorHandler((err, request, reply) => sendOAuthError(err, request, reply, metrics));
}

/** The parameters of a request of the scope (its body, read by the scope's parsers). */
export function oauthParams(body: unknown): TokenParams {
  if (body === undefined || body === null || body === '') throw invalidRequest('the request has no body; send grant_type and credentials');
  if (typeof body !== 'object' || !(PARSED_BODY in body)) throw invalidRequest('send application/x-www-form-urlencoded or application/json');
  return checkedParams((body as { [PARSED_BODY]: ParsedParams })[PARSED_BODY]);
}

/** OAuthError as RFC 6749 section 5.2 answers it; Fastify's refusals of the body as invalid_request;
 *  anything else is a fault of the server: logged, answered server_error with no detail. */
function sendOAuthError(err: unknown, request: FastifyRequest, reply: FastifyReply, metrics: Metrics) {
  reply.headers(NO_STORE);
  const endpoint = request.routeOptions.config.oauthEndpoint;
  const oauth = err instanceof OAuthError ? err : err instanceof DatabaseUnavailableError ? unavailable(err, request) : refusedBody(err, request);
  if (!oauth) {
    request.log.error({ err }, `${endpoint ?? 'OAuth endpoint'} failed`);
    if (endpoint === 'token endpoint') metrics.tokenErrors.inc({ error: 'server_error' });
    return reply.code(500).send({ error: 'server_error', error_description: 'internal error' });
  }
  if (endpoint === 'token endpoint') metrics.tokenErrors.inc({ error: oauth.error });
  return reply.code(oauth.status).headers(oauth.headers).send({ error: oauth.error, error_description: oauth.description });
}

/** The database unreachable: 503 temporarily_unavailable (RFC 6749 section 4.1.2.1's code) with Retry-After. */
function unavailable(err: DatabaseUnavailableError, request: FastifyRequest): OAuthError {
  request.log.warn({ err }, 'database unavailable');
  return new OAuthError('temporarily_unavailable', err.message, 503, { 'retry-after': String(err.retryAfter) });
}

/** Fastify's refusal of a body (body-refusal.ts) as an OAuth error; undefined for anything else. */
function refusedBody(err: unknown, request: FastifyRequest): OAuthError | undefined {
  const refused = bodyRefusal(err);
  if (!refused) return undefined;
  const description =
    refused.kind === 'too_large'
      ? `the request body is larger than ${sizeInWords(request.routeOptions.bodyLimit)}`
      : refused.kind === 'media_type'
        ? 'send application/x-www-form-urlencoded or application/json'
        : 'malformed request body';
  return new OAuthError('invalid_request', description, refused.status === 413 ? 413 : 400);
}
