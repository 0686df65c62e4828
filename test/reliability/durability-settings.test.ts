// A PostgreSQL server that may lose what it acknowledges (fsync off, or synchronous_commit off for
// Gatehouse's sessions) is refused by `serve`, before anything is written, with one line that
// says what is wrong and how to put it right; GATEHOUSE_ALLOW_NON_DURABLE_DATABASE lets a
// throwaway test database through, with a warning in the log. synchronous_commit is set on a
// database of its own here (a database's setting wins over the server's, as a role's does);
// fsync is a setting of the whole server, shared by every test, so its words are checked on the
// rule alone.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { durabilityProblems, readDurabilitySettings } from '../../src/store/durability.js';
import { openTestDb } from '../helpers/db.js';
import {
  createDatabase,
  ENCRYPTION_KEY,
  ensureBuilt,
  exitOf,
  freePort,
  gatehouse,
  killAll,
  oneLine,
  PATIENCE_MS,
  stop,
  waitHealthy,
} from '../helpers/cli.js';

describe('durability of the database: the rule', () => {
  it('fsync off, or synchronous_commit off, may lose an acknowledged write; local and remote_write do not', () => {
    assert.deepEqual(durabilityProblems({ fsync: 'on', synchronous_commit: 'on' }), []);
    for (const level of ['local', 'remote_write', 'remote_apply'])
      assert.deepEqual(durabilityProblems({ fsync: 'on', synchronous_commit: level }), []);
    const both = durabilityProblems({ fsync: 'off', synchronous_commit: 'off' });
    assert.deepEqual(
      both.map((p) => p.problem),
      ['fsync is off', 'synchronous_commit is off'],
    );
    assert.match(both[0]!.fix, /ALTER SYSTEM SET fsync = on/);
    assert.match(both[1]!.fix, /ALTER SYSTEM SET synchronous_commit = on.*RESET synchronous_commit/);
  });
});

describe('durability of the database: PGlite', () => {
  // docs/operations.md ("Durability") says what PGlite keeps because it runs without fsync: an
  // upgrade of PGlite that changes that fails here, so that the page is read again
  it('runs with fsync off, as docs/operations.md says, so serve does not check it', async () => {
    const db = await openTestDb('pglite');
    try {
      const settings = await readDurabilitySettings(db);
      assert.equal(settings.fsync, 'off');
      assert.deepEqual(
        durabilityProblems(settings).map((p) => p.problem),
        ['fsync is off'],
      );
    } finally {
      await db.close();
    }
  });
});

describe('durability of the database: serve on PostgreSQL', { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL' }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-durability-'));
  const drops: (() => Promise<void>)[] = [];
  after(async () => {
    await killAll();
    for (const drop of drops) await drop();
    rmSync(tmp, { recursive: true, force: true });
  });

  async function nonDurableDatabase(): Promise<{ url: string; name: string }> {
    ensureBuilt();
    const db = await createDatabase('gh_durability');
    drops.push(db.drop);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`alter database ${db.name} set synchronous_commit = off`);
    await admin.end();
    return db;
  }

  async function tablesIn(url: string): Promise<number> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query<{ n: string }>("select count(*) as n from information_schema.tables where table_schema = 'public'");
    await c.end();
    return Number(rows[0]!.n);
  }

  it('refuses a database whose sessions commit without waiting for the disk, in one line, before writing anything', async () => {
    const db = await nonDurableDatabase();
    const p = gatehouse(['serve'], {
      DATABASE_URL: db.url,
      GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      GATEHOUSE_DATA_DIR: tmp,
      PORT: String(await freePort()),
    });
    const r = await exitOf(p, PATIENCE_MS);
    assert.equal(r.code, 1, p.stderr());
    const line = oneLine(p);
    assert.match(line, /the PostgreSQL server may lose writes it has acknowledged, in a crash \(synchronous_commit is off\)/);
    assert.match(line, /ALTER SYSTEM SET synchronous_commit = on/);
    assert.match(line, /GATEHOUSE_ALLOW_NON_DURABLE_DATABASE=true/);
    assert.doesNotMatch(line, /fsync is/, 'only what is wrong is named');
    assert.equal(await tablesIn(db.url), 0, 'no migration ran');
  });

  it('with GATEHOUSE_ALLOW_NON_DURABLE_DATABASE=true it starts, and the log says what may be lost', async () => {
    const db = await nonDurableDatabase();
    const port = await freePort();
    const p = gatehouse(['serve'], {
      DATABASE_URL: db.url,
      GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      GATEHOUSE_ALLOW_NON_DURABLE_DATABASE: 'true',
      GATEHOUSE_DATA_DIR: tmp,
      PORT: String(port),
    });
    await waitHealthy(p, port);
    assert.match(p.stdout(), /"level":40,.*"problems":\["synchronous_commit is off"\],.*"msg":"the database may lose acknowledged writes in a crash/);
    await stop(p);
  });
});
