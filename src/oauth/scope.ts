// The `scope` parameter of a token request (CONTRACT.md): role names the client holds, narrowing
// the token to them. Names are compared exactly, as RFC 6749 section 3.3 makes scope tokens
// case-sensitive ("auditor" is not a role); they are separated by spaces (extra spaces are
// forgiven, nothing else separates); a name may repeat and counts once. An empty scope is no
// scope: the token is not narrowed and acts with whatever roles the client holds at each request.
import { isScopeName, SCOPE_NAMES } from '../access/scope.js';
import type { RoleName } from '../access/roles.js';
import { OAuthError } from './errors.js';

const invalidScope = (description: string) => new OAuthError('invalid_scope', description);

/** The requested names, once each; undefined when no scope was requested. */
export function requestedScope(raw: string | undefined): RoleName[] | undefined {
  const names = (raw ?? '').split(' ').filter((name) => name !== '');
  if (names.length === 0) return undefined;
  for (const name of names) {
    if (!isScopeName(name)) {
      throw invalidScope(`unknown scope ${JSON.stringify(name.slice(0, 64))}: scopes are role names, exactly as written: ${SCOPE_NAMES.join(' ')}`);
    }
  }
  return [...new Set(names as RoleName[])];
}

/** The requested names if the client holds every one of them. */
export function grantScope(requested: readonly RoleName[], held: readonly RoleName[]): RoleName[] {
  const missing = requested.filter((name) => !held.includes(name));
  if (missing.length > 0) throw invalidScope(`the client does not hold the role${missing.length > 1 ? 's' : ''} ${missing.join(' ')}`);
  return [...requested];
}
