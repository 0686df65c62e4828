// The machinery of the console's rules (problems.ts): what a rule matches (a failure's code, and
// the field or message that tells it apart) and the words it gives, and what its words may use.
// The rules themselves are each family's (credentials-problems.ts, sso-problems.ts,
// tenants-problems.ts, users-problems.ts); problems.ts reads them in one order.
import type { AppError, ErrorCode } from '../../../errors.js';

/** What the page that failed was about, when it is known: some words name it. */
export interface ProblemContext {
  tenant?: { id: string; name: string } | undefined;
}

/** A use case's failure as a person reads it: which one (code, and field or message), and its words. */
export interface Rule {
  code: ErrorCode;
  /** the form field it names (details.field) */
  field?: string;
  /** its message; the groups are passed to the words */
  message?: RegExp;
  words(m: { groups: string[]; error: AppError; context: ProblemContext }): { message: string; advice: string; title?: string };
}

/** The tenant the page was about, by name, in a rule's words. */
export const inTenant = (c: ProblemContext) => (c.tenant ? c.tenant.name : 'this tenant');

/** A wait as a person reads it: "45 seconds", "1 minute", "12 minutes". */
export function duration(seconds: number): string {
  if (seconds < 60) return seconds === 1 ? '1 second' : `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}
