// ISO 8601 timestamps as the interfaces accept them: a date-time with or without a trailing `Z`
// (no zone means UTC), with an explicit offset, or a bare date (midnight UTC).
import { badInput } from './errors.js';

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** The instant, or undefined when the text is not such a timestamp (or names no real date). */
export function parseTimestamp(value: string): Date | undefined {
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const offset = !zone || zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${(frac + '000').slice(0, 3)}${offset}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Date rolls 2026-02-30 over into March; a real date survives the round trip
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  return date;
}

/** A Time input (already a Date from the GraphQL scalar, or text), or BAD_USER_INPUT naming the field. */
export function parseTimeInput(value: string | Date, field: string): Date {
  if (value instanceof Date) return value;
  const date = parseTimestamp(value);
  if (!date) throw badInput(`${field}: "${value}" is not an ISO 8601 timestamp`, { field });
  return date;
}
