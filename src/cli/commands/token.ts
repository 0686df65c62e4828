// gatehouse token: an access token on standard output, for scripts and curl. With an API client's
// id and secret it asks the token endpoint (client credentials); without, it prints the token of
// gatehouse login.
import { discover } from '../client/discovery.js';
import { CLIENT_ENVIRONMENT, parseOptions } from '../client/options.js';
import { printable } from '../client/printable.js';
import { ClientFailure, formBody, oauthError, requestJson, requiredServer, sentInClear } from '../client/server.js';
import { liveLogin } from '../client/stored-login.js';
import { UsageError } from '../usage-error.js';

export async function tokenCommand(args: string[]): Promise<number> {
  const o = parseOptions(args, {
    url: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    scope: { type: 'string' },
    json: { type: 'boolean' },
  });
  const clientId = o['client-id'] ?? process.env[CLIENT_ENVIRONMENT.clientId];
  const secret = o['client-secret'] ?? process.env[CLIENT_ENVIRONMENT.clientSecret];
  const out = (value: unknown) => process.stdout.write(`${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}\n`);

  if (!clientId) {
    if (o['client-secret']) throw new UsageError('--client-secret needs --client-id (or GATEHOUSE_CLIENT_ID)');
    if (o.scope) throw new UsageError('--scope applies to an API client: give --client-id');
    const login = liveLogin(o.url);
    // an expiry the server did not name is left out, not guessed
    const expiry = login.expires_at
      ? { expires_in: Math.max(0, Math.floor((Date.parse(login.expires_at) - Date.now()) / 1000)), expiry: login.expires_at }
      : {};
    out(o.json ? { access_token: login.access_token, token_type: login.token_type, ...expiry } : printable(login.access_token));
    return 0;
  }
  if (!secret) throw new UsageError(`the client secret is missing: set ${CLIENT_ENVIRONMENT.clientSecret} (or give --client-secret)`);
  const base = requiredServer(o.url);
  if (sentInClear(base)) process.stderr.write(`warning: ${base} is plain http; the secret and the token travel unencrypted. Use https://.\n`);
  const { token_endpoint } = await discover(base);
  const res = await requestJson(token_endpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}` },
    body: formBody({ grant_type: 'client_credentials', scope: o.scope }),
  });
  if (res.status !== 200 || typeof res.body.access_token !== 'string') {
    const { error, description } = oauthError(res.body);
    const hint =
      error === 'invalid_client'
        ? `check the client id and secret (${CLIENT_ENVIRONMENT.clientId}, ${CLIENT_ENVIRONMENT.clientSecret}); a rotated or deleted client's old secret stops working`
        : error === 'invalid_scope'
          ? 'name only roles the client holds, e.g. --scope Analyst'
          : 'see the description';
    throw new ClientFailure(`the server refused a token (${error}${description ? `: ${description}` : ''}); ${hint}`);
  }
  out(o.json ? res.body : printable(res.body.access_token));
  return 0;
}
