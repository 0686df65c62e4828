// gatehouse logout: forgets the token of gatehouse login on this machine.
import { CONFIG_DIR_HELP, parseOptions } from '../client/options.js';
import { stillLoggedIn, storedLogin } from '../client/stored-login.js';

export const LOGOUT_USAGE = `Usage:
  gatehouse logout [--url URL]

Forgets the token that gatehouse login kept for --url (else for the server of
the last login). The token itself stays valid on the server until it expires;
to end every token of an account at once, an administrator resets its sign-in
(resetUserSignIn, or gatehouse users reset).

After logging out of the current server no login is current, even if others
are kept: the commands then need --url (or GATEHOUSE_URL) to pick one.

Options:
  --url URL   the server's address (or GATEHOUSE_URL)

Environment:
${CONFIG_DIR_HELP}
`;

export function logoutCommand(args: string[]): Promise<number> {
  return Promise.resolve(logout(args));
}

function logout(args: string[]): number {
  const o = parseOptions(args, { url: { type: 'string' } });
  const { file, login, named } = storedLogin(o.url);
  if (!login) {
    const others = file.servers();
    const what = named ? `Not logged in to ${named}` : others.length > 0 ? 'No current login' : 'Not logged in';
    process.stdout.write(`${what}; nothing to forget${others.length > 0 ? `; ${stillLoggedIn(others)}` : ''}.\n`);
    return 0;
  }
  file.remove(login.url);
  const others = file.servers();
  process.stdout.write(
    `Logged out of ${login.url} (${login.username}): the token is no longer kept on this machine.\n` +
      (others.length > 0 ? `Still logged in to: ${others.join(', ')}; use --url (or GATEHOUSE_URL) to pick one.\n` : ''),
  );
  return 0;
}
