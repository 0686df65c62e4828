// `gatehouse <command>`: serve, migrate, users; --help (also per command) and --version. Configuration
// comes from the environment; a flag of the same name overrides it (--port 9000, --database-url …).
// Every failure ends in one line on standard error and a non-zero exit code.
import { ConfigError, flagsToVariables, loadConfig, type Config, type Variable } from '../config.js';
import { loadVersionInfo } from '../version.js';
import { MIGRATE_SETTINGS, MIGRATE_USAGE, migrateCommand } from './commands/migrate.js';
import { SERVE_USAGE, serveCommand } from './commands/serve.js';
import { USERS_SETTINGS, USERS_USAGE, usersCommand } from './commands/users.js';
import { LOGIN_USAGE, loginCommand } from './commands/login.js';
import { LOGOUT_USAGE, logoutCommand } from './commands/logout.js';
import { TOKEN_USAGE, tokenCommand } from './commands/token.js';
import { WHOAMI_USAGE, whoamiCommand } from './commands/whoami.js';
import { ClientFailure } from './client/server.js';
import { configurationHelp, settingsHelp } from './config-help.js';
import { failureLine } from './failure-line.js';
import { UsageError } from './usage-error.js';

export const USAGE = `gatehouse: tenant management and API-credential service

Usage:
  gatehouse serve              start the service (migrates, bootstraps an empty
                               database, listens)
  gatehouse migrate            apply database migrations and exit
  gatehouse users <action>     manage the people who sign in (create, list,
                               disable, enable, reset), on the database

  gatehouse login --url URL    sign this terminal in with your account (device
                               login: approve a code in a browser)
  gatehouse token              print an access token (of the login, or of an
                               API client by client credentials)
  gatehouse whoami             show who the login's token speaks for
  gatehouse logout             forget the login's token on this machine

  gatehouse <command> --help   help on one command
  gatehouse --version          print the version
  gatehouse --help             show this text

From a checkout (npm ci), run it as: npx gatehouse <command>
`;

/** The configuration section of `serve --help`, generated from the table of settings. */
export const CONFIGURATION = configurationHelp();

/** Where the settings are: the general help lists none of them, since login, token, whoami and
 *  logout read none (each one's --help says what it reads). */
const SETTINGS = `Settings:
  The service (serve) is configured by environment variables, or flags of the
  same name (--port 9000): gatehouse serve --help lists them all, with their
  defaults; gatehouse migrate --help and gatehouse users --help list the few
  those read. login, token, whoami and logout read none of them.
`;

export const HELP = `${USAGE}\n${SETTINGS}`;

/** A command of the service's operator: it reads the service's configuration. */
interface Command {
  usage: string;
  /** the settings the command reads, which its help lists: all, or the ones named */
  settings: 'all' | readonly Variable[];
  /** whether words after the command name are its own (an action, options); else they are refused */
  takesArguments?: boolean;
  run(config: Config, args: string[]): Promise<number>;
}

/** A command of the service's users: a client of a running server, which reads no service
 *  configuration and parses its own options. */
interface ClientCommand {
  usage: string;
  client: true;
  run(args: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command | ClientCommand> = {
  serve: { usage: SERVE_USAGE, settings: 'all', run: serveCommand },
  migrate: { usage: MIGRATE_USAGE, settings: MIGRATE_SETTINGS, run: migrateCommand },
  users: { usage: USERS_USAGE, settings: USERS_SETTINGS, takesArguments: true, run: usersCommand },
  login: { usage: LOGIN_USAGE, client: true, run: loginCommand },
  token: { usage: TOKEN_USAGE, client: true, run: tokenCommand },
  whoami: { usage: WHOAMI_USAGE, client: true, run: whoamiCommand },
  logout: { usage: LOGOUT_USAGE, client: true, run: logoutCommand },
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

/** Where help, usage and the version are written (standard output; a test may take them). */
export type Out = (text: string) => void;
const toStdout: Out = (text) => {
  process.stdout.write(text);
};

export async function main(argv: string[], out: Out = toStdout): Promise<number> {
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
    return await runReporting(name, () => command.run(args));
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
    process.stderr.write(`gatehouse: unknown command ${name}; see gatehouse --help\n`);
    return 2;
  }
  if ('client' in command) {
    if (wantsHelp) {
      out(command.usage);
      return 0;
    }
    // its own options, as typed: none of them is a setting of the service
    return await runReporting(name, () => command.run(argv.filter((_, i) => i !== argv.indexOf(name))));
  }
  if (wantsHelp) {
    out(`${command.usage}\n${command.settings === 'all' ? CONFIGURATION : settingsHelp(command.settings)}`);
    return 0;
  }
  if (extra.length > 0 && !command.takesArguments) {
    process.stderr.write(`gatehouse: unexpected argument ${extra[0]}; see gatehouse ${name} --help\n`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig(process.env, vars, { serving: name === 'serve' });
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) process.stderr.write(`gatehouse: invalid configuration: ${problem}\n`);
      return 2;
    }
    throw err;
  }
  return await runReporting(name, () => command.run(config, extra));
}

/** Runs a command; a failure becomes one line on standard error and an exit code. */
async function runReporting(name: string, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`gatehouse: ${err.message}; see gatehouse ${name} --help\n`);
      return 2;
    }
    if (err instanceof ClientFailure) {
      process.stderr.write(`gatehouse ${name}: ${err.message}\n`);
      return 1;
    }
    // the command has closed what it opened; what is left is to say what happened
    process.stderr.write(`gatehouse: ${failureLine(err)}\n`);
    return 1;
  }
}
