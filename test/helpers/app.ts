// A running service on a fresh database, driven through app.inject(): the same wiring as
// `gatehouse serve` (src/compose.ts), with a hand-moved clock and captured logs.
import { Writable } from 'node:stream';
import { ManualClock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createService, type Service } from '../../src/compose.js';
import type { Db, Engine } from '../../src/store/db.js';
import { openTestDb, type TestDb } from './db.js';
import type { MailTransport } from '../../src/mail/transports.js';
import type { PasswordHasher } from '../../src/users/password.js';

export const TEST_BASE_URL = 'http://gatehouse.test';
export const ROOT_CLIENT_ID = 'root-admin';
export const ROOT_CLIENT_SECRET = 'gatehouse_test_root_secret_0123456789abcdefghij';
export const TEST_ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export interface TestApp {
  engine: Engine;
  config: Config;
  db: TestDb;
  service: Service;
  clock: ManualClock;
  /** every log line the app wrote */
  logs: string[];
  /** POST the token endpoint with HTTP Basic and a JSON body; the parsed response */
  tokenResponse(clientId: string, secret: string): Promise<Response>;
  /** an access token for the client, failing the test if none is issued */
  token(clientId: string, secret: string): Promise<string>;
  /** the bootstrap Administrator's token (tenant 1) */
  rootToken(): Promise<string>;
  /** POST a GraphQL document to a path (default /graphql) */
  gql(
    token: string | undefined,
    query: string,
    variables?: Record<string, unknown>,
    opts?: { tenant?: string; path?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  request(opts: {
    method: string;
    url: string;
    headers?: Record<string, string>;
    payload?: string | object | Buffer;
    remoteAddress?: string;
  }): Promise<Response>;
  close(): Promise<void>;
}

export async function startTestApp(opts: {
  engine: Engine;
  env?: Record<string, string>;
  clock?: ManualClock;
  db?: Db;
  /** where mail goes (default: GATEHOUSE_SMTP_URL's server, else the data folder's outbox folder) */
  mailTransport?: MailTransport;
  /** the mail job's interval; default null: tests deliver with `service.services.mail.deliverDue()` */
  mailIntervalMs?: number | null;
  /** how passwords are hashed and checked (default argon2id): a recorder to count the work */
  passwordHasher?: PasswordHasher;
}): Promise<TestApp> {
  const config = loadConfig({
    GATEHOUSE_BASE_URL: TEST_BASE_URL,
    GATEHOUSE_BOOTSTRAP_CLIENT_ID: ROOT_CLIENT_ID,
    GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_CLIENT_SECRET,
    GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD: 'test-admin-password-1',
    GATEHOUSE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    GATEHOUSE_DATA_DIR: '/nonexistent/gatehouse-test',
    LOG_LEVEL: 'debug',
    ...opts.env,
  });
  const clock = opts.clock ?? new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const db = opts.db ?? (await openTestDb(opts.engine));
  const service = await createService({
    config,
    db,
    logger: createLogger('debug', sink),
    clock,
    migrate: false,
    flushIntervalMs: null,
    expiryIntervalMs: null,
    purgeIntervalMs: null,
    mailIntervalMs: opts.mailIntervalMs ?? null,
    ...(opts.mailTransport ? { mailTransport: opts.mailTransport } : {}),
    ...(opts.passwordHasher ? { passwordHasher: opts.passwordHasher } : {}),
  });

  const request: TestApp['request'] = async ({ method, url, headers, payload, remoteAddress }) => {
    const res = await service.app.inject({ method: method as 'GET', url, headers, payload, ...(remoteAddress ? { remoteAddress } : {}) });
    let body: unknown;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers as Response['headers'], body, text: res.body };
  };

  const tokenResponse: TestApp['tokenResponse'] = (clientId, secret) =>
    request({
      method: 'POST',
      url: '/auth/api/v2/auth/token',
      headers: {
        authorization: 'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64'),
        'content-type': 'application/json',
      },
      payload: { grant_type: 'client_credentials' },
    });

  const token: TestApp['token'] = async (clientId, secret) => {
    const res = await tokenResponse(clientId, secret);
    if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
    return res.body.access_token as string;
  };

  let root: { token: string; issuedAt: number } | undefined;
  // A token issued at a later instant than the clock now shows has an iat in the future and is
  // refused (docs/tokens.md): a test that moves the clock back, or on past the token's lifetime,
  // gets a token issued afresh.
  const rootToken = async () => {
    const now = clock.now().getTime();
    // issued afresh when the test clock moved back before it, or on past its lifetime
    if (!root || now < root.issuedAt || now >= root.issuedAt + (config.tokenTtlSeconds - 60) * 1000) {
      root = { token: await token(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), issuedAt: now };
    }
    return root.token;
  };
  return {
    engine: opts.engine,
    config,
    db,
    service,
    clock,
    logs,
    request,
    tokenResponse,
    token,
    rootToken,
    gql: (tok, query, variables, o = {}) =>
      request({
        method: 'POST',
        url: o.path ?? '/graphql',
        headers: {
          'content-type': 'application/json',
          ...(tok ? { authorization: `Bearer ${tok}` } : {}),
          ...(o.tenant ? { 'x-tenant-context': o.tenant } : {}),
          ...o.headers,
        },
        payload: { query, ...(variables ? { variables } : {}) },
      }),
    close: () => service.close(),
  };
}
