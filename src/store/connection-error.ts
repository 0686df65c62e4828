// A failed first connection to PostgreSQL, said in words an operator can act on: which
// DATABASE_URL (its password hidden), which host and port, what went wrong, and what to check.
// pg reports these as bare codes (ECONNREFUSED, 3D000, …).
import pg from 'pg';
import { DatabaseUnavailableError } from '../errors.js';

/** DATABASE_URL with its password (in the user part or a password= parameter) replaced by ***. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.searchParams.has('password')) u.searchParams.set('password', '***');
    return u.toString();
  } catch {
    return url.replace(/(\/\/[^/@:]*:)[^@/]*@/, '$1***@').replace(/(password=)[^&]*/gi, '$1***');
  }
}

function target(url: string): { host: string; port: string } {
  try {
    const u = new URL(url);
    const host = u.searchParams.get('host') ?? (u.hostname.replace(/^\[|\]$/g, '') || String(pg.defaults.host ?? 'localhost'));
    return { host, port: u.searchParams.get('port') ?? (u.port || String(pg.defaults.port ?? 5432)) };
  } catch {
    return { host: String(pg.defaults.host ?? 'localhost'), port: String(pg.defaults.port ?? 5432) };
  }
}

function databaseName(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.replace(/^\//, '')) || '(the user name)';
  } catch {
    return '(as given)';
  }
}

/** [what happened, what to check] */
function cause(err: unknown, url: string, host: string, port: string): [string, string] {
  const e = err as { code?: string; message?: string; errors?: { code?: string }[] };
  const code = e.code ?? e.errors?.[0]?.code;
  const message = e.message ?? String(err);
  switch (code) {
    case 'ECONNREFUSED':
      return [
        'connection refused',
        `check that PostgreSQL is running and listening on ${host} port ${port}, and that host and port in DATABASE_URL are right`,
      ];
    case 'ENOTFOUND':
      return ['host not found', `check the host name in DATABASE_URL (${host}) and the DNS of this machine`];
    case 'EAI_AGAIN':
      return ['host not found (the name lookup failed for now)', `check the host name in DATABASE_URL (${host}) and the DNS of this machine`];
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return [
        'timed out (no answer from the host)',
        `check that ${host} is reachable from here on port ${port} (firewalls, security groups) and that PostgreSQL runs there`,
      ];
    case '28P01':
      return ['password authentication failed', 'check the user name and password in DATABASE_URL'];
    case '3D000':
      return [`database "${databaseName(url)}" does not exist`, `create it (createdb, or CREATE DATABASE) or fix the database name in DATABASE_URL`];
    case '28000':
      return [
        /pg_hba/.test(message) ? 'no pg_hba.conf entry allows this connection' : 'the server refused this user or connection',
        "allow this client, user and database in the server's pg_hba.conf, or connect with TLS if the entry requires it (sslmode=require in DATABASE_URL)",
      ];
    case '57P03':
      return ['the server is starting up or shutting down', 'wait for PostgreSQL to finish starting, then start again'];
    case '53300':
      return ['the server has no connection slots left', 'raise max_connections on the server or lower the number of processes'];
  }
  if (/timeout/i.test(message)) {
    return [
      'timed out (no answer)',
      `check that ${host} is reachable from here on port ${port} (firewalls, security groups) and that PostgreSQL runs there`,
    ];
  }
  if (/client password must be a string/i.test(message)) {
    return ['the server asks for a password and DATABASE_URL gives none', 'put the password in DATABASE_URL (postgres://user:password@host/db)'];
  }
  if (/does not support SSL/i.test(message)) {
    return ['the server does not support TLS', 'remove sslmode=require (or ssl=true) from DATABASE_URL, or enable TLS on the server'];
  }
  // unknown: pg's own words, without anything from the URL
  return [message.split('\n')[0]!.replace(url, redactUrl(url)), 'check DATABASE_URL and the server'];
}

/** One line: what failed, where, why, and what to check. */
export function describeConnectionFailure(url: string, err: unknown): string {
  const { host, port } = target(url);
  const [what, check] = cause(err, url, host, port);
  return `cannot connect to PostgreSQL at ${host} port ${port} (DATABASE_URL=${redactUrl(url)}): ${what}; ${check}`;
}

/** The database could not be reached at start; the message is the one line to show. */
export class DatabaseUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnreachableError';
  }
}

/** Codes of a connection that could not be made or was lost: the network's, and SQLSTATE class 08
 *  (connection exception), 57P01-57P03 (the server shutting down, crashed, or starting), 25006 (a write
 *  reached a standby: a failover not yet finished). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '25006',
]);
/** pg's words for the same, which come without a code */
const UNREACHABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|the database system is (starting up|shutting down|in recovery mode)/i;

/** Whether a query failed because the database could not be reached (rather than what it said). */
export function isConnectionFailure(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; errors?: { code?: unknown }[] } | undefined;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code && (UNREACHABLE_CODES.has(code) || code.startsWith('08'))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => typeof inner?.code === 'string' && UNREACHABLE_CODES.has(inner.code))) return true;
  return typeof e.message === 'string' && UNREACHABLE_MESSAGES.test(e.message);
}

const asUnavailable = (err: unknown) => (isConnectionFailure(err) ? new DatabaseUnavailableError({ cause: err }) : err);
const WRAPPED = Symbol('gatehouse.unavailable');

/**
 * The pool as Kysely sees it, with every connection failure (connecting, or a query on a
 * connection that died) raised as DatabaseUnavailableError; every other error as pg raised it.
 */
export function unavailableAsTyped(pool: pg.Pool): { connect(): Promise<pg.PoolClient>; end(): Promise<void> } {
  return {
    async connect() {
      let client: pg.PoolClient & { [WRAPPED]?: true };
      try {
        client = await pool.connect();
      } catch (err) {
        throw asUnavailable(err);
      }
      if (!client[WRAPPED]) {
        // pg emits 'error' on a client whose connection dies while it is checked out and between
        // statements (the server shutting down sends a FATAL message): the pool listens only to
        // idle clients, and an 'error' nobody hears ends the process. Its next statement fails
        // (mapped above), and the pool drops it when it comes back (it is no longer queryable).
        client.on('error', () => {});
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        (client as { query: unknown }).query = (...args: unknown[]) => {
          const result = query(...args);
          // a Cursor (streaming) is returned as it is; a promise is mapped
          return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(asUnavailable(err))) : result;
        };
        client[WRAPPED] = true;
      }
      return client;
    },
    end: () => pool.end(),
  };
}
