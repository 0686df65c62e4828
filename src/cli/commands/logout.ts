// gatehouse logout: revokes the token of gatehouse login on the server (RFC 7009, as the public
// client gatehouse-cli), then forgets it on this machine. The local copy is removed whatever the
// server said: a server that cannot be reached, or that refuses, is reported on stderr with how
// long the token stays valid there, and the command still succeeds (the login is gone here).
import { CLI_CLIENT_ID } from '../client/device-login.js';
import { discover } from '../client/discovery.js';
import { parseOptions } from '../client/options.js';
import { ClientFailure, formBody, oauthError, requestJson } from '../client/server.js';
import type { StoredLogin } from '../client/credentials-file.js';
import { stillLoggedIn, storedLogin } from '../client/stored-login.js';

export async function logoutCommand(args: string[]): Promise<number> {
  const o = parseOptions(args, { url: { type: 'string' } });
  const { file, login, named } = storedLogin(o.url);
  if (!login) {
    const others = file.servers();
    const what = named ? `Not logged in to ${named}` : others.length > 0 ? 'No current login' : 'Not logged in';
    process.stdout.write(`${what}; nothing to forget${others.length > 0 ? `; ${stillLoggedIn(others)}` : ''}.\n`);
    return 0;
  }
  const revoked = await revokeOnServer(login);
  file.remove(login.url);
  const others = file.servers();
  process.stdout.write(
    `Logged out of ${login.url} (${login.username}): ${revoked === true ? 'the token was revoked on the server and ' : 'the token '}is no longer kept on this machine.\n` +
      (others.length > 0 ? `Still logged in to: ${others.join(', ')}; use --url (or GATEHOUSE_URL) to pick one.\n` : ''),
  );
  if (revoked !== true) process.stderr.write(`warning: ${revoked}\n`);
  return 0;
}

/** true once the server has revoked the token; else why not, as a sentence for the user. */
async function revokeOnServer(login: StoredLogin): Promise<true | string> {
  const until = login.expires_at !== undefined ? `until ${login.expires_at}` : 'until it expires';
  if (login.expires_at !== undefined && Date.parse(login.expires_at) <= Date.now())
    return `the token had already expired (${login.expires_at}); nothing to revoke`;
  try {
    const metadata = await discover(login.url);
    if (!metadata.revocation_endpoint) {
      return `${login.url} offers no token revocation (its metadata names no revocation_endpoint): the token stays valid there ${until}`;
    }
    const res = await requestJson(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: formBody({ token: login.access_token, token_type_hint: 'access_token', client_id: CLI_CLIENT_ID }),
    });
    if (res.status === 200) return true;
    const { error, description } = oauthError(res.body);
    return `${login.url} refused to revoke the token (HTTP ${res.status}, ${error}${description ? `: ${description}` : ''}): it stays valid there ${until}`;
  } catch (err) {
    if (err instanceof ClientFailure) return `could not revoke the token on the server: ${err.message}. The token stays valid there ${until}`;
    throw err;
  }
}
