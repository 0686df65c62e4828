// Token-request parameters from a form or JSON body. Every value must be a single string;
// a parameter sent twice is invalid_request (RFC 6749 section 3.2).
import { invalidRequest } from './errors.js';

export type TokenParams = Partial<Record<string, string>>;

/** Parses application/x-www-form-urlencoded, remembering parameters that appear twice. */
export function parseForm(body: string): { params: TokenParams; repeated: string[] } {
  const params: TokenParams = {};
  const repeated: string[] = [];
  for (const [key, value] of new URLSearchParams(body)) {
    if (key in params) repeated.push(key);
    params[key] = value;
  }
  return { params, repeated };
}

export const FORM_BODY = Symbol('form body');

export function tokenParams(body: unknown): TokenParams {
  if (body === undefined || body === null || body === '') throw invalidRequest('the request has no body; send grant_type and credentials');
  if (typeof body === 'object' && FORM_BODY in body) {
    const { params, repeated } = (body as { [FORM_BODY]: ReturnType<typeof parseForm> })[FORM_BODY];
    if (repeated.length > 0) throw invalidRequest(`parameter sent more than once: ${[...new Set(repeated)].join(', ')}`);
    return params;
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('the body must be a form or a JSON object');
  const params: TokenParams = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw invalidRequest(`parameter ${key} must be a string`);
    params[key] = value;
  }
  return params;
}
