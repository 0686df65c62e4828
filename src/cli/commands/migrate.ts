// gatehouse migrate: apply the missing migrations and exit. It seals nothing, so it needs no
// GATEHOUSE_ENCRYPTION_KEY; it takes the embedded folder's lock like serve does.
import type { Config } from '../../config.js';
import { migrateToLatest } from '../../store/migrate.js';
import { openConfiguredDb } from './open-db.js';

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
