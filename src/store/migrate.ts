// Applies the migrations that are missing. Safe with several processes on one PostgreSQL:
// Kysely's migrator holds an advisory lock while it works.
import { Migrator, type Kysely } from 'kysely';
import { migrations } from './migrations/index.js';

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw new Error(`migration failed: ${(error as Error).message ?? String(error)}`, { cause: error });
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
