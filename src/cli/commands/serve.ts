// gatehouse serve: open the database, compose the service, listen; on SIGTERM or SIGINT stop
// accepting, finish in-flight requests, write buffered state, close the database. A start that
// fails closes whatever it opened (the database, and with it the data-folder lock) before the
// failure is reported, so the process can exit and the next start finds the folder free.
import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { formatBootstrapNotice } from '../../bootstrap/bootstrap.js';
import { createLogger } from '../../logger.js';
import { createService, type Service } from '../../compose.js';
import type { Db } from '../../store/db.js';
import { DatabaseUnreachableError } from '../../store/connection-error.js';
import { DataDirLockedError, lockLostLine } from '../../store/data-dir-lock.js';
import { StartFailure, listenFailure } from '../failure-line.js';
import { openConfiguredDb } from './open-db.js';
import { METRICS_REQUEST, serveWorkers } from './serve-workers.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;

export const SERVE_USAGE = `Usage: gatehouse serve [--variable value …]

Starts the service: applies missing database migrations, creates the vendor
tenant and the first administrators on an empty database (printing generated
secrets once), loads the signing keys (re-sealing them when
GATEHOUSE_ENCRYPTION_KEY has a new first key), and listens on HOST:PORT; with
GATEHOUSE_METRICS_PORT, /metrics is served on HOST:GATEHOUSE_METRICS_PORT.
SIGTERM or SIGINT stops it: in-flight requests finish, buffered state is
written, exit 0. A failed start exits non-zero with one line on standard error.

With --workers N (GATEHOUSE_WORKERS; PostgreSQL only) N processes share the
port, one per core: the first starts alone (migrations, first start), then the
others; one that dies is replaced; /metrics sums them all.
`;

export async function serveCommand(config: Config): Promise<number> {
  if (config.workers > 1 && cluster.isPrimary) return serveWorkers(config);
  const worker = cluster.isWorker ? cluster.worker : undefined;
  const logger = worker ? createLogger(config.logLevel).child({ worker: worker.id }) : createLogger(config.logLevel);
  // a stop asked for during start-up is honoured once the start is done (the default action, an
  // immediate exit, would leave the data-folder lock to lapse); a second one exits at once
  let early: string | undefined;
  const onEarlySignal = (signal: string) => {
    if (early) process.exit(1);
    early = signal;
  };
  process.on('SIGTERM', onEarlySignal).on('SIGINT', onEarlySignal);
  const stopListening = () => process.off('SIGTERM', onEarlySignal).off('SIGINT', onEarlySignal);
  let db: Db | undefined;
  let service: Service | undefined;
  try {
    db = await openConfiguredDb(config, (reason) => {
      // another process may own the folder now: no more writes, no graceful close
      logger.fatal({ reason }, 'embedded database lock lost; stopping at once');
      process.stderr.write(lockLostLine(reason));
      process.exit(1);
    });
    service = await createService({ config, db, logger });
    // the only time generated secrets are shown: standard output, not the log
    if (service.bootstrapped) process.stdout.write(formatBootstrapNotice(service.bootstrapped));
    await listen(service.app, config.host, config.port, 'PORT');
    // a worker's metrics are served by the primary, summed over the workers (serve-workers.ts)
    if (worker) answerMetricsRequests(service);
    else if (service.metricsApp) await listen(service.metricsApp, config.host, config.metricsPort!, 'GATEHOUSE_METRICS_PORT');
  } catch (err) {
    if (!(err instanceof StartFailure || err instanceof DataDirLockedError || err instanceof DatabaseUnreachableError)) {
      // not one the operator can fix from the message alone: keep the details in the log
      logger.fatal({ err }, 'start-up failed');
    }
    await (service ? service.close() : db?.close())?.catch((closeErr: unknown) =>
      logger.error({ err: closeErr }, 'closing after a failed start failed'),
    );
    stopListening();
    // the first start committed before it failed: what it printed is all there will ever be
    if (service?.bootstrapped && err instanceof Error) {
      err.message += '; the first-start credentials printed above were created and stay valid: keep them (a later start prints none)';
    }
    throw err;
  }
  stopListening();
  logger.info({ engine: db.engine, region: config.region, baseUrl: config.baseUrl, metricsPort: config.metricsPort }, 'gatehouse serving');
  return waitForSignal(service, logger, early);
}

function answerMetricsRequests(service: Service): void {
  process.on('message', (msg: { type?: string; id?: number }) => {
    if (msg?.type !== METRICS_REQUEST) return;
    service.metrics.registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: METRICS_REQUEST, id: msg.id, metrics }),
      () => process.send?.({ type: METRICS_REQUEST, id: msg.id, metrics: [] }),
    );
  });
}

async function listen(app: FastifyInstance, host: string, port: number, variable: string): Promise<void> {
  try {
    await app.listen({ port, host });
  } catch (err) {
    throw listenFailure(err, host, port, variable);
  }
}

function waitForSignal(service: Service, logger: Logger, early: string | undefined): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        logger.error('shutdown timed out');
        resolve(1);
      }, SHUTDOWN_TIMEOUT_MS);
      timer.unref();
      service.close().then(
        () => {
          clearTimeout(timer);
          resolve(0);
        },
        (err) => {
          logger.error({ err }, 'shutdown failed');
          clearTimeout(timer);
          resolve(1);
        },
      );
    };
    if (early) return stop(early);
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
