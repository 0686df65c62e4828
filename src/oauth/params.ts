// Token-request parameters from a form or JSON body. Every value must be a single string, and a
// parameter sent twice is invalid_request (RFC 6749 section 3.2), in either body format. The
// OAuth endpoints' body parsers (http/oauth/scope.ts) read the bodies with these.
import { invalidRequest } from './errors.js';
import { topLevelKeys } from './json-keys.js';

export type TokenParams = Partial<Record<string, string>>;

export interface ParsedParams {
  params: TokenParams;
  repeated: string[];
  /** a value that is not a string (JSON numbers, arrays, objects) */
  notString?: string;
}

/** Repeated names, once each, in the order they were repeated. */
function repeatedNames(names: Iterable<string>): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) repeated.add(name);
    seen.add(name);
  }
  return [...repeated];
}

/** application/x-www-form-urlencoded, in one pass (the token endpoint's every request) */
export function parseForm(body: string): ParsedParams {
  // no prototype: a parameter named like an Object method ("toString") is just a parameter
  const params: TokenParams = Object.create(null);
  // a Set: a body of many distinct repeated names must not cost a scan per name
  const repeated = new Set<string>();
  for (const [key, value] of new URLSearchParams(body)) {
    if (key in params) repeated.add(key);
    params[key] = value;
  }
  return { params, repeated: [...repeated] };
}

/** application/json: a flat object of strings. JSON.parse keeps the last of repeated keys, so
 *  repeats are found by reading the top-level keys again, decoded (json-keys.ts). */
export function parseJson(body: string): ParsedParams {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw invalidRequest('malformed JSON body');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidRequest('the body must be a JSON object');
  const params: TokenParams = Object.create(null);
  let notString: string | undefined;
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (typeof v !== 'string') notString ??= key;
    else params[key] = v;
  }
  return { params, repeated: repeatedNames(topLevelKeys(body)), ...(notString ? { notString } : {}) };
}

/** repeated names named in the refusal, at most */
const NAMED_REPEATS = 5;

/** The parameters of a parsed body, if they keep the rules: no repeats, strings only, no NUL. */
export function checkedParams(parsed: ParsedParams): TokenParams {
  if (parsed.repeated.length > 0) {
    const named = parsed.repeated.slice(0, NAMED_REPEATS).map((name) => JSON.stringify(name.slice(0, 64)));
    const more = parsed.repeated.length - named.length;
    throw invalidRequest(`parameter sent more than once: ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  if (parsed.notString) throw invalidRequest(`parameter ${parsed.notString} must be a string`);
  for (const key in parsed.params) {
    if (key.includes('\u0000') || parsed.params[key]!.includes('\u0000')) throw invalidRequest('parameters must not contain NUL characters');
  }
  return parsed.params;
}
