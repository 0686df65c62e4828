// The data-folder lock's own guarantees, with real processes (test/fixtures/lock-holder.ts): the
// lease is refreshed from a worker thread even while the main thread is blocked (PGlite runs
// queries synchronously on it), a holder stuck on its main thread is still stopped when its lock
// is lost, and of several starters racing for one folder (free, or held by a stale record) exactly
// one wins.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOCK_REFRESH_MS, LOCK_STALE_MS } from '../../src/store/data-dir-lock.js';
import { exitOf, root, waitFor, type Proc } from '../helpers/cli.js';

const FIXTURE = join(root, 'test', 'fixtures', 'lock-holder.ts');
const started: Proc[] = [];

function holder(dir: string, mode: 'sleep' | 'block' | 'check', ms: number, refreshMs?: number): Proc {
  const args = [FIXTURE, dir, mode, String(ms), ...(refreshMs ? [String(refreshMs)] : [])];
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let done = false;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  const p = { child, stdout: () => out, stderr: () => err, exited, running: () => !done, times: () => ({ firstStderr: undefined, exit: undefined }) };
  started.push(p);
  return p;
}

/** Waits until the holder has the lock; fails if it exits first. */
function acquired(p: Proc): Promise<true> {
  return waitFor('ACQUIRED', 30_000, () => {
    if (p.stdout().includes('ACQUIRED')) return true;
    if (!p.running()) throw new Error(`the holder exited without the lock:\n${p.stdout()}${p.stderr()}`);
    return undefined;
  });
}

const lockFile = (dir: string) => join(dir, 'gatehouse.lock');
const record = (dir: string) => JSON.parse(readFileSync(lockFile(dir), 'utf8')) as { token: string; pid: number; refreshedAt: string };

