// Configuration: read once from the environment (a command-line flag of the same name may
// override), validated in one place. Every problem is reported at once, one line per variable.
import { nameProblem, TEXT_LIMITS } from './text.js';

export const REGIONS = ['us1', 'us2', 'us3', 'eu1', 'eu2'] as const;
export type Region = (typeof REGIONS)[number];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface Config {
  /** listen port */
  port: number;
  /** listen address */
  host: string;
  /** PostgreSQL connection string; undefined means embedded PGlite */
  databaseUrl: string | undefined;
  /** embedded database folder (also holds the generated encryption key when none is configured) */
  dataDir: string;
  /** region the tokens and credentials are bound to */
  region: Region;
  /** public address of the base interfaces; the token issuer */
  baseUrl: string;
  /** public address of the tenant interface */
  tenantsUrl: string;
  /** access-token lifetime in seconds */
  tokenTtlSeconds: number;
  /** createClient calls per tenant per rolling hour */
  clientCreateLimit: number;
  /** days after expires_at at which a tenant is disabled */
  expiryGraceDays: number;
  /** allow IdP metadata URLs that resolve to loopback/private addresses */
  ssoAllowPrivateUrls: boolean;
  /** name of the vendor root tenant created on first start */
  vendorName: string;
  /** first admin API client and user; generated when unset */
  bootstrap: {
    clientId: string | undefined;
    clientSecret: string | undefined;
    adminEmail: string | undefined;
    adminPassword: string | undefined;
  };
  /** 32-byte keys that seal secrets the service must read back (signing keys): the first seals,
   *  every one unseals (rotation); empty means a key file in dataDir (PGlite only) */
  encryptionKeys: Buffer[];
  /** introspection (and "did you mean" hints) for authenticated callers; on unless turned off */
  graphqlIntrospection: boolean;
  /** seconds between flushes of buffered last-used times to the database */
  lastUsedFlushSeconds: number;
  /** seconds between runs of the tenant-expiry job */
  expiryCheckSeconds: number;
  /** which proxies' X-Forwarded-For to believe for the client address (Fastify trustProxy) */
  trustProxy: boolean | number | string[];
  /** port of the separate /metrics listener (on host); undefined: /metrics is not served */
  metricsPort: number | undefined;
  /** pino level */
  logLevel: (typeof LOG_LEVELS)[number];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

type Source = Record<string, string | undefined>;

/** Turns `--port 9000`, `--port=9000` or `--data-dir x` into variables (PORT, GATEHOUSE_DATA_DIR). */
export function flagsToVariables(args: string[], known: readonly string[] = KNOWN_VARIABLES): { vars: Source; rest: string[] } {
  const vars: Source = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/i.exec(arg);
    if (!m) {
      rest.push(arg);
      continue;
    }
    const base = m[1]!.toUpperCase().replace(/-/g, '_');
    const name = known.includes(base) ? base : known.includes(`GATEHOUSE_${base}`) ? `GATEHOUSE_${base}` : undefined;
    if (!name) {
      rest.push(arg);
      continue;
    }
    if (m[2] !== undefined) vars[name] = m[2];
    else if (i + 1 < args.length) vars[name] = args[++i];
    else vars[name] = '';
  }
  return { vars, rest };
}

export const KNOWN_VARIABLES = [
  'PORT',
  'HOST',
  'DATABASE_URL',
  'GATEHOUSE_DATA_DIR',
  'GATEHOUSE_REGION',
  'GATEHOUSE_BASE_URL',
  'GATEHOUSE_TENANTS_URL',
  'GATEHOUSE_TOKEN_TTL',
  'GATEHOUSE_CLIENT_CREATE_LIMIT',
  'GATEHOUSE_EXPIRY_GRACE_DAYS',
  'GATEHOUSE_SSO_ALLOW_PRIVATE_URLS',
  'GATEHOUSE_VENDOR_NAME',
  'GATEHOUSE_BOOTSTRAP_CLIENT_ID',
  'GATEHOUSE_BOOTSTRAP_CLIENT_SECRET',
  'GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL',
  'GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD',
  'GATEHOUSE_ENCRYPTION_KEY',
  'GATEHOUSE_GRAPHQL_INTROSPECTION',
  'GATEHOUSE_LAST_USED_FLUSH_SECONDS',
  'GATEHOUSE_EXPIRY_CHECK_SECONDS',
  'GATEHOUSE_TRUST_PROXY',
  'GATEHOUSE_METRICS_PORT',
  'LOG_LEVEL',
] as const;

