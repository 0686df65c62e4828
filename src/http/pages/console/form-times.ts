// The times typed in the console's forms: a datetime-local field, labelled "(UTC)", sends
// "2026-11-28T09:30" (or with seconds, "2026-11-28T09:30:15"), with no zone. The pages read it as
// UTC, whatever the server's own time zone (`new Date(text)` would read a zoneless date-time in
// the server's local time), and refuse any other text, naming the field: one parser for every
// form (the audit trail's filters, the tenant search, a tenant's expiry and support access).
import { badInput } from '../../../errors.js';
import { parseTimestamp } from '../../../time.js';

/** What a datetime-local field sends: a date and a time to the minute or the second. */
const DATETIME_LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** The time a datetime-local field gives, read as UTC; undefined when empty; else BAD_USER_INPUT naming `field`. */
export function formTime(raw: string | undefined, field: string): Date | undefined {
  const given = raw?.trim();
  if (!given) return undefined;
  // parseTimestamp also refuses dates that do not exist (2026-02-30) and hours past 23
  const time = DATETIME_LOCAL.test(given) ? parseTimestamp(`${given}Z`) : undefined;
  if (!time) throw badInput(`${field} must be a date and time such as 2026-11-28T09:30 (UTC)`, { field });
  return time;
}
