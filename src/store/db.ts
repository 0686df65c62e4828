// Opens the database: embedded PGlite (a folder, or an in-memory copy of a data-dir image for
// tests) or PostgreSQL (a pool). Both answer the same Kysely queries over one schema.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import type { Database } from './schema.js';
import { DatabaseUnreachableError, describeConnectionFailure } from './connection-error.js';
import { acquireDataDirLock, lockLostLine } from './data-dir-lock.js';
import { SchemaPostgresDialect } from './schema-introspector.js';
import { ChangeSignal } from './auth-changes.js';
import { WriteWatch } from './write-watch.js';
import { listenForChanges, type ListenerEvents } from './change-listener.js';

export type Engine = 'pglite' | 'postgres';

export interface Db {
  engine: Engine;
  kysely: Kysely<Database>;
  /** resolves when the database answers a trivial query */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** bumped by every write through `kysely` that changes what the authentication caches hold (write-watch.ts) */
  changes: ChangeSignal;
  /** the PGlite instance, for tests that snapshot it */
  pglite?: PGlite;
  /** PostgreSQL: `changes` also hears the changes other processes make (change-listener.ts), until
   *  close(). Once per database; later calls wait for the first. PGlite has no other process. */
  listenForChanges?: (events: ListenerEvents) => Promise<void>;
}

export type DbOptions =
  /** onLockLost: the folder's lock was lost while open (see data-dir-lock.ts); it must stop the
   *  process. By default: one line on standard error, exit 1. */
  | { engine: 'pglite'; dataDir: string; onLockLost?: (reason: string) => void }
  | { engine: 'pglite'; image: Blob }
  /** an instance lent by its owner (the tests' pool of migrated databases): close() gives it
   *  back instead of closing it, and every query after that is refused */
  | { engine: 'pglite'; lent: PGlite; giveBack: () => Promise<void> }
  | { engine: 'postgres'; url: string; schema?: string; poolSize?: number };

// int8 comes back from pg as text; PGlite would answer numbers (losing digits beyond 2^53).
// Both answer text: ids stay exact, and counts are converted where they are read.
const PGLITE_PARSERS = { 20: (value: string) => value };
/**
 * The embedded PostgreSQL's buffer cache. PostgreSQL's default, 128 MB, is zeroed at start inside
 * the WebAssembly memory, so a process held about 390 MB before its first request; at 32 MB it
 * holds about 100 MB less (docs/benchmarks.md). Pages beyond it are read from the operating
 * system's file cache; the tenants search at 100,000 tenants stays within its target. Given at
 * each start, never written to the folder's postgresql.conf.
 */
const PGLITE_OPTIONS = {
  extensions: { pg_trgm },
  parsers: PGLITE_PARSERS,
  startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'],
};

export async function openDb(options: DbOptions): Promise<Db> {
  if (options.engine === 'postgres') return openPostgres(options.url, options.schema, options.poolSize);
  let pglite: PGlite;
  let unlock = async () => {};
  let assertHeld = () => {};
  if ('dataDir' in options) {
    const dir = resolve(options.dataDir);
    mkdirSync(dir, { recursive: true });
    const lock = await acquireDataDirLock(dir, { onLost: options.onLockLost ?? exitOnLockLost });
    unlock = lock.release;
    assertHeld = lock.assertHeld;
    try {
      pglite = await PGlite.create(`${dir}/pgdata`, PGLITE_OPTIONS);
    } catch (err) {
      await unlock();
      throw new Error(`cannot open the embedded database in ${dir}/pgdata: ${(err as Error).message}`, { cause: err });
    }
  } else if ('lent' in options) {
    pglite = options.lent;
    let lent = true;
    assertHeld = () => {
      if (!lent) throw new Error('this database was closed');
    };
    unlock = async () => {
      if (!lent) return;
      lent = false;
      await options.giveBack();
    };
  } else {
    pglite = await pgliteFromImage(options.image);
  }
  // every query first checks that the folder's lease is still ours (a paused process may have lost it)
  const changes = new ChangeSignal();
  const kysely = new Kysely<Database>({ dialect: new PGliteDialect(pglite, assertHeld), plugins: [new WriteWatch(changes)] });
  return {
    engine: 'pglite',
    kysely,
    changes,
    pglite,
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    close: async () => {
      await kysely.destroy();
      if ('lent' in options) {
        await unlock();
        return;
      }
      if (!pglite.closed) {
        // PGlite does not fsync on its own; a checkpoint before close leaves a clean folder.
        await pglite.exec('checkpoint').catch(() => {});
        await pglite.close();
      }
      await unlock();
    },
  };
}

/** An embedded database in memory, loaded from a data-folder image (dumpDataDir). */
export function pgliteFromImage(image: Blob): Promise<PGlite> {
  return PGlite.create({ loadDataDir: image, ...PGLITE_OPTIONS });
}

async function openPostgres(url: string, schema: string | undefined, poolSize = 10): Promise<Db> {
  const searchPath = schema ? { options: `-c search_path=${schema},public` } : {};
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // fail fast when the server is unreachable instead of hanging requests
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    statement_timeout: 30000,
    ...searchPath,
  });
  // an idle client that loses its connection emits 'error'; the pool replaces it
  pool.on('error', () => {});
  // one connection up front: an unreachable database is reported at start, in words, rather
  // than as a bare ECONNREFUSED from the first query
  try {
    (await pool.connect()).release();
  } catch (err) {
    await pool.end().catch(() => {});
    throw new DatabaseUnreachableError(describeConnectionFailure(url, err), { cause: err });
  }
  const changes = new ChangeSignal();
  // other processes may write here: nothing is cached until their changes are heard (listenForChanges)
  changes.setReliable(false);
  const kysely = new Kysely<Database>({ dialect: new SchemaPostgresDialect({ pool }), plugins: [new WriteWatch(changes)] });
  // closed with the database: an open listening connection would keep the process alive
  let listening: Promise<{ close(): Promise<void> }> | undefined;
  return {
    engine: 'postgres',
    kysely,
    changes,
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    close: async () => {
      await (await listening?.catch(() => undefined))?.close();
      await kysely.destroy();
    },
    listenForChanges: async (events) => {
      // one listener per database, however many services share it: they share its signal too
      listening ??= listenForChanges(
        // named in pg_stat_activity, with the schema when there is one (tests run many side by side)
        { connectionString: url, connectionTimeoutMillis: 5000, application_name: `gatehouse changes${schema ? ` ${schema}` : ''}`, ...searchPath },
        changes,
        events,
      );
      await listening;
    },
  };
}

function exitOnLockLost(reason: string): void {
  process.stderr.write(lockLostLine(reason));
  process.exit(1);
}
