// gatehouse logout: forgets the token of gatehouse login on this machine.
import { parseOptions } from '../client/options.js';
import { stillLoggedIn, storedLogin } from '../client/stored-login.js';

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
