// `gatehouse <command>`: serve, migrate, users, audit, mail, sso, status; --help (also per command) and --version. Configuration
// comes from the environment; a flag of the same name overrides it (--port 9000, --database-url …).
// Every failure ends in one line on standard error and a non-zero exit code.
//
// A command's module is imported only when that command runs (the table below): help, the version
// and a usage error load none of them, so they answer in about the time Node takes to start
// (serve's module alone loads the whole service: Fastify, GraphQL, PGlite; about a second).
// Only the small modules imported here are loaded up front; test/cli/lazy-commands.test.ts keeps
// it so, and `npm run bench -- --only cli-start` measures it (docs/benchmarks.md).
import { ConfigError, flagsToVariables, loadConfig, type Config, type Variable } from '../config.js';
import { loadVersionInfo } from '../version.js';
import { ClientFailure } from './client/server.js';
import { configurationHelp, settingsHelp } from './config-help.js';
import { failureLine } from './failure-line.js';
import { UsageError } from './usage-error.js';
import {
  LOGIN_USAGE,
  LOGOUT_USAGE,
  MIGRATE_SETTINGS,
  MIGRATE_USAGE,
  SERVE_USAGE,
  TOKEN_USAGE,
  USERS_SETTINGS,
  KEYS_SETTINGS,
  KEYS_USAGE,
  MAIL_SETTINGS,
  MAIL_USAGE,
  AUDIT_SETTINGS,
  AUDIT_USAGE,
  SSO_SETTINGS,
  SSO_USAGE,
  STATUS_SETTINGS,
  STATUS_USAGE,
  USERS_USAGE,
  WHOAMI_USAGE,
} from './usage.js';

export const USAGE = `gatehouse: tenant management and API-credential service

Usage:
  gatehouse serve              start the service (migrates, bootstraps an empty
                               database, listens)
  gatehouse migrate            apply database migrations and exit
  gatehouse users <action>     manage the people who sign in (create, list,
                               disable, enable, reset, unlock), on the
                               database
  gatehouse keys <action>      the token-signing keys (list, rotate, retire
                               KID), on the database
  gatehouse audit export       write the audit trail as JSON lines (--since)
  gatehouse mail [show ID]     the mail sent and queued (the outbox folder
                               without SMTP: set-up links are there)
  gatehouse sso <action>       disable a connection, release a domain
  gatehouse status             migrations, signing keys, processes seen

  gatehouse login --url URL    sign this terminal in with your account (device
                               login: approve a code in a browser)
  gatehouse token              print an access token (of the login, or of an
                               API client by client credentials)
  gatehouse whoami             show who the login's token speaks for
  gatehouse logout             revoke the login's token, forget it here

  gatehouse <command> --help   help on one command
  gatehouse --version          print the version
  gatehouse --help             show this text

From a checkout (npm ci), run it as: npx gatehouse <command>
`;

/** Where the settings are: the general help lists none of them, since login, token, whoami and
 *  logout read none (each one's --help says what it reads). */
const SETTINGS = `Settings:
  The service (serve) is configured by environment variables, or flags of the
  same name (--port 9000): gatehouse serve --help lists them all, with their
  defaults; gatehouse migrate, users and keys --help list the few those
  read. login, token, whoami and logout read none of them.
`;

export const HELP = `${USAGE}\n${SETTINGS}`;

/** A command of the service's operator: it reads the service's configuration. */
interface Command {
  usage: string;
  /** the settings the command reads, which its help lists: all, or the ones named */
  settings: 'all' | readonly Variable[];
  /** whether words after the command name are its own (an action, options); else they are refused */
  takesArguments?: boolean;
  /** the command itself, imported when it runs */
  load(): Promise<(config: Config, args: string[]) => Promise<number>>;
}

/** A command of the service's users: a client of a running server, which reads no service
 *  configuration and parses its own options. */
interface ClientCommand {
  usage: string;
  client: true;
  /** the command itself, imported when it runs */
  load(): Promise<(args: string[]) => Promise<number>>;
}

/** Every command: its help, and where its code is (imported only when it runs). */
export const COMMANDS: Readonly<Record<string, Command | ClientCommand>> = {
  serve: { usage: SERVE_USAGE, settings: 'all', load: async () => (await import('./commands/serve.js')).serveCommand },
  migrate: { usage: MIGRATE_USAGE, settings: MIGRATE_SETTINGS, load: async () => (await import('./commands/migrate.js')).migrateCommand },
  users: {
    usage: USERS_USAGE,
    settings: USERS_SETTINGS,
    takesArguments: true,
    load: async () => (await import('./commands/users.js')).usersCommand,
  },
  keys: {
    usage: KEYS_USAGE,
    settings: KEYS_SETTINGS,
    takesArguments: true,
    load: async () => (await import('./commands/keys.js')).keysCommand,
  },
  audit: {
    usage: AUDIT_USAGE,
    settings: AUDIT_SETTINGS,
    takesArguments: true,
    load: async () => (await import('./commands/audit.js')).auditCommand,
  },
  mail: {
    usage: MAIL_USAGE,
    settings: MAIL_SETTINGS,
    takesArguments: true,
    load: async () => (await import('./commands/mail.js')).mailCommand,
  },
  sso: {
    usage: SSO_USAGE,
    settings: SSO_SETTINGS,
    takesArguments: true,
    load: async () => (await import('./commands/sso.js')).ssoCommand,
  },
  status: {
    usage: STATUS_USAGE,
    settings: STATUS_SETTINGS,
    takesArguments: true,
    load: async () => (await import('./commands/status.js')).statusCommand,
  },
  login: { usage: LOGIN_USAGE, client: true, load: async () => (await import('./commands/login.js')).loginCommand },
  token: { usage: TOKEN_USAGE, client: true, load: async () => (await import('./commands/token.js')).tokenCommand },
  whoami: { usage: WHOAMI_USAGE, client: true, load: async () => (await import('./commands/whoami.js')).whoamiCommand },
  logout: { usage: LOGOUT_USAGE, client: true, load: async () => (await import('./commands/logout.js')).logoutCommand },
};

