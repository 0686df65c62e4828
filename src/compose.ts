// Composition: an open database -> migrations -> first-start bootstrap -> signing keys ->
// services -> the app. Used by `gatehouse serve` and by the tests, so both run the same wiring.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { bootstrap, type BootstrapResult } from './bootstrap/bootstrap.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { LastUsedBuffer } from './credentials/last-used.js';
import { SealedBox, resolveEncryptionKeys } from './crypto/sealed-box.js';
import { buildMetricsApp } from './http/metrics.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { KeyRing } from './keys/key-ring.js';
import { createServices, keyRotationSettings, type Services } from './services.js';
import type { Db } from './store/db.js';
import { createStore, type Store } from './store/index.js';
import { migrateToLatest } from './store/migrate.js';
import { job, scheduleJobs } from './maintenance/jobs.js';
import { purgeExpired } from './maintenance/purge.js';
import { HEARTBEAT_SECONDS, heartbeat } from './maintenance/heartbeat.js';
import { hostname } from 'node:os';
import { resealTotpSecrets } from './signin/reseal.js';
import { disableExpiredTenants } from './tenants/expiry.js';
import { loadVersionInfo } from './version.js';
import { type MailTransport, sealClearFolderMail } from './mail/transports.js';
import type { PasswordHasher } from './users/password.js';

/** how often expired sessions, device codes and failure counts are deleted */
const PURGE_INTERVAL_MS = 10 * 60 * 1000;
/** how often the mail outbox is looked at for messages due (mail/service.ts) */
const MAIL_INTERVAL_MS = 5 * 1000;

export interface Service {
  /** the public listener's app */
  app: FastifyInstance;
  /** the /metrics listener's app, when GATEHOUSE_METRICS_PORT is set */
  metricsApp: FastifyInstance | undefined;
  store: Store;
  services: Services;
  lastUsed: LastUsedBuffer;
  /** what the service counts (served by metricsApp, or by the cluster primary for a worker) */
  metrics: Metrics;
  /** secrets generated at first start (undefined on later starts) */
  bootstrapped: BootstrapResult | undefined;
  /** stops the apps, writes buffered last-used times, closes the database */
  close(): Promise<void>;
}

