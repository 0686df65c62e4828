import type { Config } from '../../config.js';
import { openDb, type Db } from '../../store/db.js';

export function openConfiguredDb(config: Config): Promise<Db> {
  return config.databaseUrl ? openDb({ engine: 'postgres', url: config.databaseUrl }) : openDb({ engine: 'pglite', dataDir: config.dataDir });
}
