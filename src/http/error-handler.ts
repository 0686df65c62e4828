// Errors that escape a route, mapped once per transport. AppError -> its status and code; the
// database unreachable (DatabaseUnavailableError) -> 503 INTERNAL with retryAfter and Retry-After;
// Fastify's own 4xx (malformed JSON, unsupported media type, body over the limit: body-refusal.ts)
// -> that status with BAD_USER_INPUT; anything else is a bug: logged, answered 500 INTERNAL with
// no detail.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, DatabaseUnavailableError, HTTP_STATUS, type ErrorCode } from '../errors.js';
import { bodyRefusal, sizeInWords } from './body-refusal.js';

interface Mapped {
  status: number;
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  headers: Record<string, string>;
}

export function mapError(err: unknown, request: FastifyRequest, reply: FastifyReply): Mapped {
  if (err instanceof AppError) {
    const { challenge, ...details } = err.details as { challenge?: string; retryAfter?: number };
    const headers: Record<string, string> = {};
    if (challenge) headers['www-authenticate'] = challenge;
    if (err.code === 'RATE_LIMITED' && typeof details.retryAfter === 'number') headers['retry-after'] = String(details.retryAfter);
    // a handler may have chosen a more precise status (405) before throwing
    const status = reply.statusCode >= 400 ? reply.statusCode : HTTP_STATUS[err.code];
    return { status, code: err.code, message: err.message, details, headers };
  }
  if (err instanceof DatabaseUnavailableError) {
    request.log.warn({ err }, 'database unavailable');
    return {
      status: 503,
      // one of the contract's codes; retryAfter tells it from a bug
      code: 'INTERNAL',
      message: err.message,
      details: { retryAfter: err.retryAfter },
      headers: { 'retry-after': String(err.retryAfter) },
    };
  }
  const refused = bodyRefusal(err);
  if (refused) {
    const message =
      refused.kind === 'too_large'
        ? `The request body is larger than ${sizeInWords(request.routeOptions.bodyLimit)}`
        : refused.kind === 'media_type'
          ? 'Unsupported Content-Type; send application/json'
          : refused.kind === 'malformed'
            ? `Malformed request body: ${refused.detail}`
            : refused.detail;
    return { status: refused.status, code: 'BAD_USER_INPUT', message, details: {}, headers: {} };
  }
  request.log.error({ err }, 'unhandled error');
  return { status: 500, code: 'INTERNAL', message: 'Internal server error', details: {}, headers: {} };
}

/**
 * GraphQL-shaped error body: {errors: [{message, extensions: {code}}], error: [message]}, as the
 * media type the GraphQL route negotiated (application/json before or without negotiation).
 */
export function graphqlErrorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const m = mapError(err, request, reply);
  return reply
    .code(m.status)
    .headers(m.headers)
    .header('content-type', `${request.graphqlMediaType ?? 'application/json'}; charset=utf-8`)
    .send({ errors: [{ message: m.message, extensions: { code: m.code, ...m.details } }], error: [m.message] });
}

/** Plain JSON error body for the other endpoints: {error: CODE, message}. */
export function jsonErrorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const m = mapError(err, request, reply);
  return reply
    .code(m.status)
    .headers(m.headers)
    .send({ error: m.code, message: m.message, ...m.details });
}