// the tests are independent (a folder each) and mostly wait on their holders: they run at once
describe('data-folder lock', { concurrency: true }, () => {
  let tmp: string;
  const folder = () => mkdtempSync(join(tmp, 'f-'));
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-lock-unit-'));
  });
  after(async () => {
    for (const p of started) {
      if (p.running()) {
        p.child.kill('SIGKILL');
        await p.exited;
      }
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  it('documents a lease of 15 s, refreshed several times within it', () => {
    assert.equal(LOCK_STALE_MS, 15_000);
    assert.ok(LOCK_REFRESH_MS * 3 <= LOCK_STALE_MS);
  });

  it('is refreshed while the main thread is blocked', async () => {
    const dir = folder();
    // blocked for a whole lease: a refresh is due every LOCK_REFRESH_MS, and one seen at any time
    // before the block ends proves it (a wide margin for a loaded machine)
    const p = holder(dir, 'block', LOCK_STALE_MS);
    await acquired(p);
    const first = record(dir);
    const refreshed = await waitFor('a refresh', LOCK_STALE_MS - 2_000, () => {
      const now = record(dir);
      return now.refreshedAt !== first.refreshedAt ? now : undefined;
    });
    assert.equal(refreshed.token, first.token);
    assert.doesNotMatch(p.stdout(), /RELEASED/, 'the refresh came while the main thread was still blocked');
    const r = await exitOf(p, 60_000);
    assert.equal(r.code, 0, p.stdout() + p.stderr());
    assert.match(p.stdout(), /RELEASED/);
  });

  it('stops a holder whose main thread is blocked when its lock is deleted', async () => {
    const dir = folder();
    const p = holder(dir, 'block', 60_000);
    await acquired(p);
    unlinkSync(lockFile(dir));
    const r = await exitOf(p, 30_000);
    assert.equal(r.signal, 'SIGKILL', `killed by its lock thread, the main thread being unable to act: ${JSON.stringify(r)}`);
    // safety, not speed: gone before another process may take a lock this old as stale
    assert.ok(r.ms < LOCK_STALE_MS, `it took ${r.ms} ms to stop (a lock is stale after ${LOCK_STALE_MS})`);
    assert.match(p.stderr(), /lock lost: .*deleted/);
  });

  it('a holder whose lease has gone unconfirmed for half the stale time stops before it touches the database', async () => {
    // a refresher that never runs plays a process frozen past its lease (SIGSTOP, a paused
    // container): when it wakes, another process may hold the folder, so it must not write
    const p = holder(folder(), 'check', LOCK_STALE_MS / 2 + 1_000, 10 * LOCK_STALE_MS);
    // and, alongside, one whose refresher runs passes the same check
    const q = holder(folder(), 'check', LOCK_STALE_MS / 2 + 1_000);
    await Promise.all([acquired(p), acquired(q)]);
    const [r, rq] = await Promise.all([exitOf(p, 30_000), exitOf(q, 30_000)]);
    assert.equal(r.code, 3, p.stdout() + p.stderr());
    assert.match(p.stdout(), /LOST the lock was last confirmed \d+ s ago/);
    assert.equal(rq.code, 0, q.stdout() + q.stderr());
    assert.match(q.stdout(), /RELEASED/);
  });

  it("an older gatehouse's lock file (a pid alone) is never taken over: the start is refused, saying what to do", async () => {
    for (const pid of ['1', '4194303', String(process.pid)]) {
      const dir = folder();
      writeFileSync(lockFile(dir), `${pid}\n`);
      const p = holder(dir, 'sleep', 100);
      await exitOf(p, 30_000);
      assert.match(p.stdout(), /^REFUSED .*older gatehouse naming process \d+ .*delete that file/, p.stdout());
      assert.equal(readFileSync(lockFile(dir), 'utf8'), `${pid}\n`, 'the file is left as it was');
    }
  });

  it('of several starters racing for a free folder, exactly one wins', async () => {
    const dir = folder();
    // The winner holds the folder until every other starter has tried: on a loaded machine one
    // may start seconds after the others, and a folder freed by then is rightly taken (a hold
    // of 2 s once let a fifth starter in after the winner's release).
    const racers = Array.from({ length: 5 }, () => holder(dir, 'sleep', 120_000));
    const acquiredBy = () => racers.filter((p) => p.stdout().includes('ACQUIRED'));
    // (the winner's ACQUIRED may come after the others' refusals have been read)
    await waitFor('one starter to hold the folder and every other to be refused', 60_000, () =>
      (racers.filter((p) => !p.running()).length >= 4 && acquiredBy().length >= 1) || acquiredBy().length > 1 ? true : undefined,
    );
    const outs = racers.map((p) => p.stdout());
    assert.equal(acquiredBy().length, 1, outs.join('\n'));
    assert.equal(outs.filter((o) => o.startsWith('REFUSED') && o.includes('is in use by process')).length, 4, outs.join('\n'));
    assert.equal(outs.filter((o) => o.includes('LOST')).length, 0, outs.join('\n'));
    const winner = acquiredBy()[0]!;
    winner.child.kill('SIGKILL');
    await winner.exited;
  });

  it('of several starters racing for one stale lock, exactly one wins', async () => {
    const dir = folder();
    const stale = new Date(Date.now() - 2 * LOCK_STALE_MS).toISOString();
    writeFileSync(lockFile(dir), JSON.stringify({ token: 'a'.repeat(32), pid: 4194303, host: 'gone', startedAt: stale, refreshedAt: stale }) + '\n');
    const racers = Array.from({ length: 5 }, () => holder(dir, 'sleep', 2_000));
    for (const p of racers) await exitOf(p, 60_000);
    const outs = racers.map((p) => p.stdout());
    assert.equal(outs.filter((o) => o.includes('ACQUIRED')).length, 1, outs.join('\n'));
    assert.equal(outs.filter((o) => o.includes('RELEASED')).length, 1, outs.join('\n'));
    assert.equal(outs.filter((o) => o.startsWith('REFUSED')).length, 4, outs.join('\n'));
    assert.equal(outs.filter((o) => o.includes('LOST')).length, 0, outs.join('\n'));
  });
});
