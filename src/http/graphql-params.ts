// The parameters of a GraphQL-over-HTTP request: from a POST's JSON body, or from a GET's query
// string (where variables and extensions are JSON text). Anything that is not a well-formed
// request is BAD_USER_INPUT with HTTP 400, whatever the media type; batches (a JSON array) are
// refused here.
import { badInput } from '../errors.js';

export interface GraphQLParams {
  query: string;
  variables: Record<string, unknown> | undefined;
  operationName: string | undefined;
  /** the variables hold a NUL character, which PostgreSQL text cannot store (the document's own
   *  strings are checked when it is validated: graphql/storable-text.ts) */
  hasNul: boolean;
}

/** Deepest nesting of lists and objects accepted in variables. The schemas' inputs nest a few
 *  levels; JSON nested thousands deep is refused before anything walks it recursively. */
export const MAX_VARIABLES_DEPTH = 32;

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function paramsFromBody(body: unknown): GraphQLParams {
  if (Array.isArray(body)) throw badInput('Batched requests are not supported: send one {"query": …} object per request');
  if (!isPlainObject(body)) throw badInput('The body must be a JSON object with a "query" string');
  return checked(body.query, body.variables, body.operationName, body.extensions);
}

export function paramsFromQueryString(search: unknown): GraphQLParams {
  const params = isPlainObject(search) ? search : {};
  for (const [name, value] of Object.entries(params)) {
    if (Array.isArray(value)) throw badInput(`The query string names "${name}" more than once`);
  }
  return checked(params.query, jsonParam(params, 'variables'), params.operationName, jsonParam(params, 'extensions'));
}

function jsonParam(params: Record<string, unknown>, name: string): unknown {
  const raw = params[name];
  if (raw === undefined || raw === '') return undefined;
  try {
    return JSON.parse(String(raw));
  } catch {
    throw badInput(`"${name}" must be JSON text of an object`);
  }
}

function checked(query: unknown, variables: unknown, operationName: unknown, extensions: unknown): GraphQLParams {
  if (typeof query !== 'string') throw badInput('The request must carry the GraphQL document as a "query" string');
  if (variables !== undefined && variables !== null && !isPlainObject(variables)) throw badInput('"variables" must be an object');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    throw badInput('"operationName" must be a string');
  }
  // extensions are accepted and ignored (no extension is implemented), but must be well-formed
  if (extensions !== undefined && extensions !== null && !isPlainObject(extensions)) throw badInput('"extensions" must be an object');
  return {
    query,
    variables: (variables as Record<string, unknown> | null) ?? undefined,
    operationName: (operationName as string | null) ?? undefined,
    hasNul: variablesHoldNul(variables),
  };
}

/** Walks the variables without recursion (bounded depth), looking for NUL in keys and strings. */
function variablesHoldNul(variables: unknown): boolean {
  const stack: [unknown, number][] = [[variables, 0]];
  let nul = false;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      nul ||= value.includes('\u0000');
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_VARIABLES_DEPTH) throw badInput(`"variables" are nested deeper than ${MAX_VARIABLES_DEPTH} levels`);
      for (const [key, inner] of Object.entries(value)) {
        nul ||= key.includes('\u0000');
        stack.push([inner, depth + 1]);
      }
    }
  }
  return nul;
}
