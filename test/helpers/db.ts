// A fresh, migrated database per test app. PGlite: a data-dir image of the migrated schema is
// built once and cached on disk (keyed by the migrations' content), then loaded per app in about
// half a second instead of a 5-second cold start. PostgreSQL: a database of its own per app on
// TEST_DATABASE_URL's server, copied from a migrated template database (CREATE DATABASE …
// TEMPLATE: tens of milliseconds instead of running every migration), dropped on close. The
// template is built once per set of migrations, by whichever test process gets there first.
import { ChangeSignal } from '../../src/store/auth-changes.js';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import pg from 'pg';
import { openDb, pgliteFromImage, type Db, type Engine } from '../../src/store/db.js';
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

/** A test database; on PostgreSQL also its URL, for a test that opens a second connection to it
 *  (another process's pool, a listener to cut). */
export type TestDb = Db & { url?: string };

export async function openTestDb(engine: Engine): Promise<TestDb> {
  if (engine === 'pglite') {
    const pglite = await leasePglite();
    return openDb({ engine: 'pglite', lent: pglite, giveBack: () => giveBack(pglite) });
  }
  templatePromise ??= migratedTemplate();
  return openTestDatabase(8, await templatePromise);
}

// PGlite instances are lent and given back: loading the image costs about half a CPU-second, and
// a suite opens about a hundred. A database given back is emptied (every table but the
// migrations' emptied, its sequences restarted, the session reset) and checked: the same tables,
// columns, indexes, constraints, triggers and functions as the migrated image, or it is closed
// instead. The migrations write no rows of their own, so empty is what a fresh copy holds.
const idle: PGlite[] = [];
// an open PGlite keeps its process alive: the idle ones are closed after the process's last test
after(async () => {
  for (const pglite of idle.splice(0)) await pglite.close().catch(() => {});
});
let schemaPromise: Promise<string> | undefined;

/** Everything a test could have changed in the schema, as one string to compare. */
async function schemaOf(pglite: PGlite): Promise<string> {
  const { rows } = await pglite.query<{ d: string }>(
    `select string_agg(d, E'\n' order by d) as d from (
       select format('column %s.%s %s %s %s', table_name, column_name, data_type, is_nullable, column_default) as d
         from information_schema.columns where table_schema = current_schema()
       union all select format('index %s', indexdef) from pg_indexes where schemaname = current_schema()
       union all select format('constraint %s %s', conname, pg_get_constraintdef(c.oid))
         from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = current_schema()
       union all select format('trigger %s %s', tgname, pg_get_triggerdef(t.oid))
         from pg_trigger t join pg_class r on r.oid = t.tgrelid join pg_namespace n on n.oid = r.relnamespace
         where n.nspname = current_schema() and not t.tgisinternal
       union all select format('function %s %s', p.proname, md5(pg_get_functiondef(p.oid)))
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = current_schema()
       union all select format('relation %s %s', relname, relkind)
         from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema()
     ) s`,
  );
  return rows[0]?.d ?? '';
}

async function leasePglite(): Promise<PGlite> {
  const reused = idle.pop();
  if (reused) return reused;
  imagePromise ??= pgliteImage();
  const pglite = await pgliteFromImage(new Blob([await imagePromise]));
  schemaPromise ??= schemaOf(pglite);
  await schemaPromise;
  return pglite;
}

async function giveBack(pglite: PGlite): Promise<void> {
  if (pglite.closed) return;
  try {
    // a transaction a test left open is rolled back (outside one, PostgreSQL only warns)
    await pglite.exec('rollback');
    const { rows } = await pglite.query<{ t: string }>(
      `select format('%I', relname) as t from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind in ('r', 'p') and relname not like 'gatehouse_migrations%'`,
    );
    // emptied by DELETE, with the foreign keys' and every other trigger's firing off meanwhile
    // (session_replication_role): TRUNCATE gives each table new files, 70-160 CPU-ms a time in
    // PGlite's file system, where these few rows take under 10; the sequences start again as
    // TRUNCATE ... RESTART IDENTITY would start them
    await pglite.exec(
      `set session_replication_role = replica; ${rows.map((r) => `delete from ${r.t};`).join(' ')} set session_replication_role = origin;`,
    );
    await pglite.query(
      `select setval(format('%I', c.relname)::regclass, s.seqstart, false)
         from pg_sequence s join pg_class c on c.oid = s.seqrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema()`,
    );
    await pglite.exec('reset all; select pg_advisory_unlock_all()');
    const applied = await pglite.query<{ n: string }>('select count(*) as n from gatehouse_migrations');
    if ((await schemaOf(pglite)) === (await schemaPromise) && Number(applied.rows[0]!.n) === Object.keys(migrations).length) {
      idle.push(pglite);
      return;
    }
  } catch {
    // not reusable: closed below
  }
  await pglite.close().catch(() => {});
}

let templatePromise: Promise<string> | undefined;

/** The server's URL with another database. */
function databaseUrl(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminClient(): Promise<pg.Client> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  return c;
}

/** The migrated template's name: built here unless another process did (an advisory lock
 *  serialises the check), migrated in a database of its own name, then renamed, so a template
 *  that exists is complete. Nobody stays connected to it: CREATE DATABASE … TEMPLATE needs that. */
async function migratedTemplate(): Promise<string> {
  const template = `gh_test_tpl_${migrationsHash()}`;
  const c = await adminClient();
  try {
    await c.query('select pg_advisory_lock(hashtext($1))', [template]);
    const found = await c.query('select 1 from pg_database where datname = $1', [template]);
    if (found.rowCount === 0) {
      const building = `${template}_${process.pid}`;
      await c.query(`drop database if exists ${building}`);
      await c.query(`create database ${building}`);
      const db = await openDb({ engine: 'postgres', url: databaseUrl(process.env.TEST_DATABASE_URL!, building), poolSize: 2 });
      try {
        await migrateToLatest(db.kysely);
      } finally {
        await db.close();
      }
      await c.query(`alter database ${building} rename to ${template}`);
    }
    await c.query('select pg_advisory_unlock(hashtext($1))', [template]);
  } finally {
    await c.end();
  }
  return template;
}

/** A PostgreSQL database of its own on TEST_DATABASE_URL's server (empty, or a copy of
 *  `template`), dropped when the Db closes. */
async function openTestDatabase(poolSize: number, template?: string): Promise<TestDb> {
  const name = `gh_test_${randomBytes(6).toString('hex')}`;
  const c = await adminClient();
  try {
    await c.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await c.end();
  }
  const url = databaseUrl(process.env.TEST_DATABASE_URL!, name);
  const db = await openDb({ engine: 'postgres', url, poolSize });
  return {
    ...db,
    url,
    close: async () => {
      await db.close();
      const admin = await adminClient();
      try {
        await admin.query(`drop database if exists ${name} with (force)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A database with no tables yet, for migration tests (PGlite: a fresh instance, about 5 s). */
export async function openEmptyTestDb(engine: Engine): Promise<TestDb> {
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
  return openTestDatabase(2);
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
