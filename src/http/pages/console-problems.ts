// The console's one translation of a failure into words for a person: the use case's own message
// (what went wrong) under a title, and what to do about it. The status is the error code's
// (errors.ts): 400, 403, 404, 409, 429; anything unexpected is 500 and says only that.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../errors.js';
import { mapError } from '../error-handler.js';

export interface Problem {
  status: number;
  code: ErrorCode;
  title: string;
  /** what went wrong */
  message: string;
  /** what to do */
  advice: string;
  /** headers the answer carries (Retry-After) */
  headers: Record<string, string>;
}

const WORDS: Record<ErrorCode, { title: string; advice: string }> = {
  BAD_USER_INPUT: { title: 'Check what you entered', advice: 'Correct it and send the form again.' },
  FORBIDDEN: {
    title: 'Not allowed',
    advice: 'Pick one of your tenants, or ask an Administrator of this tenant for a role that allows it.',
  },
  RESTRICTED: { title: 'Not allowed', advice: 'Ask the vendor’s operators if this needs doing.' },
  NOT_FOUND: { title: 'Not found', advice: 'It may have been deleted meanwhile: go back to the list, which shows what exists now.' },
  CONFLICT: {
    title: 'The name is taken',
    advice: 'Another client of this tenant has this name (names are compared ignoring case). Choose another name.',
  },
  RATE_LIMITED: { title: 'Too many at once', advice: 'Wait for the time given, then try again.' },
  UNAUTHENTICATED: { title: 'Sign in again', advice: 'Your session has ended. Sign in again, then retry.' },
  INTERNAL: {
    title: 'Something went wrong',
    advice: 'Reload the list to see what was done, then try again. If it keeps failing, give your operator the request id below.',
  },
};

/** The failure of a request (logged first if it is a bug, by mapError) in a person's words. */
export function problemOf(err: unknown, req: FastifyRequest, reply: FastifyReply): Problem {
  const m = mapError(err, req, reply);
  return { status: m.status, code: m.code, message: m.message, headers: m.headers, ...WORDS[m.code] };
}
