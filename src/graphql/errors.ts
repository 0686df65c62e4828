// The one place GraphQL errors get their public form: AppError -> its code and message;
// GraphQL's own errors (syntax, validation, variable coercion) -> BAD_USER_INPUT, without "Did
// you mean" hints where introspection is off; the database unreachable -> INTERNAL with retryAfter (the contract's codes); anything else -> INTERNAL with no detail (logged by
// the caller).
import { GraphQLError } from 'graphql';
import { AppError, DatabaseUnavailableError, type ErrorCode } from '../errors.js';

export interface PublicGraphQLError {
  message: string;
  locations?: readonly { line: number; column: number }[];
  path?: readonly (string | number)[];
  extensions: { code: ErrorCode } & Record<string, unknown>;
}

export function formatGraphQLError(
  err: GraphQLError,
  onInternal: (err: unknown) => void,
  options: { hideSuggestions: boolean } = { hideSuggestions: true },
): PublicGraphQLError {
  const original = err.originalError;
  const where = {
    ...(err.locations ? { locations: err.locations } : {}),
    ...(err.path ? { path: err.path } : {}),
  };
  if (original instanceof AppError) {
    return { message: original.message, ...where, extensions: { code: original.code, ...original.details } };
  }
  // the database cannot be reached: not a bug, and the caller should retry (the route answers 503).
  // The code is one of the contract's (CONTRACT: "one of UNAUTHENTICATED … INTERNAL"): INTERNAL,
  // told apart from a bug by its retryAfter and its message
  if (original instanceof DatabaseUnavailableError) {
    return { message: original.message, ...where, extensions: { code: 'INTERNAL', retryAfter: original.retryAfter } };
  }
  if (original && !(original instanceof GraphQLError)) {
    onInternal(original);
    return { message: 'Internal server error', ...where, extensions: { code: 'INTERNAL' } };
  }
  const code = (err.extensions?.code as ErrorCode | undefined) ?? 'BAD_USER_INPUT';
  // graphql-js leaves hints out itself when asked (executor.ts); this catches any path it misses
  const message = options.hideSuggestions ? err.message.replace(/ Did you mean .*\?$/s, '') : err.message;
  return {
    message: shortenQuotedValues(message),
    ...where,
    extensions: { code },
  };
}

/** graphql-js quotes a refused variable value in full (`Variable "$q" got invalid value "…"`):
 *  a megabyte sent would come back twice. Quoted values past 64 characters are cut short. */
function shortenQuotedValues(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.){64,}"/g, (literal) => `${literal.slice(0, 65)}…"`);
}
