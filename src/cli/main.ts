// `gatehouse <command>`: serve, migrate, --help. Configuration comes from the environment;
// a flag of the same name overrides it (--port 9000, --database-url …, --data-dir …).
import { ConfigError, flagsToVariables, loadConfig } from '../config.js';
import { migrateCommand } from './commands/migrate.js';
import { serveCommand } from './commands/serve.js';

export const HELP = `gatehouse: tenant management and API-credential service

Usage:
  gatehouse serve     start the service (migrates, bootstraps an empty database, listens)
  gatehouse migrate   apply database migrations and exit
  gatehouse --help    show this text

Configuration is read from the environment; a flag of the same name overrides it,
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
  GATEHOUSE_ENCRYPTION_KEY          32-byte key (hex or base64) sealing signing keys (key file in the data folder)
  GATEHOUSE_GRAPHQL_INTROSPECTION   answer introspection queries (false)
  GATEHOUSE_LAST_USED_FLUSH_SECONDS how often last-used times are written (30)
  GATEHOUSE_EXPIRY_CHECK_SECONDS    how often expired tenants are looked for (600)
  GATEHOUSE_TRUST_PROXY             believe X-Forwarded-For from: true, a hop count, or proxy addresses (false)
  LOG_LEVEL                         fatal error warn info debug trace silent (info)
`;

export async function main(argv: string[]): Promise<number> {
  const { vars, rest } = flagsToVariables(argv);
  const [command, ...extra] = rest;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined ? 1 : 0;
  }
  if (extra.length > 0) {
    process.stderr.write(`gatehouse: unexpected argument ${extra[0]}\n`);
    return 2;
  }
  let config;
  try {
    config = loadConfig(process.env, vars);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) process.stderr.write(`gatehouse: invalid configuration: ${problem}\n`);
      return 2;
    }
    throw err;
  }
  switch (command) {
    case 'serve':
      return serveCommand(config);
    case 'migrate':
      return migrateCommand(config);
    default:
      process.stderr.write(`gatehouse: unknown command ${command}; see gatehouse --help\n`);
      return 2;
  }
}
