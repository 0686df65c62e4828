// The one place GraphQL errors get their public form: AppError -> its code and message;
// GraphQL's own errors (syntax, validation, variable coercion) -> BAD_USER_INPUT without
// "Did you mean" hints; anything else -> INTERNAL with no detail (logged by the caller).
import { GraphQLError } from 'graphql';
import { AppError, type ErrorCode } from '../errors.js';

export interface PublicGraphQLError {
  message: string;
  locations?: readonly { line: number; column: number }[];
  path?: readonly (string | number)[];
  extensions: { code: ErrorCode } & Record<string, unknown>;
}

export function formatGraphQLError(err: GraphQLError, onInternal: (err: unknown) => void): PublicGraphQLError {
  const original = err.originalError;
  const where = {
    ...(err.locations ? { locations: err.locations } : {}),
    ...(err.path ? { path: err.path } : {}),
  };
  if (original instanceof AppError) {
    return { message: original.message, ...where, extensions: { code: original.code, ...original.details } };
  }
  if (original && !(original instanceof GraphQLError)) {
    onInternal(original);
    return { message: 'Internal server error', ...where, extensions: { code: 'INTERNAL' } };
  }
  const code = (err.extensions?.code as ErrorCode | undefined) ?? 'BAD_USER_INPUT';
  return {
    message: err.message.replace(/ Did you mean .*\?$/s, ''),
    ...where,
    extensions: { code },
  };
}