/** `serving`: validate for `gatehouse serve`, which needs more than `gatehouse migrate`. */
export function loadConfig(env: Source = process.env, overrides: Source = {}, opts: { serving?: boolean } = {}): Config {
  const src: Source = { ...env, ...overrides };
  const problems: string[] = [];
  const get = (name: string): string | undefined => {
    const v = src[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name}: must be a whole number from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return Number(raw);
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    if (/^(true|1|yes)$/i.test(raw)) return true;
    if (/^(false|0|no)$/i.test(raw)) return false;
    problems.push(`${name}: must be true or false, got "${raw}"`);
    return fallback;
  };
  const url = (name: string, fallback: string): string => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    try {
      if (raw.length > TEXT_LIMITS.url) throw new Error('length');
      const u = new URL(raw);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      if (u.search || u.hash) throw new Error('query');
      return raw.replace(/\/+$/, '');
    } catch {
      problems.push(`${name}: must be an http(s) URL of at most ${TEXT_LIMITS.url} characters without query or fragment, got "${raw.slice(0, 100)}"`);
      return fallback;
    }
  };

  const before = problems.length;
  const port = int('PORT', 8080, 0, 65535);
  const portValid = problems.length === before;
  const metricsPort = get('GATEHOUSE_METRICS_PORT') === undefined ? undefined : int('GATEHOUSE_METRICS_PORT', 0, 1, 65535);
  if (portValid && metricsPort === port) {
    problems.push(`GATEHOUSE_METRICS_PORT: must differ from PORT (both are ${port}); /metrics has a listener of its own`);
  }
  const host = get('HOST') ?? '127.0.0.1';
  const databaseUrl = get('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL: must start with postgres:// or postgresql://');
  }
  const regionRaw = get('GATEHOUSE_REGION') ?? 'us1';
  const region = (REGIONS as readonly string[]).includes(regionRaw) ? (regionRaw as Region) : 'us1';
  if (region !== regionRaw) problems.push(`GATEHOUSE_REGION: must be one of ${REGIONS.join(' ')}, got "${regionRaw}"`);
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const baseUrl = url('GATEHOUSE_BASE_URL', `http://${urlHost}:${port}`);
  const tenantsUrl = url('GATEHOUSE_TENANTS_URL', baseUrl);

  const encryptionKeys = encryptionKeyList(get('GATEHOUSE_ENCRYPTION_KEY'), problems);
  // Processes sharing a PostgreSQL must seal alike; a key file on one machine's disk cannot be
  // shared, and a second process would start and then fail on the first sealed value it reads.
  // Only serving seals or unseals: migrate needs no key.
  if (opts.serving && databaseUrl !== undefined && get('GATEHOUSE_ENCRYPTION_KEY') === undefined) {
    problems.push(
      'GATEHOUSE_ENCRYPTION_KEY: required when DATABASE_URL is set (every process of one database must use the same key); ' +
        `make one with: ${MAKE_KEY}, and set it on every process`,
    );
  }

  const logLevelRaw = get('LOG_LEVEL') ?? 'info';
  const logLevel = (LOG_LEVELS as readonly string[]).includes(logLevelRaw) ? (logLevelRaw as Config['logLevel']) : 'info';
  if (logLevel !== logLevelRaw) problems.push(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(' ')}, got "${logLevelRaw}"`);

  const bootstrap = {
    clientId: get('GATEHOUSE_BOOTSTRAP_CLIENT_ID'),
    clientSecret: get('GATEHOUSE_BOOTSTRAP_CLIENT_SECRET'),
    adminEmail: get('GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL'),
    adminPassword: get('GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD'),
  };
  if (bootstrap.clientId !== undefined && !/^[A-Za-z0-9._~-]{3,128}$/.test(bootstrap.clientId)) {
    problems.push('GATEHOUSE_BOOTSTRAP_CLIENT_ID: 3 to 128 characters of A-Z a-z 0-9 . _ ~ -');
  }
  if (bootstrap.clientSecret !== undefined && (bootstrap.clientSecret.length < 32 || bootstrap.clientSecret.length > 256)) {
    problems.push('GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: must be 32 to 256 characters');
  }
  if ((bootstrap.clientId === undefined) !== (bootstrap.clientSecret === undefined)) {
    problems.push('GATEHOUSE_BOOTSTRAP_CLIENT_ID and GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: set both or neither');
  }
  if (bootstrap.adminEmail !== undefined && (!/^[^\s@]+@[^\s@]+$/.test(bootstrap.adminEmail) || bootstrap.adminEmail.length > TEXT_LIMITS.email)) {
    problems.push(`GATEHOUSE_BOOTSTRAP_ADMIN_EMAIL: must be an e-mail address of at most ${TEXT_LIMITS.email} characters`);
  }
  const vendorName = get('GATEHOUSE_VENDOR_NAME') ?? 'Vendor';
  const vendorNameProblem = nameProblem(vendorName);
  if (vendorNameProblem) problems.push(`GATEHOUSE_VENDOR_NAME: ${vendorNameProblem} (it names tenant 1; see docs/text-rules.md)`);
  if (bootstrap.adminPassword !== undefined && bootstrap.adminPassword.length < 12) {
    problems.push('GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD: must be at least 12 characters');
  }

  // false | true | a hop count | a comma list of proxy addresses or CIDRs
  const trustRaw = get('GATEHOUSE_TRUST_PROXY') ?? 'false';
  let trustProxy: Config['trustProxy'] = false;
  if (/^(true|false)$/i.test(trustRaw)) trustProxy = /^true$/i.test(trustRaw);
  else if (/^\d{1,2}$/.test(trustRaw)) trustProxy = Number(trustRaw);
  else if (/^[0-9a-f.:/]+(,[0-9a-f.:/]+)*$/i.test(trustRaw.replace(/\s/g, ''))) trustProxy = trustRaw.replace(/\s/g, '').split(',');
  else problems.push(`GATEHOUSE_TRUST_PROXY: true, false, a hop count, or a comma list of proxy addresses, got "${trustRaw}"`);

  const config: Config = {
    port,
    host,
    databaseUrl,
    dataDir: get('GATEHOUSE_DATA_DIR') ?? './data',
    region,
    baseUrl,
    tenantsUrl,
    tokenTtlSeconds: int('GATEHOUSE_TOKEN_TTL', 36000, 60, 7 * 24 * 3600),
    clientCreateLimit: int('GATEHOUSE_CLIENT_CREATE_LIMIT', 10, 1, 1_000_000),
    expiryGraceDays: int('GATEHOUSE_EXPIRY_GRACE_DAYS', 60, 0, 3650),
    ssoAllowPrivateUrls: bool('GATEHOUSE_SSO_ALLOW_PRIVATE_URLS', false),
    vendorName,
    bootstrap,
    encryptionKeys,
    graphqlIntrospection: bool('GATEHOUSE_GRAPHQL_INTROSPECTION', true),
    lastUsedFlushSeconds: int('GATEHOUSE_LAST_USED_FLUSH_SECONDS', 30, 1, 3600),
    expiryCheckSeconds: int('GATEHOUSE_EXPIRY_CHECK_SECONDS', 600, 10, 86400),
    trustProxy,
    metricsPort,
    logLevel,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

const MAKE_KEY = 'openssl rand -hex 32';

/** GATEHOUSE_ENCRYPTION_KEY: one key, or a comma-separated list (the first seals, all unseal). */
function encryptionKeyList(raw: string | undefined, problems: string[]): Buffer[] {
  if (raw === undefined) return [];
  const entries = raw.split(',').map((e) => e.trim());
  const keys: { key: Buffer; position: number }[] = [];
  const issues: string[] = [];
  // a problem names a key by its position only: the value is a secret
  const which = (i: number) => (entries.length === 1 ? 'the key' : `key ${i + 1} of ${entries.length}`);
  for (const [i, entry] of entries.entries()) {
    const decoded = /^[0-9a-f]{64}$/i.test(entry)
      ? Buffer.from(entry, 'hex')
      : /^[A-Za-z0-9+/_-]+={0,2}$/.test(entry)
        ? Buffer.from(entry, 'base64')
        : Buffer.alloc(0);
    const same = keys.find((k) => k.key.equals(decoded));
    if (entry === '') issues.push(`${which(i)} is empty`);
    else if (decoded.length !== 32) issues.push(`${which(i)} is not 32 bytes as 64 hex digits or base64`);
    else if (same) issues.push(`${which(i)} repeats key ${same.position + 1}`);
    else keys.push({ key: decoded, position: i });
  }
  if (issues.length > 0) {
    problems.push(`GATEHOUSE_ENCRYPTION_KEY: ${issues.join('; ')} (make a key with: ${MAKE_KEY})`);
    return [];
  }
  return keys.map((k) => k.key);
}
