// Client authentication at the OAuth endpoints that take a client's secret (token, introspection,
// revocation): the credentials presented (oauth/client-auth.ts), asked of the guessing throttle
// first (oauth/failure-throttle.ts: a guesser's attempt is counted before its secret is checked,
// and given back if it authenticates), so that no endpoint is a way around the throttle.
import type { FastifyRequest } from 'fastify';
import type { RequestInfo } from '../../audit/model.js';
import { type AuthenticatedClient, authenticateClient, type ClientAuthenticator, presentedCredentials } from '../../oauth/client-auth.js';
import { invalidClient, OAuthError } from '../../oauth/errors.js';
import type { FailureThrottle } from '../../oauth/failure-throttle.js';
import type { TokenParams } from '../../oauth/params.js';

/** Authenticates clients, and records a refused secret of a client that exists as an audit event
 *  of its tenant, off the request path (credentials/service.ts). */
export interface RefusalRecordingAuthenticator extends ClientAuthenticator {
  credentialsRefused(clientId: string, secret: string, request: RequestInfo, onError: (err: unknown) => void): void;
}

export interface ClientAuthDeps {
  credentials: RefusalRecordingAuthenticator;
  /** counts failed client authentications across processes */
  throttle: FailureThrottle;
  /** this deployment's region, named by every invalid_client */
  region: string;
}

/** The client the request's credentials (HTTP Basic or in the body) authenticate, or
 *  invalid_client (429 while throttled). Every invalid_client has the same words, which name this
 *  deployment's region (credentials are valid in one region only), so that they tell nothing of
 *  why. */
export async function throttledClientAuth(deps: ClientAuthDeps, request: FastifyRequest, params: TokenParams): Promise<AuthenticatedClient> {
  try {
    return await authenticate(deps, request, params);
  } catch (err) {
    if (err instanceof OAuthError && err.error === 'invalid_client') throw invalidClient(deps.region);
    throw err;
  }
}

async function authenticate(deps: ClientAuthDeps, request: FastifyRequest, params: TokenParams): Promise<AuthenticatedClient> {
  const presented = presentedCredentials(request.headers.authorization, params);
  const { throttle } = deps;
  const attempt = await throttle.begin(presented?.clientId ?? '', request.ip);
  if (typeof attempt === 'number') throw throttled(attempt);
  let client: AuthenticatedClient;
  try {
    client = await authenticateClient(deps.credentials, presented);
  } catch (err) {
    if (err instanceof OAuthError && err.error === 'invalid_client') {
      const wait = await throttle.fail(attempt);
      // the refusal is an audit event of the client named, if it exists, written off the request
      // path (its time must not tell whether the client exists); the throttle has settled first
      // and does not depend on it: a write that fails (the database gone) is logged
      if (presented) {
        deps.credentials.credentialsRefused(presented.clientId, presented.clientSecret, { id: request.id, address: request.ip }, (writeErr) =>
          request.log.error({ err: writeErr }, 'the audit event of a refused client secret was not written'),
        );
      }
      refuseWhileThrottled(wait);
    } else await throttle.abandon(attempt);
    throw err;
  }
  await throttle.succeed(attempt);
  return client;
}

/** 429 with Retry-After when the guessing throttle says wait (seconds > 0). */
function refuseWhileThrottled(seconds: number): void {
  if (seconds > 0) throw throttled(seconds);
}

function throttled(seconds: number): OAuthError {
  return new OAuthError('temporarily_unavailable', `too many failed attempts; retry in ${seconds} seconds`, 429, { 'retry-after': String(seconds) });
}