export async function createService(opts: {
  config: Config;
  db: Db;
  logger: Logger;
  clock?: Clock;
  /** false when the caller migrated already (tests that share a migrated template) */
  migrate?: boolean;
  flushIntervalMs?: number | null;
  /** null: no background expiry job (tests run it by hand) */
  expiryIntervalMs?: number | null;
  /** null: no background purge of expired sessions, device codes and failure counts (tests run it by hand) */
  purgeIntervalMs?: number | null;
  /** null: no background delivery of the mail outbox (tests run `services.mail.deliverDue()` by hand) */
  mailIntervalMs?: number | null;
  /** where mail goes instead of GATEHOUSE_SMTP_URL's server or the outbox folder (tests) */
  mailTransport?: MailTransport;
  /** how passwords are hashed and checked, instead of argon2id directly (tests count the work) */
  passwordHasher?: PasswordHasher;
}): Promise<Service> {
  const { config, db, logger } = opts;
  const clock = opts.clock ?? systemClock;
  if (opts.migrate !== false) await migrateToLatest(db.kysely);
  // the caches of authentication reads (store/read-cache.ts). On PostgreSQL they keep nothing
  // until the listener below hears other processes' changes (Db.changes starts unreliable there).
  const { changes } = db;
  const cacheLifetimeMs = config.authCacheSeconds * 1000;
  const hearOthers = db.listenForChanges !== undefined && cacheLifetimeMs > 0;
  const store = createStore(db.kysely, clock, { changes, cacheLifetimeMs });
  const bootstrapped = await bootstrap(store, config, clock);
  const box = new SealedBox(resolveEncryptionKeys(config.encryptionKeys, config.dataDir, db.engine));
  const keys = await KeyRing.open(store, box, clock, logger, { tokenLifetimeMs: keyRotationSettings(config).tokenLifetimeMs, changes });
  const resealed = await resealTotpSecrets(store, box);
  if (resealed > 0) logger.info({ resealed }, 're-sealed TOTP secrets under the first encryption key');
  const lastUsed = new LastUsedBuffer(store.credentials, (err) => logger.error({ err }, 'writing last-used times failed'));
  const services = createServices({
    config,
    store,
    clock,
    keys,
    box,
    lastUsed,
    ...(opts.mailTransport ? { mailTransport: opts.mailTransport } : {}),
    ...(opts.passwordHasher ? { passwordHasher: opts.passwordHasher } : {}),
  });
  const metrics = createMetrics();
  const version = loadVersionInfo();
  const app = await buildApp({ config, database: db, clock, services, logger, version, metrics });
  const metricsApp = config.metricsPort === undefined ? undefined : await buildMetricsApp(metrics, logger);
  // the listener and the timers start last: a failure above leaves nothing running behind it
  // (the listener is closed with the database)
  if (hearOthers) {
    await db.listenForChanges!({
      lost: (err) => logger.warn({ err }, "not hearing other processes' changes: authentication caches off until the connection is back"),
      restored: () => logger.info("hearing other processes' changes again: authentication caches on"),
    });
  }
  const flushMs = opts.flushIntervalMs === undefined ? config.lastUsedFlushSeconds * 1000 : opts.flushIntervalMs;
  if (flushMs !== null) lastUsed.start(flushMs);
  const expiryMs = opts.expiryIntervalMs === undefined ? config.expiryCheckSeconds * 1000 : opts.expiryIntervalMs;
  const purgeMs = opts.purgeIntervalMs === undefined ? PURGE_INTERVAL_MS : opts.purgeIntervalMs;
  const mailMs = opts.mailIntervalMs === undefined ? MAIL_INTERVAL_MS : opts.mailIntervalMs;
  // the background jobs (maintenance/jobs.ts): each at its interval, null when not scheduled
  // this process in process_heartbeats (gatehouse status): at start, then every HEARTBEAT_SECONDS
  const sealedClear = sealClearFolderMail(config.dataDir, box);
  if (sealedClear > 0) logger.info({ sealed: sealedClear }, 'sealed the messages an earlier version wrote to the outbox folder in clear');
  logger.info(
    { to: services.mail.destination },
    services.mail.delivers ? 'mail goes to the SMTP server' : 'no SMTP server (GATEHOUSE_SMTP_URL): mail goes to the outbox folder (gatehouse mail)',
  );
  const startedAt = clock.now();
  const beat = heartbeat(store.heartbeats, clock, {
    processId: `${hostname()}:${process.pid}:${startedAt.getTime()}`,
    host: hostname(),
    pid: process.pid,
    version: version.tag,
    startedAt,
  });
  if (purgeMs !== null) await beat();
  const stopJobs = scheduleJobs(
    [
      job({
        name: 'heartbeat',
        everyMs: purgeMs === null ? null : HEARTBEAT_SECONDS * 1000,
        run: beat,
        logged: () => undefined,
      }),
      // the mail outbox: every process delivers (each message is claimed by one); a message that
      // failed for good is logged without its body (it is audited and `gatehouse mail` lists it)
      job({
        name: 'mail delivery',
        everyMs: mailMs,
        run: () => services.mail.deliverDue(),
        logged: (run) =>
          run.failed.length > 0
            ? [
                'warn',
                { failed: run.failed, sent: run.sent, retried: run.retried },
                'mail failed for good after every attempt (gatehouse mail --status failed)',
              ]
            : run.sent + run.retried > 0
              ? ['info', { sent: run.sent, retried: run.retried, to: services.mail.destination }, 'delivered mail']
              : undefined,
      }),
      job({
        name: 'mail outbox purge',
        everyMs: purgeMs,
        run: () => services.mail.purge(),
        logged: (purged) => (purged > 0 ? ['debug', { purged }, 'forgot old sent and failed mail'] : undefined),
      }),
      job({
        name: 'tenant expiry',
        everyMs: expiryMs,
        run: () => disableExpiredTenants(store, clock, config.expiryGraceDays),
        logged: (disabled) => (disabled.length > 0 ? ['info', { tenants: disabled }, 'disabled expired tenants'] : undefined),
      }),
      job({
        name: 'purge of expired rows',
        everyMs: purgeMs,
        run: () => purgeExpired(store, clock, { sessionIdleSeconds: config.sessionIdleSeconds, auditRetentionDays: config.auditRetentionDays }),
        logged: (purged) => (Object.values(purged).some((n) => n > 0) ? ['debug', { purged }, 'purged expired rows'] : undefined),
      }),
      // IdP metadata read again, every connection configured by URL once per
      // GATEHOUSE_SSO_METADATA_REFRESH_HOURS, checked at the purge's pace (several processes may
      // run it: each refresh is one transaction)
      job({
        name: 'SSO metadata refresh',
        everyMs: purgeMs,
        run: () => services.sso.refreshDue(),
        logged: (done) => (done.refreshed + done.failed > 0 ? ['info', { ...done }, 'refreshed SSO metadata'] : undefined),
      }),
      // SSO domains' TXT records looked up again when due (docs/sso.md): pending ones hourly for
      // a week, proven ones every GATEHOUSE_SSO_DOMAIN_RECHECK_HOURS; a proven domain lost after
      // its grace period is a warning here besides its audit event
      job({
        name: 'SSO domain check',
        everyMs: purgeMs,
        run: async () => {
          const done = await services.sso.checkDomainsDue();
          const other = done.checked - done.proven - done.failing.length - done.lost.length;
          for (const [outcome, n] of [
            ['proven', done.proven],
            ['failing', done.failing.length],
            ['lost', done.lost.length],
            ['other', other],
          ] as const) {
            if (n > 0) metrics.ssoDomainChecks.inc({ outcome }, n);
          }
          return done;
        },
        logged: (done) =>
          done.lost.length > 0
            ? ['warn', { ...done }, 'SSO domains lost: their TXT records were not found for the grace period; they no longer route sign-ins']
            : done.failing.length > 0
              ? ['warn', { ...done }, 'SSO domains failing their DNS re-check: they stop routing after the grace period unless the record is found']
              : done.proven > 0
                ? ['info', { ...done }, 'SSO domains proven']
                : undefined,
      }),
      // a successor signing key once the signer has signed GATEHOUSE_SIGNING_KEY_ROTATE_DAYS (less
      // the pre-publication period), checked at the purge's pace; any process may run it: under the
      // key lock exactly one successor is made (keys/service.ts)
      job({
        name: 'signing-key rotation',
        everyMs: purgeMs,
        run: () => services.signingKeys.rotateIfDue(),
        logged: (done) =>
          done?.next
            ? [
                'info',
                { kid: done.next.kid, signsFrom: done.next.signsFrom.toISOString() },
                'published the next signing key: it signs from signsFrom',
              ]
            : undefined,
      }),
    ],
    logger,
  );

  let closing: Promise<void> | undefined;
  return {
    app,
    metricsApp,
    store,
    services,
    lastUsed,
    metrics,
    bootstrapped,
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await metricsApp?.close();
        await stopJobs();
        services.mail.close();
        await lastUsed.stop();
        // refusal events still being written (credentials/service.ts)
        await services.credentials.settled();
        await db.close();
      })()),
  };
}
