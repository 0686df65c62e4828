// gatehouse migrate: apply the missing migrations and exit. It seals nothing, so it needs no
// GATEHOUSE_ENCRYPTION_KEY; it takes the embedded folder's lock like serve does.
import type { Config, Variable } from '../../config.js';
import { migrateToLatest } from '../../store/migrate.js';
import { openConfiguredDb } from './open-db.js';

export const MIGRATE_USAGE = `Usage: gatehouse migrate [--database-url URL | --data-dir DIR]

Applies the missing database migrations and exits (gatehouse serve also applies
them at start). Safe while other processes use the same PostgreSQL (the
migrations take a database lock); on the embedded database it needs the data
folder's lock, like serve. It needs no GATEHOUSE_ENCRYPTION_KEY.
`;

/** The settings migrate reads (its help lists them, from the table of settings). */
export const MIGRATE_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR'];

export async function migrateCommand(config: Config): Promise<number> {
  const db = await openConfiguredDb(config);
  try {
    const applied = await migrateToLatest(db.kysely);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  } finally {
    await db.close();
  }
}
