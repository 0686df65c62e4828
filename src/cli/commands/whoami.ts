// gatehouse whoami: who the token of gatehouse login speaks for, asked of the server (so a token
// the server no longer accepts, because the user was disabled or reset, says so).
import { parseOptions } from '../client/options.js';
import { printable } from '../client/printable.js';
import { ClientFailure, requestJson } from '../client/server.js';
import { liveLogin } from '../client/stored-login.js';

const ME = '{ me { kind id email display_name tenant_id roles } }';

export async function whoamiCommand(args: string[]): Promise<number> {
  const o = parseOptions(args, { url: { type: 'string' }, json: { type: 'boolean' } });
  const login = liveLogin(o.url);
  const res = await requestJson(`${login.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${login.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: ME }),
  });
  const firstError = () => {
    const errors = res.body.errors;
    const message = Array.isArray(errors) ? (errors[0] as { message?: unknown } | undefined)?.message : undefined;
    return typeof message === 'string' ? printable(message) : undefined;
  };
  if (res.status === 401) {
    const why = firstError();
    throw new ClientFailure(
      `${login.url} no longer accepts the token of ${login.username}${why ? ` (${why})` : ''}; run: gatehouse login --url ${login.url}`,
    );
  }
  const me = (res.body.data as { me?: Record<string, unknown> } | undefined)?.me;
  if (res.status !== 200 || typeof me !== 'object' || me === null) {
    const why = firstError();
    throw new ClientFailure(`${login.url} did not say who the token is (HTTP ${res.status}${why ? `: ${why}` : ''})`);
  }
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ url: login.url, ...me, expires_at: login.expires_at }, null, 2)}\n`);
    return 0;
  }
  const text = (value: unknown) => printable(String(value));
  const roles = Array.isArray(me.roles) ? me.roles.map(text).join(', ') : '';
  process.stdout.write(
    [
      `Server   ${login.url}`,
      `Account  ${text(me.email ?? me.id)}${me.display_name ? ` (${text(me.display_name)})` : ''}`,
      `Tenant   ${text(me.tenant_id)}`,
      `Roles    ${roles || 'none'}`,
      `Token    ${login.expires_at ? `works until ${login.expires_at}` : 'no expiry named (the server decides when it stops working)'}`,
      '',
    ].join('\n'),
  );
  return 0;
}
