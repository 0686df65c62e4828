// The login a command acts on: the one for --url (or GATEHOUSE_URL), else the current one; with
// the words to say when there is none, or when its token has run out.
import { CLIENT_ENVIRONMENT } from './options.js';
import { CredentialsFile, type StoredLogin } from './credentials-file.js';
import { ClientFailure, namedServer } from './server.js';

export function storedLogin(url: string | undefined): { file: CredentialsFile; login: StoredLogin | undefined; named: string | undefined } {
  const file = new CredentialsFile();
  const named = namedServer(url);
  if (file.readableByOthers()) process.stderr.write(`warning: ${file.path} is readable by other users; run: chmod 600 ${shellQuoted(file.path)}\n`);
  return { file, login: file.find(named), named };
}

/** The stored login, still valid by its expiry time if it has one; otherwise a failure saying how to log in. */
export function liveLogin(url: string | undefined): StoredLogin {
  const { file, login, named } = storedLogin(url);
  if (!login) {
    const others = named === undefined ? file.servers() : [];
    if (others.length > 0) throw new ClientFailure(`no current login (you logged out of it); ${stillLoggedIn(others)}`);
    throw new ClientFailure(`not logged in${named ? ` to ${named}` : ''}; run: gatehouse login --url ${named ?? 'URL'}`);
  }
  if (login.expires_at !== undefined && Date.parse(login.expires_at) <= Date.now()) {
    throw new ClientFailure(`the token for ${login.url} expired at ${login.expires_at}; run: gatehouse login --url ${login.url}`);
  }
  return login;
}

/** The logins kept for other servers, and how to use one. */
export function stillLoggedIn(servers: string[]): string {
  return `still logged in to: ${servers.join(', ')}; use --url (or ${CLIENT_ENVIRONMENT.url}) to pick one`;
}

/** A path as one word for a POSIX shell: in single quotes, each embedded ' written as '\''. */
export function shellQuoted(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}
