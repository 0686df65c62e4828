// `gatehouse <command>`: serve, migrate, users; --help (also per command) and --version. Configuration
// comes from the environment; a flag of the same name overrides it (--port 9000, --database-url …).
// Every failure ends in one line on standard error and a non-zero exit code.
import { ConfigError, flagsToVariables, loadConfig, type Config, type Variable } from '../config.js';
import { loadVersionInfo } from '../version.js';
import { MIGRATE_SETTINGS, MIGRATE_USAGE, migrateCommand } from './commands/migrate.js';
import { SERVE_USAGE, serveCommand } from './commands/serve.js';
import { USERS_SETTINGS, USERS_USAGE, usersCommand } from './commands/users.js';
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
  gatehouse <command> --help   help on one command
  gatehouse --version          print the version
  gatehouse --help             show this text

From a checkout (npm ci), run it as: npx gatehouse <command>
`;

/** The configuration section of the help, generated from the table of settings. */
export const CONFIGURATION = configurationHelp();

export const HELP = `${USAGE}\n${CONFIGURATION}`;

interface Command {
  usage: string;
  /** the settings the command reads, which its help lists: all, or the ones named */
  settings: 'all' | readonly Variable[];
  /** whether words after the command name are its own (an action, options); else they are refused */
  takesArguments?: boolean;
  run(config: Config, args: string[]): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  serve: { usage: SERVE_USAGE, settings: 'all', run: serveCommand },
  migrate: { usage: MIGRATE_USAGE, settings: MIGRATE_SETTINGS, run: migrateCommand },
  users: { usage: USERS_USAGE, settings: USERS_SETTINGS, takesArguments: true, run: usersCommand },
};

const isHelp = (a: string) => a === '--help' || a === '-h';
const isVersion = (a: string) => a === '--version' || a === '-v';

export async function main(argv: string[]): Promise<number> {
  const { vars, rest } = flagsToVariables(argv);
  const words = rest.filter((a) => !isHelp(a) && !isVersion(a));
  const wantsHelp = rest.some(isHelp) || words[0] === 'help';
  if (words[0] === 'help') words.shift();
  const [name, ...extra] = words;
  if (name === undefined) {
    if (rest.some(isVersion) && !wantsHelp) {
      const v = loadVersionInfo();
      process.stdout.write(`gatehouse ${v.tag} (revision ${v.revision.slice(0, 12)}, built ${v.timestamp})\n`);
      return 0;
    }
    process.stdout.write(HELP);
    return wantsHelp ? 0 : 1;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    process.stderr.write(`gatehouse: unknown command ${name}; see gatehouse --help\n`);
    return 2;
  }
  if (wantsHelp) {
    process.stdout.write(`${command.usage}\n${command.settings === 'all' ? CONFIGURATION : settingsHelp(command.settings)}`);
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
  try {
    return await command.run(config, extra);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`gatehouse: ${err.message}; see gatehouse ${name} --help\n`);
      return 2;
    }
    // the command has closed what it opened; what is left is to say what happened
    process.stderr.write(`gatehouse: ${failureLine(err)}\n`);
    return 1;
  }
}
