// The Time scalar: ISO 8601 UTC timestamps. Input accepts a date-time with or without a trailing
// `Z` (see time.ts); output is always UTC with milliseconds and `Z`.
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { quoted } from '../text.js';
import { parseTimestamp } from '../time.js';

function parse(value: unknown): Date {
  const date = typeof value === 'string' ? parseTimestamp(value) : undefined;
  if (!date) {
    const shown = typeof value === 'string' ? quoted(value) : quoted(JSON.stringify(value) ?? String(value));
    throw new GraphQLError(`${shown} is not an ISO 8601 timestamp from year 1 to 9999 UTC (e.g. 2026-01-31T12:00:00Z)`, {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  return date;
}

/**
 * Dates served often (a cached listing's, shared by every request) keep their text: formatting is
 * a tenth of a `clients` query's work otherwise. Checked against the time, so a Date changed since
 * is formatted again.
 */
const formatted = new WeakMap<Date, { time: number; text: string }>();

function iso(date: Date): string {
  const time = date.getTime();
  const known = formatted.get(date);
  if (known?.time === time) return known.text;
  const text = date.toISOString();
  formatted.set(date, { time, text });
  return text;
}

export const TimeScalar = new GraphQLScalarType<Date, string>({
  name: 'Time',
  description: 'An ISO 8601 UTC timestamp',
  serialize(value) {
    // a value the server produced: if it is not a time, that is a bug of ours (INTERNAL, logged),
    // not the caller's input
    const date = value instanceof Date ? value : typeof value === 'string' ? parseTimestamp(value) : undefined;
    if (!date || Number.isNaN(date.getTime())) throw new TypeError(`a Time field resolved to ${typeof value}, not a date`);
    return iso(date);
  },
  parseValue: parse,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('Time must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return parse(ast.value);
  },
});
