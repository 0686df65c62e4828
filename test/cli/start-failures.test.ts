// A start that fails, through the executable: it exits within seconds, non-zero, with one line on
// standard error that says what happened and what to do, and leaves nothing held behind (the next
// start on the same folder succeeds at once). A port in use (both engines, both listeners); an
// unreachable database (refused, unknown host, missing database), its password never shown; and
// PostgreSQL without GATEHOUSE_ENCRYPTION_KEY, refused before the database is touched.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ENCRYPTION_KEY,
  PATIENCE_MS,
  createDatabase,
  ensureBuilt,
  exitOf,
  freePort,
  gatehouse,
  killAll,
  LINGER_MS,
  lingeredMs,
  migratedDataDir,
  occupiedPort,
  oneLine,
  stop,
  waitHealthy,
} from '../helpers/cli.js';

// A failed start must not hang: it exits at all (exitOf's patience), and once it has said why it
// failed nothing keeps it alive (LINGER_MS). How long a start takes is measured by
// `npm run bench:start`, not here: on a loaded machine that time says nothing about the product.
/** once it has said why it failed, nothing may keep it alive */
const PASSWORD = 'S3cret-pw-never-shown';

// every case is independent (a folder, a port, a database of its own) and waits on the process it starts: they run at once
describe('failed starts (gatehouse executable)', { concurrency: true }, () => {
  let tmp: string;
  before(() => {
    ensureBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-fail-'));
  });
  after(async () => {
    await killAll();
    rmSync(tmp, { recursive: true, force: true });
  });

  describe('a port in use', () => {
    it('on an existing embedded folder: exits non-zero in one line naming the address, and releases the lock', async () => {
      const dataDir = await migratedDataDir(join(tmp, 'port-in-use'));
      const busy = await occupiedPort();
      try {
        const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(busy.port) });
        const r = await exitOf(p, PATIENCE_MS);
        assert.notEqual(r.code, 0);
        assert.equal(r.signal, null);
        assert.ok(lingeredMs(p) <= LINGER_MS, `it lived on ${lingeredMs(p)} ms after reporting the failure`);
        const line = oneLine(p);
        assert.match(line, new RegExp(`127\\.0\\.0\\.1:${busy.port}\\b`));
        assert.match(line, /already in use/);
        assert.match(line, /stop the other process or set PORT/);
      } finally {
        await busy.close();
      }
      // nothing was left holding the folder: the next start serves at once
      const port = await freePort();
      const next = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(next, port);
      await stop(next);
    });

    it('for GATEHOUSE_METRICS_PORT: the line names that variable', async () => {
      // migrated, never served: this start is the folder's first
      const dataDir = await migratedDataDir(join(tmp, 'metrics-port-in-use'));
      const busy = await occupiedPort();
      try {
        const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(await freePort()), GATEHOUSE_METRICS_PORT: String(busy.port) });
        const r = await exitOf(p, PATIENCE_MS);
        assert.notEqual(r.code, 0);
        assert.ok(lingeredMs(p) <= LINGER_MS, `it lived on ${lingeredMs(p)} ms after reporting the failure`);
        const line = oneLine(p);
        assert.match(line, new RegExp(`127\\.0\\.0\\.1:${busy.port}\\b`));
        assert.match(line, /stop the other process or set GATEHOUSE_METRICS_PORT/);
        // it was the folder's first start: the credentials were printed before the failure, and
        // the line says they are real (no later start prints them again)
        assert.match(p.stdout(), /client_secret: +gatehouse_cs_/);
        assert.match(line, /credentials printed above were created and stay valid/);
      } finally {
        await busy.close();
      }
      const port = await freePort();
      const next = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(next, port);
      await stop(next);
    });

    it('on PostgreSQL: exits non-zero in one line, its pool closed', {
      skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set',
    }, async () => {
      const db = await createDatabase('gh_fail');
      const busy = await occupiedPort();
      try {
        const p = gatehouse(['serve'], {
          DATABASE_URL: db.url,
          GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
          GATEHOUSE_DATA_DIR: join(tmp, 'pg-port'),
          PORT: String(busy.port),
        });
        const r = await exitOf(p, PATIENCE_MS);
        assert.notEqual(r.code, 0);
        assert.equal(r.signal, null);
        assert.ok(lingeredMs(p) <= LINGER_MS, `it lived on ${lingeredMs(p)} ms after reporting the failure`);
        const line = oneLine(p);
        assert.match(line, new RegExp(`127\\.0\\.0\\.1:${busy.port}\\b`));
        assert.match(line, /stop the other process or set PORT/);
      } finally {
        await busy.close();
        await db.drop();
      }
    });
  });

  describe('an unreachable database', () => {
    for (const command of ['serve', 'migrate']) {
      it(`${command}: connection refused, in one line naming DATABASE_URL (password hidden), host and port`, async () => {
        const port = await freePort(); // nothing listens there
        const url = `postgres://gatehouse:${PASSWORD}@127.0.0.1:${port}/gatehouse`;
        const p = gatehouse([command], { DATABASE_URL: url, GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY });
        const r = await exitOf(p, PATIENCE_MS);
        assert.notEqual(r.code, 0);
        assert.ok(lingeredMs(p) <= LINGER_MS, `it lived on ${lingeredMs(p)} ms after reporting the failure`);
        const line = oneLine(p);
        assert.ok(line.includes(`DATABASE_URL=postgres://gatehouse:***@127.0.0.1:${port}/gatehouse`), line);
        assert.match(line, new RegExp(`127\\.0\\.0\\.1 port ${port}\\b`));
        assert.match(line, /connection refused/);
        assert.match(line, /check that PostgreSQL is running/);
        assert.equal((p.stdout() + p.stderr()).includes(PASSWORD), false, 'the password is never printed');
      });
    }

    it('an unknown host: "host not found"', async () => {
      const url = `postgresql://gatehouse:${PASSWORD}@gatehouse-db.invalid:5432/gatehouse`;
      // the subject is the name lookup's failure, not the connect timeout: this machine's resolver
      // once took longer than the default 5 s to say "no such name" under load (CI)
      const p = gatehouse(['migrate'], { DATABASE_URL: url, GATEHOUSE_DATABASE_CONNECT_TIMEOUT_SECONDS: '30' });
      const r = await exitOf(p, PATIENCE_MS);
      assert.notEqual(r.code, 0);
      const line = oneLine(p);
      assert.match(line, /gatehouse-db\.invalid port 5432/);
      assert.match(line, /host not found/);
      assert.match(line, /check the host name/);
      assert.equal((p.stdout() + p.stderr()).includes(PASSWORD), false, 'the password is never printed');
    });

    it('a database that does not exist', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, async () => {
      const u = new URL(process.env.TEST_DATABASE_URL!);
      u.pathname = '/gh_no_such_database';
      for (const command of ['serve', 'migrate']) {
        const p = gatehouse([command], { DATABASE_URL: u.toString(), GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY, PORT: String(await freePort()) });
        const r = await exitOf(p, PATIENCE_MS);
        assert.notEqual(r.code, 0);
        const line = oneLine(p);
        assert.match(line, /database "gh_no_such_database" does not exist/);
        assert.match(line, /create it/);
        assert.ok(line.includes(`${u.hostname} port ${u.port || 5432}`), line);
      }
    });
  });

  describe('PostgreSQL without GATEHOUSE_ENCRYPTION_KEY', () => {
    it('serve is refused before the database is touched, naming the variable and how to make a key', async () => {
      // nothing listens on this port: a connection attempt would fail differently
      const url = `postgres://gatehouse:${PASSWORD}@127.0.0.1:${await freePort()}/gatehouse`;
      const p = gatehouse(['serve'], { DATABASE_URL: url, PORT: String(await freePort()) });
      const r = await exitOf(p, PATIENCE_MS);
      assert.notEqual(r.code, 0);
      const line = oneLine(p);
      assert.match(line, /GATEHOUSE_ENCRYPTION_KEY/);
      assert.match(line, /openssl rand -hex 32/);
      assert.doesNotMatch(line, /connect|refused|ECONN/i, 'the database was not contacted');
      assert.equal((p.stdout() + p.stderr()).includes(PASSWORD), false);
    });

    it('migrate does not need the key', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set' }, async () => {
      const db = await createDatabase('gh_mig_nokey');
      try {
        const p = gatehouse(['migrate'], { DATABASE_URL: db.url });
        const r = await exitOf(p, PATIENCE_MS);
        assert.equal(r.code, 0, p.stderr());
        assert.match(p.stdout(), /^applied: /m);
      } finally {
        await db.drop();
      }
    });
  });
});
