import type { Config } from '../../config.js';
import { openDb, type Db } from '../../store/db.js';
import { pendingMigrations } from '../../store/migrate.js';
import { migrations } from '../../store/migrations/index.js';
import { StartFailure } from '../failure-line.js';
import { UsageError } from '../usage-error.js';

/** Which engine the configuration names: PostgreSQL with DATABASE_URL, else the embedded folder. */
export const configuredEngine = (config: Pick<Config, 'databaseUrl'>): 'postgres' | 'pglite' => (config.databaseUrl ? 'postgres' : 'pglite');

/** The configured database; `onLockLost` is called if the embedded folder's lock is lost while open. */
export function openConfiguredDb(config: Config, onLockLost?: (reason: string) => void): Promise<Db> {
  return config.databaseUrl
    ? openDb({ engine: 'postgres', url: config.databaseUrl, connectTimeoutSeconds: config.databaseConnectTimeoutSeconds })
    : openDb({ engine: 'pglite', dataDir: config.dataDir, ...(onLockLost ? { onLockLost } : {}) });
}

/**
 * Goes on only on a database at this version's schema; applies nothing. An operator command of a
 * newer version, run beside servers of the version before it (a rolling upgrade, a cron job),
 * must not change the schema under them: `gatehouse migrate` (or a newer `serve`) does that, when
 * the operator chooses. `empty`: the words for a database no server has started on.
 */
export async function requireCurrentSchema(db: Db, empty: string): Promise<void> {
  const pending = await pendingMigrations(db.kysely);
  if (pending.length === 0) return;
  if (pending.length === Object.keys(migrations).length) throw new UsageError(empty);
  throw new StartFailure(
    `the database lacks ${pending.length} migration${pending.length === 1 ? '' : 's'} of this version of gatehouse (the first: ${pending[0]}), and this command changes no schema: run it with the version the server runs, or apply them with gatehouse migrate`,
  );
}
