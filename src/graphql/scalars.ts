// The Time scalar: ISO 8601 UTC timestamps. Input accepts a date-time with or without a trailing
// `Z` (no zone means UTC) or with an explicit offset; output is always `…Z` with milliseconds.
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

export function parseTime(value: string): Date {
  const m = ISO.exec(value.trim());
  if (!m) throw new GraphQLError(`"${value}" is not an ISO 8601 timestamp`, { extensions: { code: 'BAD_USER_INPUT' } });
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const offset = !zone || zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const text = `${y}-${mo}-${d}T${h}:${mi}:${s}.${(frac + '000').slice(0, 3)}${offset}`;
  const date = new Date(text);
  // reject impossible calendar dates (2026-02-30) which Date would roll over
  if (Number.isNaN(date.getTime()) || (offset === 'Z' && date.toISOString().slice(0, 10) !== `${y}-${mo}-${d}`)) {
    throw new GraphQLError(`"${value}" is not a valid timestamp`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return date;
}

export const TimeScalar = new GraphQLScalarType<Date, string>({
  name: 'Time',
  description: 'An ISO 8601 UTC timestamp',
  serialize(value) {
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'string') return parseTime(value).toISOString();
    throw new GraphQLError('Time cannot represent this value');
  },
  parseValue(value) {
    if (typeof value !== 'string') throw new GraphQLError('Time must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return parseTime(value);
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Time must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return parseTime(ast.value);
  },
});
