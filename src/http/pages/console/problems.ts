// The console's one translation of a failure into words for a person: what went wrong, under a
// title, and what to do about it. The use cases speak to API callers ("secret is not the current
// secret of this client", "Existing client in tenant"); the failures a person meets in the console
// are reworded here, once, by their code and the field or message that tells them apart, and
// anything else keeps the use case's message under its code's general words. The status is the
// error code's (errors.ts): 400, 403, 404, 409, 429; anything unexpected is 500 and says only that.
//
// This is the one entry point (problemOf, tenantNotVisible, notInThisTenant). The rules that
// reword a failure are each family's: credentials-problems.ts (with the console's own, for any
// page), sso-problems.ts, tenants-problems.ts, users-problems.ts, on the machinery of
// problem-rules.ts; RULES reads them in that order, and the first rule that matches wins.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../../../errors.js';
import { mapError } from '../../error-handler.js';
import { CREDENTIAL_RULES } from './credentials-problems.js';
import type { ProblemContext, Rule } from './problem-rules.js';
import { SSO_RULES } from './sso-problems.js';
import { TENANT_RULES } from './tenants-problems.js';
import { USER_RULES } from './users-problems.js';

export type { ProblemContext } from './problem-rules.js';

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

interface Words {
  title: string;
  advice: string;
}

/** The words of a code, for a failure no rule below rewords (its message is the use case's). */
const WORDS: Record<ErrorCode, Words> = {
  BAD_USER_INPUT: { title: 'Check what you entered', advice: 'Correct it and send the form again.' },
  FORBIDDEN: { title: 'Not allowed', advice: 'Go back to your tenants, or ask an Administrator of this tenant for a role that allows it.' },
  RESTRICTED: { title: 'Not allowed', advice: 'Ask the vendor’s operators if this needs doing.' },
  NOT_FOUND: { title: 'Not found', advice: 'It may have been deleted meanwhile: go back to the list, which shows what exists now.' },
  CONFLICT: { title: 'Already exists', advice: 'Go back to the list, which shows what exists now.' },
  RATE_LIMITED: { title: 'Too many at once', advice: 'Wait for the time given, then try again.' },
  UNAUTHENTICATED: { title: 'Sign in again', advice: 'Your session has ended. Sign in again, then retry.' },
  UNAVAILABLE: { title: 'Unavailable for a moment', advice: 'The service cannot reach its database just now. Wait a few seconds, then try again.' },
  INTERNAL: {
    title: 'Something went wrong',
    advice: 'Reload the list to see what was done, then try again. If it keeps failing, give your operator the request id below.',
  },
};

/** Every family's rules, in one order: the first that matches a failure words it. */
const RULES: readonly Rule[] = [...CREDENTIAL_RULES, ...SSO_RULES, ...TENANT_RULES, ...USER_RULES];

/** A failure the console itself decides the words of (its own checks, not a use case's). */
class ConsoleRefusal extends AppError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly words: Words,
  ) {
    super(code, message);
  }
}

/**
 * A tenant asked for that the viewer cannot act in: it does not exist, or no role of theirs
 * reaches it. The same words either way (403, as the API answers), so that nobody learns
 * whether a tenant they cannot see exists.
 */
export function tenantNotVisible(id: string): AppError {
  return new ConsoleRefusal('FORBIDDEN', `No tenant ${id} is visible to you.`, {
    title: 'Tenant not found',
    advice: 'Check the id, or pick a tenant from your list.',
  });
}

/** The things a page names by id that must be its tenant's own. */
export type OwnKind = 'user' | 'label' | 'subscription';

/**
 * A user, label or subscription a page was given that is not its tenant's own: it may belong to
 * a tenant below (which the viewer's roles reach, so the services accept it), be out of reach, or
 * not exist at all. A page acts in its one tenant, so it refuses them alike (404), with the same
 * words, so that the page tells nothing about where else it might be.
 */
export function notInThisTenant(kind: OwnKind, tenant: { name: string }): AppError {
  const title = `${kind.charAt(0).toUpperCase()}${kind.slice(1)} not found`;
  return new ConsoleRefusal('NOT_FOUND', `No ${kind} with this id belongs to ${tenant.name}.`, {
    title,
    advice: `It may have been deleted, or belong to another tenant: go back to the list of ${tenant.name}, or open it from the tenant it belongs to.`,
  });
}

/** The failure of a request (logged first if it is a bug, by mapError) in a person's words. */
export function problemOf(err: unknown, req: FastifyRequest, reply: FastifyReply, context: ProblemContext = {}): Problem {
  const m = mapError(err, req, reply);
  const base = { status: m.status, code: m.code, headers: m.headers };
  if (err instanceof ConsoleRefusal) return { ...base, message: m.message, ...err.words };
  if (err instanceof AppError) {
    for (const rule of RULES) {
      if (rule.code !== err.code || (rule.field !== undefined && rule.field !== err.details.field)) continue;
      const found = rule.message ? rule.message.exec(err.message) : [];
      if (!found) continue;
      const words = rule.words({ groups: found.slice(1), error: err, context });
      return { ...base, title: words.title ?? WORDS[m.code].title, message: words.message, advice: words.advice };
    }
  }
  return { ...base, message: m.message, ...WORDS[m.code] };
}
