// Where `gatehouse login` keeps what it obtained: one file in the user's configuration folder,
// readable by its owner only (mode 0600, in a folder of mode 0700), holding the last login per
// server and which server is current. Written whole under a fresh random name (created, never
// reused or followed through a link) and renamed into place, so a reader never sees half a file.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ClientFailure } from './server.js';

export interface StoredLogin {
  /** the server, as normalised by serverUrl() */
  url: string;
  /** the account named at login (the e-mail address) */
  username: string;
  access_token: string;
  token_type: string;
  /** ISO time at which the token stops working; absent when neither the server nor the token said */
  expires_at?: string;
  /** ISO time of the login */
  obtained_at: string;
}

interface FileShape {
  version: 1;
  current?: string;
  logins: Record<string, StoredLogin>;
}

export const CONFIG_DIR_VARIABLE = 'GATEHOUSE_CONFIG_DIR';

/** The configuration folder: GATEHOUSE_CONFIG_DIR, else the platform's place for it. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env[CONFIG_DIR_VARIABLE]) return env[CONFIG_DIR_VARIABLE];
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'gatehouse');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'gatehouse');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'gatehouse');
}

export class CredentialsFile {
  readonly path: string;

  constructor(readonly dir: string = configDir()) {
    this.path = join(dir, 'credentials.json');
  }

  /** The stored login for a server, or for the current one when none is named. */
  find(url?: string): StoredLogin | undefined {
    const file = this.read();
    const key = url ?? file.current;
    return key !== undefined && Object.hasOwn(file.logins, key) ? file.logins[key] : undefined;
  }

  /** The servers with a stored login. */
  servers(): string[] {
    return Object.keys(this.read().logins);
  }

  save(login: StoredLogin): void {
    const file = this.read();
    file.logins[login.url] = login;
    file.current = login.url;
    this.write(file);
  }

  /** Forgets the login for a server (the current one when none is named); what was removed.
   *  Forgetting the current login leaves none current: the next command names its server. */
  remove(url?: string): StoredLogin | undefined {
    const file = this.read();
    const key = url ?? file.current;
    if (key === undefined || !Object.hasOwn(file.logins, key)) return undefined;
    const found = file.logins[key];
    delete file.logins[key];
    if (file.current === key) delete file.current;
    if (Object.keys(file.logins).length === 0) rmSync(this.path, { force: true });
    else this.write(file);
    return found;
  }

  private read(): FileShape {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, logins: {} };
      throw new ClientFailure(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!isFileShape(parsed)) throw new ClientFailure(`${this.path} is not a file gatehouse wrote; remove it and run gatehouse login again`);
    return parsed;
  }

  private write(file: FileShape): void {
    this.secureDir();
    const temporary = join(this.dir, `.credentials.${randomBytes(12).toString('hex')}.tmp`);
    // 'wx': created here, never an existing file or a link planted under that name; mode 0600
    // from the start (the umask may only take bits away)
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    try {
      renameSync(temporary, this.path);
    } catch (err) {
      rmSync(temporary, { force: true });
      throw err;
    }
  }

  /** Creates the folder (mode 0700), or makes an existing one the owner's only: a folder others
   *  may enter or write to lets them read or replace the file. One owned by someone else, and
   *  open to others, is refused. */
  private secureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (process.platform === 'win32') return;
    const { mode, uid } = statSync(this.dir);
    if ((mode & 0o077) === 0) return;
    if (uid !== process.getuid?.()) {
      throw new ClientFailure(
        `${this.dir} is open to other users (mode ${(mode & 0o777).toString(8)}) and belongs to someone else, so gatehouse will not keep a token there; set ${CONFIG_DIR_VARIABLE} to a folder of your own`,
      );
    }
    chmodSync(this.dir, 0o700);
  }

  /** Whether others than the owner may read the file (someone loosened it). */
  readableByOthers(): boolean {
    try {
      return process.platform !== 'win32' && (statSync(this.path).mode & 0o077) !== 0;
    } catch {
      return false;
    }
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';

/** The file as gatehouse writes it: version 1, a login per server (each under its own address), and a current one among them, if any. */
function isFileShape(value: unknown): value is FileShape {
  if (!isRecord(value) || value.version !== 1 || !isRecord(value.logins)) return false;
  const logins = value.logins;
  for (const key of Object.keys(logins)) {
    const login = logins[key];
    if (!isRecord(login) || login.url !== key) return false;
    if (![login.username, login.access_token, login.token_type, login.obtained_at].every(isString)) return false;
    if (Object.hasOwn(login, 'expires_at') && !isString(login.expires_at)) return false;
  }
  return value.current === undefined || (isString(value.current) && Object.hasOwn(logins, value.current));
}
