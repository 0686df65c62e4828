// A fresh, migrated database per test app. PGlite: a data-dir image of the migrated schema is
// built once and cached on disk (keyed by the migrations' content), then loaded per app in about
// half a second instead of a 5-second cold start. PostgreSQL: a schema of its own per app in
// TEST_DATABASE_URL, dropped on close.
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
import { Kysely } from 'kysely';

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
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `gh_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const dropSchema = async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  };
  const db = await openDb({ engine: 'postgres', url, schema, poolSize: 8 });
  try {
    await migrateToLatest(db.kysely);
  } catch (err) {
    await db.close();
    await dropSchema();
    throw err;
  }
  const close = db.close;
  return {
    ...db,
    close: async () => {
      await close();
      await dropSchema();
    },
  };
}
