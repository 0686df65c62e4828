// gatehouse serve: open the database, compose the service, listen; on SIGTERM or SIGINT stop
// accepting, finish in-flight requests, write buffered state, close the database. A start that
// fails closes whatever it opened (the database, and with it the data-folder lock) before the
// failure is reported, so the process can exit and the next start finds the folder free.
//
// One stop signal is enough, and a repeated one never cuts the clean stop short: `npm start` and
// `npx gatehouse serve` pass the terminal's Ctrl-C on to the process, which the terminal has
// signalled already (Ctrl-C signals the whole foreground process group), so a single Ctrl-C
// arrives twice. Were the second one to take Node's default action, the process would die in the
// middle of its stop, leaving the data-folder lock behind. The stop is bounded (SHUTDOWN_TIMEOUT_MS)
// and so is the start (the database's connection and statement timeouts); SIGQUIT (Ctrl-\) or
// SIGKILL end the process at once, as they always do.
//
// Exit status: 0 after SIGTERM (how service managers and orchestrators stop a service), 130 after
// SIGINT (Ctrl-C: 128 + SIGINT, as a shell reports an interrupted command and as `gatehouse login`
// does; npx's shell reports 130 in any case), 1 when the stop failed or timed out. A cluster
// worker exits 0 after any clean stop: its primary reports the signal.
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
import { EXIT_INTERRUPTED, exitAfterStop } from '../exit-codes.js';
import { openConfiguredDb } from './open-db.js';
import { durabilityProblems, readDurabilitySettings } from '../../store/durability.js';
import { METRICS_REQUEST, serveWorkers } from './serve-workers.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;

export async function serveCommand(config: Config): Promise<number> {
  if (config.workers > 1 && cluster.isPrimary) return serveWorkers(config);
  const worker = cluster.isWorker ? cluster.worker : undefined;
  const logger = worker ? createLogger(config.logLevel).child({ worker: worker.id }) : createLogger(config.logLevel);
  // a stop asked for during start-up is honoured once the start is done (the default action, an
  // immediate exit, would leave the data-folder lock to lapse)
  let serving = false;
  const signals = stopSignals(logger, () => serving);
  let db: Db | undefined;
  let service: Service | undefined;
  try {
    db = await openConfiguredDb(config, (reason) => {
      // another process may own the folder now: no more writes, no graceful close
      logger.fatal({ reason }, 'embedded database lock lost; stopping at once');
      process.stderr.write(lockLostLine(reason));
      process.exit(1);
    });
    if (db.engine === 'postgres') await requireDurable(db, config, logger);
    service = await createService({ config, db, logger });
    // the only time generated secrets are shown: standard output, not the log
    if (service.bootstrapped) process.stdout.write(formatBootstrapNotice(service.bootstrapped, config.baseUrl));
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
    signals.dispose();
    // the first start committed before it failed: what it printed is all there will ever be
    if (service?.bootstrapped && err instanceof Error) {
      err.message += '; the first-start credentials printed above were created and stay valid: keep them (a later start prints none)';
    }
    throw err;
  }
  logger.info({ engine: db.engine, region: config.region, baseUrl: config.baseUrl, metricsPort: config.metricsPort }, 'gatehouse serving');
  serving = true;
  const signal = await signals.first;
  const stopped = await stop(service, logger, signal);
  // the handlers stay to the end: a copy of the signal that comes late (npm's, on a busy machine)
  // is absorbed like any other
  const code = stopped !== 0 ? stopped : signal === 'SIGINT' && !worker ? EXIT_INTERRUPTED : 0;
  return exitAfterStop(code);
}

/** Refuses a PostgreSQL server that may lose what it acknowledges (src/store/durability.ts), unless allowed. */
async function requireDurable(db: Db, config: Config, logger: Logger): Promise<void> {
  const problems = durabilityProblems(await readDurabilitySettings(db));
  if (problems.length === 0) return;
  if (config.allowNonDurableDatabase) {
    logger.warn(
      { problems: problems.map((p) => p.problem) },
      'the database may lose acknowledged writes in a crash (GATEHOUSE_ALLOW_NON_DURABLE_DATABASE)',
    );
    return;
  }
  throw new StartFailure(
    `the PostgreSQL server may lose writes it has acknowledged, in a crash (${problems.map((p) => p.problem).join(', ')}): ` +
      `${problems.map((p) => p.fix).join('; ')}; then SELECT pg_reload_conf() and start again ` +
      '(for a throwaway test database only: GATEHOUSE_ALLOW_NON_DURABLE_DATABASE=true)',
  );
}

type StopSignal = 'SIGINT' | 'SIGTERM';

/**
 * Listens for SIGINT and SIGTERM from now until dispose() (a failed start) or the process's end
 * (a stop): `first` resolves with the first one. Every later one is absorbed (see the head of this
 * file); at the third, the operator is told that the stop is under way and how to end the process
 * at once.
 */
function stopSignals(logger: Logger, serving: () => boolean): { first: Promise<StopSignal>; dispose(): void } {
  let received = 0;
  let resolveFirst!: (signal: StopSignal) => void;
  const first = new Promise<StopSignal>((resolve) => (resolveFirst = resolve));
  const on = (signal: StopSignal) => {
    received++;
    if (received === 1) {
      if (!serving()) logger.info({ signal }, 'stop requested during start-up: stopping once started');
      resolveFirst(signal);
    } else if (received === 3) {
      process.stderr.write(
        `gatehouse: a stop is under way (what is in flight gets up to ${SHUTDOWN_TIMEOUT_MS / 1000} s); ` +
          "Ctrl-\\ (SIGQUIT) ends the process at once (an embedded data folder's lock then lapses after 15 s)\n",
      );
    }
  };
  const onInt = () => on('SIGINT');
  const onTerm = () => on('SIGTERM');
  process.on('SIGINT', onInt).on('SIGTERM', onTerm);
  return { first, dispose: () => process.off('SIGINT', onInt).off('SIGTERM', onTerm) };
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

/** The clean stop: 0 when everything closed in time, 1 when it failed or timed out. */
function stop(service: Service, logger: Logger, signal: StopSignal): Promise<number> {
  logger.info({ signal }, 'shutting down');
  return new Promise<number>((resolve) => {
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
  });
}
