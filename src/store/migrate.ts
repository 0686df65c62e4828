// Applies the migrations that are missing. Safe with several processes on one PostgreSQL:
// Kysely's migrator holds an advisory lock while it works.
import { Migrator, sql, type Kysely } from 'kysely';
import { migrations } from './migrations/index.js';

export async function migrateToLatest<DB>(db: Kysely<DB>): Promise<string[]> {
  // Unless told the schema, Kysely takes a migration table found in ANY schema for its own, so
  // a second database in another schema of the same PostgreSQL (search_path) would fail to
  // migrate. Name the schema the tables are created in: the current one.
  const current = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = current.rows[0]?.schema ?? undefined;
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw new Error(`migration failed: ${(error as Error).message ?? String(error)}`, { cause: error });
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
