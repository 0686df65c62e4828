// `gatehouse <command>`: serve, migrate; --help (also per command) and --version. Configuration
// comes from the environment; a flag of the same name overrides it (--port 9000, --database-url …).
// Every failure ends in one line on standard error and a non-zero exit code.
import { ConfigError, flagsToVariables, loadConfig, type Config } from '../config.js';
import { loadVersionInfo } from '../version.js';
import { MIGRATE_USAGE, migrateCommand } from './commands/migrate.js';
import { SERVE_USAGE, serveCommand } from './commands/serve.js';
import { failureLine } from './failure-line.js';

export const USAGE = `gatehouse: tenant management and API-credential service

Usage:
  gatehouse serve              start the service (migrates, bootstraps an empty database, listens)
  gatehouse migrate            apply database migrations and exit
  gatehouse <command> --help   help on one command
  gatehouse --version          print the version
  gatehouse --help             show this text

From a checkout (npm ci), run it as: npx gatehouse <command>
`;

export const CONFIGURATION = `Configuration is read from the environment; a flag of the same name overrides it,
e.g. --port 9000 (PORT), --database-url URL (DATABASE_URL), --data-dir DIR (GATEHOUSE_DATA_DIR).

  PORT                              listen port (8080)
  HOST                              listen address (127.0.0.1)
  DATABASE_URL                      PostgreSQL connection string; unset: embedded PGlite
  GATEHOUSE_DATA_DIR                embedded database folder (./data)
  GATEHOUSE_REGION                  us1 us2 us3 eu1 eu2 (us1)
  GATEHOUSE_BASE_URL                public address; the token issuer (http://HOST:PORT)
  GATEHOUSE_TENANTS_URL             public address of the tenant interface (base URL)
  GATEHOUSE_TOKEN_TTL               access-token lifetime, seconds (36000)
  GATEHOUSE_CLIENT_CREATE_LIMIT     createClient calls per tenant per hour (10)
  GATEHOUSE_EXPIRY_GRACE_DAYS       days after expires_at before a tenant is disabled (60)
  GATEHOUSE_SSO_ALLOW_PRIVATE_URLS  allow private IdP metadata URLs (false)
  GATEHOUSE_VENDOR_NAME             name of the root tenant (Vendor)
  GATEHOUSE_BOOTSTRAP_CLIENT_ID / _CLIENT_SECRET    first admin API client (generated)
  GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL / _ADMIN_PASSWORD first admin user (generated)
  GATEHOUSE_ENCRYPTION_KEY          sealing key, 64 hex digits (openssl rand -hex 32); a comma list rotates (first seals);
                                    required with DATABASE_URL (PGlite: a key file in the data folder)
  GATEHOUSE_GRAPHQL_INTROSPECTION   introspection and "did you mean" hints for authenticated callers (true)
  GATEHOUSE_LAST_USED_FLUSH_SECONDS how often last-used times are written (30)
  GATEHOUSE_EXPIRY_CHECK_SECONDS    how often expired tenants are looked for (600)
  GATEHOUSE_TRUST_PROXY             believe X-Forwarded-For from: true, a hop count, or proxy addresses (false)
  GATEHOUSE_METRICS_PORT            serve /metrics on this port only, on HOST (unset: /metrics is not served)
  LOG_LEVEL                         fatal error warn info debug trace silent (info)
`;

export const HELP = `${USAGE}\n${CONFIGURATION}`;

interface Command {
  usage: string;
  /** whether the command reads the whole configuration (its help then lists it) */
  listsConfiguration: boolean;
  run(config: Config): Promise<number>;
}

const COMMANDS: Record<string, Command> = {
  serve: { usage: SERVE_USAGE, listsConfiguration: true, run: serveCommand },
  migrate: { usage: MIGRATE_USAGE, listsConfiguration: false, run: migrateCommand },
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
    process.stdout.write(command.listsConfiguration ? `${command.usage}\n${CONFIGURATION}` : command.usage);
    return 0;
  }
  if (extra.length > 0) {
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
    return await command.run(config);
  } catch (err) {
    // the command has closed what it opened; what is left is to say what happened
    process.stderr.write(`gatehouse: ${failureLine(err)}\n`);
    return 1;
  }
}
