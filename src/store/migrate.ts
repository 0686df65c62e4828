// Applies the migrations that are missing. Safe with several processes on one PostgreSQL:
// Kysely's migrator holds an advisory lock while it works.
import { Migrator, sql, type Kysely } from 'kysely';
import { migrations } from './migrations/index.js';

async function migratorOf<DB>(db: Kysely<DB>): Promise<Migrator> {
  // Unless told the schema, Kysely takes a migration table found in ANY schema for its own, so
  // a second database in another schema of the same PostgreSQL (search_path) would fail to
  // migrate. Name the schema the tables are created in: the current one.
  const current = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = current.rows[0]?.schema ?? undefined;
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

export async function migrateToLatest<DB>(db: Kysely<DB>): Promise<string[]> {
  const { error, results } = await (await migratorOf(db)).migrateToLatest();
  if (error) throw new Error(`migration failed: ${(error as Error).message ?? String(error)}`, { cause: error });
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The migrations of this version that the database has not applied, oldest first (none: it is
 *  current). Only reads: a database without the migrations' table has them all pending. */
export async function pendingMigrations<DB>(db: Kysely<DB>): Promise<string[]> {
  const known = await (await migratorOf(db)).getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
