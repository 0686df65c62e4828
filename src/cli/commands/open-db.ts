import type { Config } from '../../config.js';
import { openDb, type Db } from '../../store/db.js';

/** The configured database; `onLockLost` is called if the embedded folder's lock is lost while open. */
export function openConfiguredDb(config: Config, onLockLost?: (reason: string) => void): Promise<Db> {
  return config.databaseUrl
    ? openDb({ engine: 'postgres', url: config.databaseUrl, connectTimeoutSeconds: config.databaseConnectTimeoutSeconds })
    : openDb({ engine: 'pglite', dataDir: config.dataDir, ...(onLockLost ? { onLockLost } : {}) });
}
