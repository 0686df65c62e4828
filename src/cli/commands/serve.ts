// gatehouse serve: open the database, compose the service, listen; on SIGTERM or SIGINT stop
// accepting, finish in-flight requests, write buffered state, close the database.
import type { Config } from '../../config.js';
import { formatBootstrapNotice } from '../../bootstrap/bootstrap.js';
import { createLogger } from '../../logger.js';
import { createService } from '../../compose.js';
import { openConfiguredDb } from './open-db.js';

const SHUTDOWN_TIMEOUT_MS = 10_000;

export async function serveCommand(config: Config): Promise<number> {
  const logger = createLogger(config.logLevel);
  const db = await openConfiguredDb(config);
  let service;
  try {
    service = await createService({ config, db, logger });
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  // the only time generated secrets are shown: standard output, not the log
  if (service.bootstrapped) process.stdout.write(formatBootstrapNotice(service.bootstrapped));
  await service.app.listen({ port: config.port, host: config.host });
  logger.info({ engine: db.engine, region: config.region, baseUrl: config.baseUrl }, 'gatehouse serving');
  if (config.databaseUrl && !config.encryptionKey) {
    logger.warn(
      'GATEHOUSE_ENCRYPTION_KEY is not set: the signing key is sealed with a key file in GATEHOUSE_DATA_DIR; ' +
        'other processes on this database need the same key (set GATEHOUSE_ENCRYPTION_KEY and GATEHOUSE_BASE_URL alike on all of them)',
    );
  }

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
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
