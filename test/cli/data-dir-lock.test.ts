// The embedded data folder's lock, through the executable: a lease that holds across PID
// namespaces (a holder whose pid this process cannot see still refuses a second start), that its
// holder keeps refreshing while it serves, that is taken over once stale, that a clean stop
// releases, and whose loss (the file deleted or taken over) makes the holder stop at once.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  LINGER_MS,
  lingeredMs,
  PATIENCE_MS,
  ensureBuilt,
  exitOf,
  freePort,
  gatehouse,
  killAll,
  migratedDataDir,
  oneLine,
  readLock,
  stop,
  waitFor,
  waitHealthy,
} from '../helpers/cli.js';

/** the documented lease: a lock not refreshed for this long is stale */
const LOCK_STALE_MS = 15_000;
/** the highest pid Linux hands out, running nowhere here: stands for a holder in another PID namespace */
const FOREIGN_PID = 4194303;

function pidRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function writeRecord(dataDir: string, fields: { pid: number; host: string; refreshedAt: Date; token?: string }): string {
  const token = fields.token ?? 'e'.repeat(32);
  writeFileSync(
    join(dataDir, 'gatehouse.lock'),
    JSON.stringify({
      token,
      pid: fields.pid,
      host: fields.host,
      startedAt: fields.refreshedAt.toISOString(),
      refreshedAt: fields.refreshedAt.toISOString(),
    }) + '\n',
  );
  return token;
}

describe('data-folder lock (gatehouse executable)', () => {
  let tmp: string;
  let dataDir: string;
  before(async () => {
    ensureBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-lock-'));
    // a migrated folder, so that each start below is quick
    dataDir = await migratedDataDir(join(tmp, 'data'));
  });
  after(async () => {
    await killAll();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('a fresh lock held by a pid this namespace cannot see refuses serve and migrate, in one line that says what to do', async () => {
    assert.equal(pidRunning(FOREIGN_PID), false, `precondition: pid ${FOREIGN_PID} does not run here`);
    const token = writeRecord(dataDir, { pid: FOREIGN_PID, host: 'other-container', refreshedAt: new Date() });
    for (const args of [['serve'], ['migrate']]) {
      const p = gatehouse(args, { GATEHOUSE_DATA_DIR: dataDir, PORT: String(await freePort()) });
      const r = await exitOf(p, PATIENCE_MS);
      assert.notEqual(r.code, 0, `${args[0]} started although the lock is held\n${p.stdout()}`);
      assert.equal(r.signal, null);
      assert.ok(lingeredMs(p) <= LINGER_MS, `${args[0]} lived on ${lingeredMs(p)} ms after reporting the refusal`);
      const line = oneLine(p);
      assert.ok(line.includes(dataDir), `names the folder: ${line}`);
      assert.match(line, new RegExp(`process ${FOREIGN_PID} on host other-container`), 'names the holder as recorded');
      assert.match(line, /refreshed \d+ s ago/, 'says how long ago it was refreshed');
      assert.match(line, /stop that process/);
      assert.match(line, /lapses 15 s after its last refresh/);
      assert.match(line, /DATABASE_URL/);
    }
    assert.equal(readLock(dataDir).token, token, 'the lock was left alone');
    unlinkSync(join(dataDir, 'gatehouse.lock'));
  });

  it('a stale lock (not refreshed for longer than the lease) is taken over', async () => {
    const old = writeRecord(dataDir, { pid: FOREIGN_PID, host: 'other-container', refreshedAt: new Date(Date.now() - 2 * LOCK_STALE_MS) });
    const port = await freePort();
    const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
    await waitHealthy(p, port);
    const now = readLock(dataDir);
    assert.equal(now.pid, p.child.pid);
    assert.notEqual(now.token, old);
    await stop(p);
    assert.equal(existsSync(join(dataDir, 'gatehouse.lock')), false, 'a clean stop releases the lock');
  });

  it('the holder refreshes its lock while it serves, and a clean stop releases it', async () => {
    const port = await freePort();
    const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
    await waitHealthy(p, port);
    const first = readLock(dataDir);
    const firstMtime = statSync(join(dataDir, 'gatehouse.lock')).mtimeMs;
    const later = await waitFor('a refresh of the lock', LOCK_STALE_MS, () => {
      const now = readLock(dataDir);
      return now.refreshedAt !== first.refreshedAt ? now : undefined;
    });
    assert.equal(later.token, first.token);
    assert.equal(later.pid, p.child.pid);
    assert.ok(Date.parse(later.refreshedAt) > Date.parse(first.refreshedAt), 'the refresh time moves forward');
    assert.ok(statSync(join(dataDir, 'gatehouse.lock')).mtimeMs > firstMtime, 'the file is rewritten');
    await stop(p);
    assert.equal(existsSync(join(dataDir, 'gatehouse.lock')), false, 'a clean stop releases the lock');
  });

  for (const [what, act] of [
    ['deleted', (dir: string) => unlinkSync(join(dir, 'gatehouse.lock'))],
    ['taken over', (dir: string) => writeRecord(dir, { pid: FOREIGN_PID, host: 'other-container', refreshedAt: new Date(), token: 'd'.repeat(32) })],
  ] as const) {
    it(`a holder whose lock is ${what} while it serves stops at once, non-zero`, async () => {
      const port = await freePort();
      const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
      await waitHealthy(p, port);
      act(dataDir);
      const r = await exitOf(p, PATIENCE_MS);
      assert.equal(r.signal, null, 'it exits by itself');
      assert.notEqual(r.code, 0);
      // a refresh every 2 s notices it. The bound that matters is safety, not speed: the holder
      // must be gone before another process may take a lock this old as stale
      assert.ok(r.ms < LOCK_STALE_MS, `it took ${r.ms} ms to stop (a lock is stale after ${LOCK_STALE_MS})`);
      assert.match(oneLine(p), /lock lost/);
      assert.match(p.stdout(), /"level":60.*lock lost/, 'logged as fatal');
      rmSync(join(dataDir, 'gatehouse.lock'), { force: true });
    });
  }
});
