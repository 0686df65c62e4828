// Every setting of Gatehouse, declared once: its key in the Config object, its environment
// variable, the kind of value it takes, its default, what it is for, and whether it is a secret.
// The Config type is derived from this table; loadConfig (src/config.ts) parses and validates by
// it; `gatehouse serve --help` (src/cli/config-help.ts) and the README's configuration table
// (scripts/gen-config-docs.ts, `npm run docs`) are generated from it, and
// test/docs/config-docs.test.ts fails when the README differs.
//
// Text meant for people (description, note, defaults shown, rules' docs) is Markdown of the
// lightest kind: backticks for literals, **bold**, [links](…); the help prints it plain.
import { nameProblem, TEXT_LIMITS } from '../text.js';
import {
  boolean,
  dnsServers,
  encryptionKeys,
  httpUrl,
  integer,
  type Kind,
  MAKE_KEY,
  oneOf,
  type Parsed,
  postgresUrl,
  text,
  trustProxy,
} from './kinds.js';

export const REGIONS = ['us1', 'us2', 'us3', 'eu1', 'eu2'] as const;
export type Region = (typeof REGIONS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

interface About<V extends string> {
  /** the environment variable; a flag of the same name overrides it (--port, --data-dir) */
  variable: V;
  /** one line: what the setting is for */
  description: string;
  /** what the line, the kind and the default cannot say (README only) */
  note?: string;
  /** an example value (README only) */
  example?: string;
  /** the value may hold a credential: no message repeats it */
  secret?: boolean;
}

/** One row of the table: `T` is the type of its value in Config, `V` its variable. */
export interface Setting<T = unknown, V extends string = string> extends About<V> {
  /** the accepted values, in words */
  accepts: string;
  parse(raw: string): Parsed<T>;
  /** how the default reads in the help and the README */
  shownDefault: string;
  /** the value when the variable is unset or empty; `derived` rows get theirs from DERIVED_DEFAULTS */
  fallback: { value: T } | 'derived';
}

/** A setting with a fixed default (shown as the value unless `shown` says otherwise). */
function setting<T, const V extends string>(s: About<V> & { kind: Kind<T>; default: NoInfer<T>; shown?: string }): Setting<T, V> {
  const { kind, default: value, shown, ...about } = s;
  return { ...about, accepts: kind.accepts, parse: kind.parse, shownDefault: shown ?? `\`${String(value)}\``, fallback: { value } };
}

/** A setting that may stay unset (its value is then undefined); `unset` says what that means. */
function optional<T, const V extends string>(s: About<V> & { kind: Kind<T>; unset: string }): Setting<T | undefined, V> {
  const { kind, unset, ...about } = s;
  return { ...about, accepts: kind.accepts, parse: kind.parse, shownDefault: unset, fallback: { value: undefined } };
}

/** A setting whose default is computed from settings above it (DERIVED_DEFAULTS); `shown` says how. */
function derived<T, const V extends string>(s: About<V> & { kind: Kind<T>; shown: string }): Setting<T, V> & { fallback: 'derived' } {
  const { kind, shown, ...about } = s;
  return { ...about, accepts: kind.accepts, parse: kind.parse, shownDefault: shown, fallback: 'derived' };
}

/** The table. Its order is the order of the help, the README and the problems reported. */
export const SETTINGS = {
  port: setting({ variable: 'PORT', kind: integer(0, 65535), default: 8080, description: 'listen port' }),
  host: setting({
    variable: 'HOST',
    kind: text('an IP address or host name of this machine'),
    default: '127.0.0.1',
    description: 'listen address',
    note: 'containers set `0.0.0.0` (every interface)',
  }),
  databaseUrl: optional({
    variable: 'DATABASE_URL',
    kind: postgresUrl,
    unset: 'unset: embedded PGlite',
    description: 'PostgreSQL connection string; unset means the embedded database (PGlite) in the data folder',
    example: 'postgres://gatehouse:PASSWORD@db:5432/gatehouse',
    secret: true,
  }),
  databaseConnectTimeoutSeconds: setting({
    variable: 'GATEHOUSE_DATABASE_CONNECT_TIMEOUT_SECONDS',
    kind: integer(1, 60),
    default: 5,
    description: 'PostgreSQL: seconds to wait for a new connection before the request is answered 503 (the database unavailable) or a start fails',
  }),
  allowNonDurableDatabase: setting({
    variable: 'GATEHOUSE_ALLOW_NON_DURABLE_DATABASE',
    kind: boolean,
    default: false,
    description: '`serve`: start on a PostgreSQL server with `fsync` or `synchronous_commit` off',
    note: 'for throwaway test databases only: such a server acknowledges commits it can lose in a crash, a revocation among them ([docs/operations.md](docs/operations.md#durability))',
  }),
  dataDir: setting({
    variable: 'GATEHOUSE_DATA_DIR',
    kind: text('a folder path'),
    default: './data',
    description: 'embedded database folder',
    note: 'also holds, without `GATEHOUSE_ENCRYPTION_KEY`, the generated key file; held by one process at a time ([the lock](docs/operations.md#the-data-folder-lock))',
  }),
  region: setting({
    variable: 'GATEHOUSE_REGION',
    kind: oneOf(REGIONS),
    default: 'us1',
    description: 'region the tokens and credentials are bound to',
  }),
  baseUrl: derived({
    variable: 'GATEHOUSE_BASE_URL',
    kind: httpUrl,
    shown: '`http://HOST:PORT`',
    description: 'public address of the base interfaces; the token issuer',
    note: 'a trailing `/` is dropped; with `HOST` `0.0.0.0` or `::` the default uses `127.0.0.1`',
    example: 'https://auth.example.com',
  }),
  tenantsUrl: derived({
    variable: 'GATEHOUSE_TENANTS_URL',
    kind: httpUrl,
    shown: 'the base URL',
    description: 'public address of the tenant interface',
    note: 'validated; not used by anything yet',
  }),
  tokenTtlSeconds: setting({
    variable: 'GATEHOUSE_TOKEN_TTL',
    kind: integer(60, 7 * 24 * 3600),
    default: 36000,
    description: 'access-token lifetime, seconds',
  }),
  signingKeyRotateDays: setting({
    variable: 'GATEHOUSE_SIGNING_KEY_ROTATE_DAYS',
    kind: integer(0, 3650),
    default: 90,
    description:
      'days a token-signing key signs before its successor takes over (the successor is published GATEHOUSE_SIGNING_KEY_PREPUBLISH_HOURS before); 0: no automatic rotation ([docs/tokens.md](docs/tokens.md#signing-keys))',
  }),
  signingKeyPrepublishHours: setting({
    variable: 'GATEHOUSE_SIGNING_KEY_PREPUBLISH_HOURS',
    kind: integer(0, 720),
    default: 24,
    description:
      "hours a new signing key is in the JWKS before it signs, so that resource servers' cached key sets hold it (`gatehouse keys rotate` and the automatic rotation)",
  }),
  clientCreateLimit: setting({
    variable: 'GATEHOUSE_CLIENT_CREATE_LIMIT',
    kind: integer(1, 1_000_000),
    default: 10,
    description: '`createClient` calls per tenant per rolling hour',
  }),
  userSetupTtlSeconds: setting({
    variable: 'GATEHOUSE_USER_SETUP_TTL',
    kind: integer(300, 30 * 86_400),
    default: 259_200,
    description: "how long a new user's one-time set-up link works, in seconds (3 days)",
  }),
  passwordResetTtlSeconds: setting({
    variable: 'GATEHOUSE_PASSWORD_RESET_TTL',
    kind: integer(300, 86_400),
    default: 1800,
    description: "how long a password reset link (mailed from the sign-in page's 'Forgot your password?') works, in seconds (30 minutes)",
  }),
  sessionIdleSeconds: setting({
    variable: 'GATEHOUSE_SESSION_IDLE',
    kind: integer(60, 7 * 86_400),
    default: 1800,
    description: 'a browser session not used for this many seconds ends (30 minutes)',
  }),
  sessionMaxSeconds: setting({
    variable: 'GATEHOUSE_SESSION_MAX',
    kind: integer(300, 30 * 86_400),
    default: 43_200,
    description: 'a browser session ends this many seconds after sign-in, however busy (12 hours)',
  }),
  expiryGraceDays: setting({
    variable: 'GATEHOUSE_EXPIRY_GRACE_DAYS',
    kind: integer(0, 3650),
    default: 60,
    description: 'days after `expires_at` at which a tenant is disabled',
  }),
  auditRetentionDays: setting({
    variable: 'GATEHOUSE_AUDIT_RETENTION_DAYS',
    kind: integer(1, 36500),
    default: 365,
    description:
      'days an audit event is kept, then purged (a year: an incident found months later can still be traced, and a yearly review sees the whole year; export to a SIEM with `gatehouse audit export` to keep longer)',
  }),
  expiryCheckSeconds: setting({
    variable: 'GATEHOUSE_EXPIRY_CHECK_SECONDS',
    kind: integer(10, 86400),
    default: 600,
    description: 'seconds between runs of the tenant-expiry job',
  }),
  ssoAllowPrivateUrls: setting({
    variable: 'GATEHOUSE_SSO_ALLOW_PRIVATE_URLS',
    kind: boolean,
    default: false,
    description: 'allow IdP metadata URLs and sign-in endpoints on loopback/private addresses, over http too',
    note: 'for development and tests only: it lets a tenant Administrator make this service fetch internal URLs ([docs/sso.md](docs/sso.md#fetching-metadata))',
  }),
  ssoMetadataRefreshHours: setting({
    variable: 'GATEHOUSE_SSO_METADATA_REFRESH_HOURS',
    kind: integer(1, 720),
    default: 24,
    description: 'how often the metadata URL of each SSO connection configured by one is read again, in hours',
  }),
  dnsServers: optional({
    variable: 'GATEHOUSE_DNS_SERVERS',
    kind: dnsServers,
    unset: "unset: the system's resolvers",
    description: 'the DNS servers asked for the TXT records that prove SSO domains ([docs/sso.md](docs/sso.md))',
    example: '1.1.1.1,8.8.8.8:53',
  }),
  ssoDomainRecheckHours: setting({
    variable: 'GATEHOUSE_SSO_DOMAIN_RECHECK_HOURS',
    kind: integer(1, 720),
    default: 24,
    description: "how often a proven SSO domain's TXT record is checked again, in hours",
  }),
  ssoDomainGraceHours: setting({
    variable: 'GATEHOUSE_SSO_DOMAIN_GRACE_HOURS',
    kind: integer(1, 720),
    default: 72,
    description: 'how long a proven SSO domain whose TXT record is no longer found keeps routing before it is lost, in hours',
  }),
  vendorName: setting({
    variable: 'GATEHOUSE_VENDOR_NAME',
    kind: text(`a tenant name: 1 to ${TEXT_LIMITS.name} visible characters ([docs/text-rules.md](docs/text-rules.md))`, (raw) => {
      const problem = nameProblem(raw);
      return problem && `${problem} (it names tenant 1; see docs/text-rules.md)`;
    }),
    default: 'Vendor',
    description: 'name of the root tenant (tenant 1) created on first start',
  }),
  bootstrap: {
    clientId: optional({
      variable: 'GATEHOUSE_BOOTSTRAP_CLIENT_ID',
      kind: text('3 to 128 characters of `A-Z a-z 0-9 . _ ~ -`', (raw) =>
        /^[A-Za-z0-9._~-]{3,128}$/.test(raw) ? undefined : 'must be 3 to 128 characters of A-Z a-z 0-9 . _ ~ -',
      ),
      unset: 'generated',
      description: 'client_id of the first Administrator API client',
      note: 'read on first start only (an empty database); a generated client_id and secret are printed once',
    }),
    clientSecret: optional({
      variable: 'GATEHOUSE_BOOTSTRAP_CLIENT_SECRET',
      kind: text('32 to 256 characters', (raw) => (raw.length >= 32 && raw.length <= 256 ? undefined : 'must be 32 to 256 characters')),
      unset: 'generated',
      description: 'secret of the first Administrator API client',
      note: 'read on first start only',
      secret: true,
    }),
    adminEmail: optional({
      variable: 'GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL',
      kind: text(`an e-mail address of at most ${TEXT_LIMITS.email} characters`, (raw) =>
        /^[^\s@]+@[^\s@]+$/.test(raw) && raw.length <= TEXT_LIMITS.email
          ? undefined
          : `must be an e-mail address of at most ${TEXT_LIMITS.email} characters`,
      ),
      // the value bootstrap (src/bootstrap/bootstrap.ts, DEFAULT_ADMIN_EMAIL) uses when unset
      unset: '`admin@gatehouse.local`',
      description: 'e-mail address of the first Administrator user',
      note: 'read on first start only',
    }),
    adminPassword: optional({
      variable: 'GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD',
      kind: text('at least 12 characters', (raw) => (raw.length >= 12 ? undefined : 'must be at least 12 characters')),
      unset: 'generated',
      description: 'password of the first Administrator user',
      note: 'read on first start only; a generated password is printed once',
      secret: true,
    }),
  },
  encryptionKeys: setting({
    variable: 'GATEHOUSE_ENCRYPTION_KEY',
    kind: encryptionKeys,
    default: [],
    shown: 'a key file in the data folder (PGlite only)',
    description: 'key sealing the token-signing keys; a list rotates it (the first seals, every one unseals)',
    note: 'rotation and the key file: [docs/operations.md](docs/operations.md#sealing-key)',
    secret: true,
  }),
  metricsPort: optional({
    variable: 'GATEHOUSE_METRICS_PORT',
    kind: integer(1, 65535),
    unset: 'unset: `/metrics` is not served',
    description: 'serve `/metrics` on this port (on `HOST`) only, never on the public listener',
  }),
  smtpUrl: optional({
    variable: 'GATEHOUSE_SMTP_URL',
    kind: text(
      'an `smtp://` (STARTTLS when the server offers it) or `smtps://` (TLS from the start) URL, with `user:password@` if the server asks',
      (raw) => {
        let url: URL;
        try {
          url = new URL(raw);
        } catch {
          return 'must be a URL such as smtp://user:password@mail.example.com:587 or smtps://mail.example.com:465';
        }
        if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return 'must begin with smtp:// or smtps://';
        return url.hostname === '' ? 'must name the mail server (smtp://HOST:PORT)' : undefined;
      },
    ),
    unset: 'unset: the outbox folder',
    description: 'the mail server that sends invitations and other mail',
    example: 'smtp://gatehouse:PASSWORD@mail.example.com:587',
    note: 'unset: every message is written to the `outbox` folder of the data folder, which `gatehouse mail` reads, and set-up links are also shown to the administrator (they prove no address): [docs/users.md](docs/users.md#invitations-and-proven-addresses)',
    secret: true,
  }),
  mailFrom: optional({
    variable: 'GATEHOUSE_MAIL_FROM',
    kind: text('an e-mail address, optionally with a name (`Acme Sign-in <no-reply@acme.example>`)', (raw) =>
      /^[^<>@\s]+@[^<>@\s]+$|<[^<>@\s]+@[^<>@\s]+>$/.test(raw.trim()) ? undefined : 'must be an address such as no-reply@example.com',
    ),
    unset: '`no-reply@` the host of `GATEHOUSE_BASE_URL`',
    description: 'the From address of the mail the service sends',
  }),
  mailReplyTo: optional({
    variable: 'GATEHOUSE_MAIL_REPLY_TO',
    kind: text('an e-mail address', (raw) =>
      /^[^<>@\s]+@[^<>@\s]+$/.test(raw.trim()) ? undefined : 'must be an address such as support@example.com',
    ),
    unset: 'unset: no Reply-To',
    description: 'the Reply-To address of the mail the service sends',
  }),
  graphqlIntrospection: setting({
    variable: 'GATEHOUSE_GRAPHQL_INTROSPECTION',
    kind: boolean,
    default: true,
    description: 'introspection, and "did you mean" hints in errors, for authenticated callers',
    note: '`false` turns both off',
  }),
  graphqlCostPerMinute: setting({
    variable: 'GATEHOUSE_GRAPHQL_COST_PER_MINUTE',
    kind: integer(0, 1_000_000_000),
    default: 300_000,
    description: 'GraphQL: the cost one API client or user may spend per minute (a cost is the objects a query can return, estimated before it runs)',
    note: 'over it: 429 `RATE_LIMITED` with Retry-After; `0`: no budget per caller; per process ([docs/graphql.md](docs/graphql.md#cost-and-budgets))',
  }),
  graphqlTenantCostPerMinute: setting({
    variable: 'GATEHOUSE_GRAPHQL_TENANT_COST_PER_MINUTE',
    kind: integer(0, 1_000_000_000),
    default: 1_000_000,
    description:
      'GraphQL: the cost the clients and users of one account (a tenant below the vendor and every tenant below it) may spend per minute together',
    note: '`0`: no budget per account; per process ([docs/graphql.md](docs/graphql.md#cost-and-budgets))',
  }),
  devicePollIntervalSeconds: setting({
    variable: 'GATEHOUSE_DEVICE_POLL_INTERVAL_SECONDS',
    kind: integer(1, 60),
    default: 5,
    description: 'device login: the seconds a CLI waits between polls of the token endpoint (`interval`, RFC 8628)',
    note: 'a poll sooner is answered `slow_down` and the wait grows by 5 s for that login ([docs/users.md](docs/users.md#device-login))',
  }),
  lastUsedFlushSeconds: setting({
    variable: 'GATEHOUSE_LAST_USED_FLUSH_SECONDS',
    kind: integer(1, 3600),
    default: 30,
    description: 'seconds between writes of buffered "last used" times',
  }),
  workers: setting({
    variable: 'GATEHOUSE_WORKERS',
    kind: integer(1, 64),
    default: 1,
    description: '`serve`: processes that share the port (node cluster), to use more than one core',
    note: 'try the number of cores ([docs/performance.md](docs/performance.md#more-than-one-core-gatehouse-serve---workers-n))',
  }),
  authCacheSeconds: setting({
    variable: 'GATEHOUSE_AUTH_CACHE_SECONDS',
    kind: integer(0, 300),
    default: 10,
    description: 'longest a cached client, principal or tenant scope is used without being read again',
    note:
      'every change drops them at once in this process and, on PostgreSQL, in every process within milliseconds (LISTEN/NOTIFY); ' +
      'this bound only matters for a change never heard ([docs/performance.md](docs/performance.md)). `0` turns the caches off',
  }),
  trustProxy: setting({
    variable: 'GATEHOUSE_TRUST_PROXY',
    kind: trustProxy,
    default: false,
    description: "which proxies' `X-Forwarded-For` to believe for the client address",
  }),
  logLevel: setting({ variable: 'LOG_LEVEL', kind: oneOf(LOG_LEVELS), default: 'info', description: 'log level (pino)' }),
};

/** The value of a row, or of a group of rows. */
type ValueOf<S> = S extends Setting<infer T> ? T : { -readonly [K in keyof S]: ValueOf<S[K]> };
type VariableOf<S> = S extends Setting<unknown, infer V> ? V : { [K in keyof S]: VariableOf<S[K]> }[keyof S];

/** The configuration, as loadConfig returns it: one property per row of SETTINGS. */
export interface Config extends ValueOf<typeof SETTINGS> {}
/** The environment variable of some row. */
export type Variable = VariableOf<typeof SETTINGS>;

type DerivedKey = { [K in keyof typeof SETTINGS]: (typeof SETTINGS)[K] extends { fallback: 'derived' } ? K : never }[keyof typeof SETTINGS];

/**
 * The defaults of the `derived` rows, computed after every other value, in table order: each may
 * read any row that is not derived and the derived rows above it. Every derived row needs one.
 */
export const DERIVED_DEFAULTS: { [K in DerivedKey]: (c: Config) => Config[K] } = {
  // a wildcard listen address is not an address anyone can reach: loopback stands in
  baseUrl: (c) => `http://${c.host === '0.0.0.0' || c.host === '::' ? '127.0.0.1' : c.host.includes(':') ? `[${c.host}]` : c.host}:${c.port}`,
  tenantsUrl: (c) => c.baseUrl,
};

export interface RuleContext {
  /** validating for `gatehouse serve` (which needs more than `gatehouse migrate`) */
  serving: boolean;
  /** whether the variable is set (to a non-empty value), valid or not */
  isSet(variable: Variable): boolean;
  /** whether the variable is unset or valid */
  valid(variable: Variable): boolean;
}

/** A rule over several settings, checked once every row is parsed. */
export interface Rule {
  /** the variables the problem names: its line starts "A and B: " */
  variables: readonly [Variable, ...Variable[]];
  /** the rule in words, shown with each of its variables in the help and the README */
  doc: string;
  /** what is wrong, or undefined */
  check(c: Config, ctx: RuleContext): string | undefined;
}

export const RULES: readonly Rule[] = [
  {
    variables: ['GATEHOUSE_ENCRYPTION_KEY'],
    doc: '**required** by `serve` when `DATABASE_URL` is set: the same value on every process',
    // Processes sharing a PostgreSQL must seal alike; a key file on one machine's disk cannot be
    // shared, and a second process would start and then fail on the first sealed value it reads.
    // Only serving seals or unseals: migrate needs no key.
    check: (c, ctx) =>
      ctx.serving && ctx.isSet('DATABASE_URL') && !ctx.isSet('GATEHOUSE_ENCRYPTION_KEY')
        ? 'required when DATABASE_URL is set (every process of one database must use the same key); ' +
          `make one with: ${MAKE_KEY}, and set it on every process`
        : undefined,
  },
  {
    variables: ['GATEHOUSE_WORKERS'],
    doc: 'above 1 only with `DATABASE_URL`',
    check: (c, ctx) =>
      c.workers > 1 && !ctx.isSet('DATABASE_URL')
        ? 'more than one worker needs DATABASE_URL: the embedded database (GATEHOUSE_DATA_DIR) is opened by one process only; ' +
          'set DATABASE_URL to a PostgreSQL database, or leave GATEHOUSE_WORKERS at 1'
        : undefined,
  },
  {
    variables: ['GATEHOUSE_BOOTSTRAP_CLIENT_ID', 'GATEHOUSE_BOOTSTRAP_CLIENT_SECRET'],
    doc: 'set `GATEHOUSE_BOOTSTRAP_CLIENT_ID` and `GATEHOUSE_BOOTSTRAP_CLIENT_SECRET` both or neither',
    check: (c, ctx) =>
      ctx.isSet('GATEHOUSE_BOOTSTRAP_CLIENT_ID') !== ctx.isSet('GATEHOUSE_BOOTSTRAP_CLIENT_SECRET') ? 'set both or neither' : undefined,
  },
  {
    variables: ['GATEHOUSE_METRICS_PORT'],
    doc: 'must differ from `PORT`',
    check: (c, ctx) =>
      ctx.valid('PORT') && ctx.valid('GATEHOUSE_METRICS_PORT') && c.metricsPort === c.port
        ? `must differ from PORT (both are ${c.port}); /metrics has a listener of its own`
        : undefined,
  },
];

/** A row with where it sits in Config. */
export interface SettingRow {
  /** the path of its value in Config: `port`, `bootstrap.clientId` */
  path: readonly string[];
  setting: Setting;
  /** the docs of the rules that name its variable */
  rules: string[];
}

const isSetting = (x: object): x is Setting => 'variable' in x && 'parse' in x;

function rowsOf(tree: object, path: string[]): SettingRow[] {
  return Object.entries(tree).flatMap(([key, node]: [string, object]) =>
    isSetting(node)
      ? [{ path: [...path, key], setting: node, rules: RULES.filter((r) => r.variables.includes(node.variable as Variable)).map((r) => r.doc) }]
      : rowsOf(node, [...path, key]),
  );
}

/** Every row of SETTINGS, in table order, groups flattened. */
export const SETTING_ROWS: readonly SettingRow[] = rowsOf(SETTINGS, []);
