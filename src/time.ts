// ISO 8601 timestamps as the interfaces accept them: a date-time with or without a trailing `Z`
// (no zone means UTC), with an explicit offset, or a bare date (midnight UTC). Only instants from
// year 1 to year 9999 (UTC) are accepted: both database engines store them alike, while years
// outside (0000, or 9999-12-31T23:00-14:00, which is year 10000 in UTC) would be stored by one
// engine and refused by the other.
import { badInput } from './errors.js';
import { quoted } from './text.js';

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

export const EARLIEST = new Date('0001-01-01T00:00:00.000Z');
export const LATEST = new Date('9999-12-31T23:59:59.999Z');

/** The instant, or undefined when the text is not such a timestamp (or names no real date, or lies outside years 1-9999 UTC). */
export function parseTimestamp(value: string): Date | undefined {
  if (value.length > 64) return undefined;
  const m = ISO.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone] = m;
  const offset = !zone || zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${(frac + '000').slice(0, 3)}${offset}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Date rolls 2026-02-30 over into March; a real date survives the round trip
  const check = new Date(0);
  check.setUTCFullYear(Number(y), Number(mo) - 1, Number(d)); // (Date.UTC would read year 50 as 1950)
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  if (zone && zone.length > 1 && (Number(offset.slice(1, 3)) > 14 || Number(offset.slice(4, 6)) > 59)) return undefined;
  if (date < EARLIEST || date > LATEST) return undefined;
  return date;
}

/** A Time input (already a Date from the GraphQL scalar, or text), or BAD_USER_INPUT naming the field. */
export function parseTimeInput(value: string | Date, field: string): Date {
  if (value instanceof Date) return value;
  const date = parseTimestamp(value);
  if (!date) throw badInput(`${field}: ${quoted(value)} is not an ISO 8601 timestamp from year 1 to 9999`, { field });
  return date;
}

/** A wait in words: "45 seconds", "15 minutes". */
export function inWords(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}
