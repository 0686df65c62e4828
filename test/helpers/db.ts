// A fresh, migrated database per test app. PGlite: a data-dir image of the migrated schema is
// built once and cached on disk (keyed by the migrations' content), then loaded per app in about
// half a second instead of a 5-second cold start. PostgreSQL: a schema of its own per app in
// TEST_DATABASE_URL, dropped on close.
import { ChangeSignal } from '../../src/store/auth-changes.js';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import pg from 'pg';
import { openDb, type Db, type Engine } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { PGliteDialect } from '../../src/store/pglite-dialect.js';
import { Kysely, Migrator, sql } from 'kysely';
import { migrations } from '../../src/store/migrations/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function migrationsHash(): string {
  const dir = join(root, 'src', 'store', 'migrations');
  const h = createHash('sha256');
  for (const name of readdirSync(dir).sort()) h.update(name).update(readFileSync(join(dir, name)));
  h.update(readFileSync(join(root, 'package-lock.json')));
  return h.digest('hex').slice(0, 16);
}

let imagePromise: Promise<Buffer> | undefined;

async function pgliteImage(): Promise<Buffer> {
  const cacheDir = join(root, 'node_modules', '.cache', 'gatehouse-test');
  const file = join(cacheDir, `pglite-${migrationsHash()}.tar`);
  if (existsSync(file)) return readFileSync(file);
  const pglite = await PGlite.create({ extensions: { pg_trgm } });
  const kysely = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
  await migrateToLatest(kysely);
  const blob = await pglite.dumpDataDir('none');
  await pglite.close();
  const bytes = Buffer.from(await blob.arrayBuffer());
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, file);
  return bytes;
}

export async function openTestDb(engine: Engine): Promise<Db> {
  if (engine === 'pglite') {
    imagePromise ??= pgliteImage();
    const image = await imagePromise;
    return openDb({ engine: 'pglite', image: new Blob([image]) });
  }
  const db = await openTestSchema(8);
  try {
    await migrateToLatest(db.kysely);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** A PostgreSQL schema of its own in TEST_DATABASE_URL, dropped when the Db closes. */
async function openTestSchema(poolSize: number): Promise<Db> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(statement);
    await c.end();
  };
  await admin(`create schema ${schema}`);
  const db = await openDb({ engine: 'postgres', url, schema, poolSize });
  return {
    ...db,
    close: async () => {
      await db.close();
      await admin(`drop schema if exists ${schema} cascade`);
    },
  };
}

/** A database with no tables yet, for migration tests (PGlite: a fresh instance, about 5 s). */
export async function openEmptyTestDb(engine: Engine): Promise<Db> {
  if (engine === 'pglite') {
    const pglite = await PGlite.create({ extensions: { pg_trgm }, parsers: { 20: (value: string) => value } });
    const kysely = new Kysely<any>({ dialect: new PGliteDialect(pglite) });
    return {
      engine,
      kysely,
      pglite,
      // a migration test writes nothing a cache holds (createService gets no such database)
      changes: new ChangeSignal(),
      ping: async () => {},
      close: async () => {
        await kysely.destroy();
        await pglite.close();
      },
    };
  }
  return openTestSchema(2);
}

/** Applies the migrations up to and including `name` (the schema as a release before it had it). */
export async function migrateUpTo(db: Db, name: string): Promise<void> {
  const current = await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely);
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'gatehouse_migrations',
    migrationLockTableName: 'gatehouse_migrations_lock',
    migrationTableSchema: current.rows[0]!.schema,
  });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error;
}
