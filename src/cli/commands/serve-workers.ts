// gatehouse serve with GATEHOUSE_WORKERS above 1 (PostgreSQL only): this process is the cluster
// primary (node:cluster). It serves no request itself: it starts the workers (each one runs the
// ordinary `serve`, sharing the port, which the primary hands out connection by connection), the
// first alone so that migrations and a first start's bootstrap run once, then the rest together.
// A worker that dies later is replaced (at most 5 times a minute, else everything stops with exit
// 1). SIGTERM or SIGINT stops every worker gracefully (a repeated signal changes nothing: npm and
// npx pass each Ctrl-C on, so it arrives twice); when all of them exited 0, the exit code is 0
// after SIGTERM and 130 after SIGINT, as for a single process (serve.ts). With
// GATEHOUSE_METRICS_PORT, /metrics is served here, the sum of every worker's (prom-client's
// cluster aggregation), never by the workers.
import cluster, { type Worker } from 'node:cluster';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];
import type { Config } from '../../config.js';
import { createLogger } from '../../logger.js';
import { listenFailure } from '../failure-line.js';
import { EXIT_INTERRUPTED, exitAfterStop } from '../exit-codes.js';

const RESTARTS_PER_MINUTE = 5;
const SCRAPE_TIMEOUT_MS = 2_000;
export const METRICS_REQUEST = 'gatehouse:metrics';

class WorkerFailed extends Error {
  constructor(readonly code: number) {
    super(`a worker exited during start-up (code ${code})`);
  }
}

export async function serveWorkers(config: Config): Promise<number> {
  const logger = createLogger(config.logLevel).child({ role: 'primary' });
  let stopping: Promise<number> | undefined;
  let stopped!: (code: number) => void;
  const done = new Promise<number>((resolve) => (stopped = resolve));
  /** a crash loop ends the service with exit 1 whatever the workers' own codes */
  let failed = false;
  let metricsApp: FastifyInstance | undefined;
  const stop = (signal: string): Promise<number> =>
    (stopping ??= stopAll(logger, signal).then(async (code) => {
      await metricsApp?.close();
      const result = failed || code !== 0 ? 1 : signal === 'SIGINT' ? EXIT_INTERRUPTED : 0;
      stopped(result);
      return result;
    }));
  process.on('SIGTERM', () => void stop('SIGTERM')).on('SIGINT', () => void stop('SIGINT'));

  try {
    // the first worker migrates and bootstraps alone; the others find it done
    await fork();
    await Promise.all(Array.from({ length: config.workers - 1 }, fork));
  } catch (err) {
    const code = err instanceof WorkerFailed ? err.code || 1 : 1;
    if (!(err instanceof WorkerFailed)) logger.fatal({ err }, 'start-up failed');
    await stop('start-up failure');
    return code;
  }
  if (stopping) return exitAfterStop(await stopping);

  if (config.metricsPort !== undefined) {
    try {
      metricsApp = await serveMetrics(config, logger);
    } catch (err) {
      await stop('start-up failure');
      throw err;
    }
  }
  if (stopping) return exitAfterStop(await stopping);
  logger.info({ workers: config.workers, region: config.region, baseUrl: config.baseUrl }, 'gatehouse serving');

  const restarts: number[] = [];
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    const now = Date.now();
    restarts.push(now);
    while (restarts[0]! < now - 60_000) restarts.shift();
    if (restarts.length > RESTARTS_PER_MINUTE) {
      logger.fatal({ worker: worker.id, code, signal }, `workers keep dying (more than ${RESTARTS_PER_MINUTE} in a minute); stopping`);
      failed = true;
      void stop('crash loop');
      return;
    }
    logger.error({ worker: worker.id, code, signal }, 'a worker exited; starting another');
    fork().catch((err: unknown) => logger.error({ err }, 'a replacement worker failed to start'));
  });
  return exitAfterStop(await done);
}

/** Starts one worker; resolves once it listens, rejects if it exits first. */
function fork(): Promise<Worker> {
  const worker = cluster.fork();
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new WorkerFailed(code));
    worker.once('exit', onExit);
    worker.once('listening', () => {
      worker.off('exit', onExit);
      resolve(worker);
    });
  });
}

async function stopAll(logger: Logger, reason: string): Promise<number> {
  logger.info({ reason }, 'stopping the workers');
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
  const codes = await Promise.all(
    workers.map(
      (w) =>
        new Promise<number>((resolve) => {
          w.once('exit', (code, signal) => resolve(signal ? 1 : code));
          w.process.kill('SIGTERM');
        }),
    ),
  );
  return codes.every((c) => c === 0) ? 0 : 1;
}

/** /metrics on GATEHOUSE_METRICS_PORT: every live worker's registry, summed. */
async function serveMetrics(config: Config, logger: Logger): Promise<FastifyInstance> {
  let next = 0;
  const ask = (worker: Worker): Promise<WorkerMetrics> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => {
        worker.off('message', onMessage);
        reject(new Error(`worker ${worker.id} did not answer for its metrics`));
      }, SCRAPE_TIMEOUT_MS);
      const onMessage = (msg: { type?: string; id?: number; metrics?: WorkerMetrics }) => {
        if (msg?.type !== METRICS_REQUEST || msg.id !== id) return;
        clearTimeout(timer);
        worker.off('message', onMessage);
        resolve(msg.metrics ?? []);
      };
      worker.on('message', onMessage);
      worker.send({ type: METRICS_REQUEST, id });
    });
  const app = Fastify({ loggerInstance: logger.child({ listener: 'metrics' }, { level: 'warn' }) });
  app.get('/metrics', async (_request, reply) => {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    const registry = AggregatorRegistry.aggregate(await Promise.all(workers.map(ask)));
    reply.type(registry.contentType);
    return registry.metrics();
  });
  try {
    await app.listen({ host: config.host, port: config.metricsPort! });
  } catch (err) {
    throw listenFailure(err, config.host, config.metricsPort!, 'GATEHOUSE_METRICS_PORT');
  }
  return app as unknown as FastifyInstance;
}