const isHelp = (a: string) => a === '--help' || a === '-h';
const isVersion = (a: string) => a === '--version' || a === '-v';

/** The client commands' options that take a value: the word after one is that value, never a command name. */
const CLIENT_VALUE_OPTIONS: ReadonlySet<string> = new Set(['--url', '--username', '--client-id', '--client-secret', '--scope']);

/**
 * Where a client command is named, when its options may come before it (`gatehouse --url URL
 * login`, `gatehouse --json whoami`): the first word that is a client command's name and not the
 * value of a preceding option. Looking stops at the first other word (`serve`, `help`, the value
 * of a service setting such as `--port 9000`), which the service's rules below then read. -1 when
 * there is none.
 */
export function clientCommandIndex(argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (Object.hasOwn(COMMANDS, word) && 'client' in COMMANDS[word]!) return i;
    if (CLIENT_VALUE_OPTIONS.has(word)) i++;
    else if (!word.startsWith('-')) return -1;
  }
  return -1;
}

/** Where help, usage and the version are written (standard output), and refusals (standard error). */
export type Out = (text: string) => void;

/** What main() writes to and reads its configuration from; a test running it in its process gives
 *  its own (replacing process.stdout.write would also catch the test runner's own reports). */
export interface Io {
  /** help, usage and the version; by default standard output */
  out: Out;
  /** the one line of a refusal or a failure; by default standard error */
  err: Out;
  /** where the service's commands (serve, migrate, users) read their settings; by default
   *  process.env. The client commands read theirs from process.env. */
  env: NodeJS.ProcessEnv;
}

const STANDARD: Io = {
  out: (text) => {
    process.stdout.write(text);
  },
  err: (text) => {
    process.stderr.write(text);
  },
  get env() {
    return process.env;
  },
};

export async function main(argv: string[], io: Partial<Io> = {}): Promise<number> {
  const { out, err, env } = { ...STANDARD, ...io };
  const at = clientCommandIndex(argv);
  if (at >= 0) {
    const name = argv[at]!;
    const command = COMMANDS[name] as ClientCommand;
    // its own options, as typed: none of them is a setting of the service
    const args = argv.filter((_, i) => i !== at);
    if (args.some(isHelp)) {
      out(command.usage);
      return 0;
    }
    return await runReporting(name, err, async () => (await command.load())(args));
  }
  const { vars, rest } = flagsToVariables(argv);
  const words = rest.filter((a) => !isHelp(a) && !isVersion(a));
  const wantsHelp = rest.some(isHelp) || words[0] === 'help';
  if (words[0] === 'help') words.shift();
  const [name, ...extra] = words;
  if (name === undefined) {
    if (rest.some(isVersion) && !wantsHelp) {
      const v = loadVersionInfo();
      out(`gatehouse ${v.tag} (revision ${v.revision.slice(0, 12)}, built ${v.timestamp})\n`);
      return 0;
    }
    out(HELP);
    return wantsHelp ? 0 : 1;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    err(`gatehouse: unknown command ${name}; see gatehouse --help\n`);
    return 2;
  }
  if ('client' in command) {
    if (wantsHelp) {
      out(command.usage);
      return 0;
    }
    // its own options, as typed: none of them is a setting of the service
    const args = argv.filter((_, i) => i !== argv.indexOf(name));
    return await runReporting(name, err, async () => (await command.load())(args));
  }
  if (wantsHelp) {
    out(`${command.usage}\n${command.settings === 'all' ? configurationHelp() : settingsHelp(command.settings)}`);
    return 0;
  }
  if (extra.length > 0 && !command.takesArguments) {
    err(`gatehouse: unexpected argument ${extra[0]}; see gatehouse ${name} --help\n`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig(env, vars, { serving: name === 'serve' });
  } catch (e) {
    if (e instanceof ConfigError) {
      for (const problem of e.problems) err(`gatehouse: invalid configuration: ${problem}\n`);
      return 2;
    }
    throw e;
  }
  return await runReporting(name, err, async () => (await command.load())(config, extra));
}

/** Runs a command; a failure becomes one line on standard error and an exit code. */
async function runReporting(name: string, err: Out, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof UsageError) {
      err(`gatehouse: ${e.message}; see gatehouse ${name} --help\n`);
      return 2;
    }
    if (e instanceof ClientFailure) {
      err(`gatehouse ${name}: ${e.message}\n`);
      return 1;
    }
    // the command has closed what it opened; what is left is to say what happened
    err(`gatehouse: ${failureLine(e)}\n`);
    return 1;
  }
}
