// The Time scalar: ISO 8601 UTC timestamps. Input accepts a date-time with or without a trailing
// `Z` (see time.ts); output is always UTC with milliseconds and `Z`.
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { parseTimestamp } from '../time.js';

function parse(value: unknown): Date {
  const date = typeof value === 'string' ? parseTimestamp(value) : undefined;
  if (!date) {
    throw new GraphQLError(`${JSON.stringify(value)} is not an ISO 8601 timestamp (e.g. 2026-01-31T12:00:00Z)`, {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  return date;
}

export const TimeScalar = new GraphQLScalarType<Date, string>({
  name: 'Time',
  description: 'An ISO 8601 UTC timestamp',
  serialize(value) {
    if (value instanceof Date) return value.toISOString();
    return parse(value).toISOString();
  },
  parseValue: parse,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Time must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return parse(ast.value);
  },
});
