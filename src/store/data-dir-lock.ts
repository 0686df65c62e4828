// One process per embedded database folder. PGlite takes no lock on its folder, and two processes
// writing one folder lose acknowledged writes. A pid file cannot tell: two containers sharing a
// volume live in different PID namespaces, where the other's pid means nothing (or someone else).
// So the lock is a lease: a record (random owner token, pid, host, start time, refresh time) that
// its holder refreshes every LOCK_REFRESH_MS and that counts as stale only when it has not been
// refreshed for LOCK_STALE_MS (and, clocks being fallible, is then seen not to change for
// OBSERVE_MS). Taking over a stale record moves it aside (rename is atomic), checks that what was
// moved is what was judged stale, creates ours exclusively, and reads it back after CONFIRM_MS,
// so that of several starters racing for one stale lock only one wins. The refresh runs on a worker thread (data-dir-lock-worker.mjs),
// because PGlite runs queries synchronously on the main thread and a long one would stall it; the
// worker also checks on every refresh that the file still holds our token, and when it does not
// (deleted, taken over) the process stops at once rather than risk a second writer. And because
// a process can be frozen (SIGSTOP, a paused container, a suspended VM) past the lease and then
// resume, the worker publishes the time of its last good refresh in shared memory, and every
// database access checks it first (assertHeld): a holder that has not confirmed its lease for
// half the stale time stops before it writes, however long it was away.
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';

export const LOCK_FILE = 'gatehouse.lock';
/** how often the holder rewrites its record */
export const LOCK_REFRESH_MS = 2_000;
/** a record not refreshed for this long belongs to a process that is gone (or frozen) and may be taken over */
export const LOCK_STALE_MS = 15_000;
/** after writing our record, how long to wait before reading it back to confirm no racing starter replaced it */
const CONFIRM_MS = 250;
/** a record that looks stale by the clock is watched this long (over two refreshes) before it is taken over */
const OBSERVE_MS = 2 * LOCK_REFRESH_MS + 1_000;
/** if the main thread does not exit this long after the lock is lost (it is stuck in a query), the worker kills the process */
const LOST_EXIT_GRACE_MS = 1_000;

export interface LockRecord {
  token: string;
  pid: number;
  host: string;
  startedAt: string;
  refreshedAt: string;
}

export interface DataDirLock {
  file: string;
  record: LockRecord;
  /** throws (after onLost) when the lease was last confirmed too long ago to be sure it is still ours */
  assertHeld(): void;
  /** stops refreshing and removes the lock file if it still holds our token */
  release(): Promise<void>;
}

/** What an operator reads when the lock is lost while held (the worker writes the same words). */
export function lockLostLine(reason: string): string {
  return `gatehouse: embedded database lock lost: ${reason}; stopped at once so that no other process's writes are lost\n`;
}

/** The one-line refusal when another process holds the folder; `holder` names that process as
 *  its record does ("process 123 on host web-1"), for a command that words its own refusal. */
export class DataDirLockedError extends Error {
  constructor(
    message: string,
    readonly holder?: string,
  ) {
    super(message);
    this.name = 'DataDirLockedError';
  }
}

export interface LockOptions {
  /** called (on the main thread) when the lock is lost while held; must stop the process */
  onLost: (reason: string) => void;
  /** how often the record is refreshed (LOCK_REFRESH_MS); tests stretch it to play a frozen refresher */
  refreshMs?: number;
}

type Seen =
  | { kind: 'absent' }
  | { kind: 'record'; raw: string; record: LockRecord; ageMs: number }
  // gatehouse before the lease wrote its pid alone. Its pid cannot be judged from another PID
  // namespace (and containers are all pid 1), so such a file is never taken over: see refusal()
  | { kind: 'legacy'; raw: string; pid: number }
  | { kind: 'unreadable'; raw: string; ageMs: number };

export async function acquireDataDirLock(dir: string, opts: LockOptions): Promise<DataDirLock> {
  const file = join(dir, LOCK_FILE);
  const token = randomBytes(16).toString('hex');
  const startedAt = new Date().toISOString();
  for (let attempt = 0; attempt < 5; attempt++) {
    const seen = look(file);
    if (seen.kind !== 'absent') {
      const holder = liveHolder(seen);
      if (holder) throw new DataDirLockedError(refusal(dir, file, holder), holder.legacy ? undefined : holder.who);
      // Stale by the clock; but clocks jump (NTP steps, a resumed VM) and two hosts' clocks may
      // disagree, so watch it: a live holder rewrites it within two refreshes.
      const after = await watch(file, seen.raw);
      if (after.kind === 'absent') continue;
      if (after.kind !== 'unchanged') {
        throw new DataDirLockedError(refusal(dir, file, { who: holderName(after), ageMs: 0 }));
      }
      // stale: move it aside under a name of our own, and go on only if what we moved is the
      // record we judged stale (a racing starter may have replaced it in the meantime)
      const aside = `${file}.stale-${token}`;
      try {
        renameSync(file, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // someone else moved it
        throw err;
      }
      const moved = readFileSync(aside, 'utf8');
      if (moved !== seen.raw) {
        // we moved someone's fresh lock: put it back unless the name is taken again (then that
        // holder finds its token gone at its next check and stops)
        try {
          linkSync(aside, file);
        } catch {
          /* taken */
        }
        rmSync(aside, { force: true });
        continue;
      }
      rmSync(aside, { force: true });
    }
    const record: LockRecord = { token, pid: process.pid, host: hostname(), startedAt, refreshedAt: new Date().toISOString() };
    // The record is written whole under a name of our own, then linked into place: link() is
    // atomic and fails if the name exists, so the lock appears with its content or not at all (a
    // racing starter never reads a half-written file and reports "an unknown process").
    const draft = `${file}.new-${token}`;
    writeFileSync(draft, JSON.stringify(record) + '\n', { mode: 0o644 });
    try {
      linkSync(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue; // a racing starter created it first
      throw err;
    } finally {
      rmSync(draft, { force: true });
    }
    // a racing starter that judged an older record stale could still have moved ours aside
    await sleep(CONFIRM_MS);
    const now = look(file);
    if (now.kind !== 'record' || now.record.token !== token) continue;
    return { file, record, ...startRefreshing(file, record, opts) };
  }
  throw new Error(`cannot lock the embedded database folder ${dir}: other processes keep changing ${file}`);
}

/** Polls the file for OBSERVE_MS: what it became when it changed, or `unchanged`. */
async function watch(file: string, raw: string): Promise<Seen | { kind: 'unchanged' }> {
  const until = performance.now() + OBSERVE_MS;
  while (performance.now() < until) {
    await sleep(200);
    const now = look(file);
    if (now.kind === 'absent' || now.raw !== raw) return now;
  }
  return { kind: 'unchanged' };
}

function look(file: string): Seen {
  let raw: string;
  let mtimeMs: number;
  try {
    raw = readFileSync(file, 'utf8');
    mtimeMs = statSync(file).mtimeMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw err;
  }
  if (/^\d+\s*$/.test(raw)) return { kind: 'legacy', raw, pid: Number(raw.trim()) };
  try {
    const record = JSON.parse(raw) as LockRecord;
    const refreshed = Date.parse(record.refreshedAt);
    if (typeof record.token === 'string' && Number.isFinite(refreshed)) return { kind: 'record', raw, record, ageMs: Date.now() - refreshed };
  } catch {
    /* below */
  }
  // half-written by a crashed process, or not ours: judged by when it was last written
  return { kind: 'unreadable', raw, ageMs: Date.now() - mtimeMs };
}

interface Holder {
  who: string;
  ageMs: number | undefined;
  /** a lock file of an older gatehouse (a pid alone), which lapses never */
  legacy?: boolean;
}

function holderName(seen: Exclude<Seen, { kind: 'absent' }>): string {
  switch (seen.kind) {
    case 'record':
      return `process ${seen.record.pid} on host ${seen.record.host}`;
    case 'unreadable':
      return 'an unknown process';
    case 'legacy':
      return `process ${seen.pid} (an older gatehouse)`;
  }
}

function liveHolder(seen: Exclude<Seen, { kind: 'absent' }>): Holder | undefined {
  if (seen.kind === 'legacy') return { who: holderName(seen), ageMs: undefined, legacy: true };
  return fresh(seen.ageMs) ? { who: holderName(seen), ageMs: seen.ageMs } : undefined;
}

/** Refreshed within LOCK_STALE_MS; a time far in the future (another clock) is not taken as fresh, it is watched. */
function fresh(ageMs: number): boolean {
  return ageMs < LOCK_STALE_MS && ageMs > -LOCK_STALE_MS;
}

function refusal(dir: string, file: string, holder: Holder): string {
  if (holder.legacy) {
    return (
      `the embedded database folder ${dir} has a lock file of an older gatehouse naming ${holder.who} (${file}); ` +
      'stop any older gatehouse that uses this folder, then delete that file and start again'
    );
  }
  const refreshed = holder.ageMs === undefined ? '' : `, lock refreshed ${Math.max(0, Math.round(holder.ageMs / 1000))} s ago`;
  return (
    `the embedded database folder ${dir} is in use by ${holder.who} (${file}${refreshed}); ` +
    `stop that process, or if it is gone, the lock lapses ${LOCK_STALE_MS / 1000} s after its last refresh and the next start takes it over; ` +
    'to run several processes on one database, use PostgreSQL (DATABASE_URL)'
  );
}

/** Starts the refresher thread; returns the lease check and the release function. */
function startRefreshing(file: string, record: LockRecord, opts: LockOptions): Pick<DataDirLock, 'assertHeld' | 'release'> {
  // the wall-clock time (ms) of the last refresh that found the file ours, written by the worker
  const confirmed = new BigInt64Array(new SharedArrayBuffer(8));
  Atomics.store(confirmed, 0, BigInt(Date.now()));
  const worker = new Worker(new URL('./data-dir-lock-worker.mjs', import.meta.url), {
    // the worker is plain JavaScript: it needs none of the loaders the main thread may run under
    execArgv: [],
    workerData: {
      file,
      record,
      refreshMs: opts.refreshMs ?? LOCK_REFRESH_MS,
      staleMs: LOCK_STALE_MS,
      lostExitGraceMs: LOST_EXIT_GRACE_MS,
      confirmed,
    },
  });
  // it must never keep a finished process alive
  worker.unref();
  let released = false;
  let stopped: (() => void) | undefined;
  worker.on('message', (m: { type: string; reason?: string }) => {
    if (m.type === 'lost' && !released) opts.onLost(m.reason ?? 'the lock was lost');
    if (m.type === 'stopped') stopped?.();
  });
  worker.on('error', (err) => {
    if (!released) opts.onLost(`the lock refresher failed: ${err.message}`);
  });
  worker.on('exit', () => {
    stopped?.();
    if (!released) opts.onLost('the lock refresher stopped');
  });
  const assertHeld = () => {
    const age = Date.now() - Number(Atomics.load(confirmed, 0));
    if (released || age <= LOCK_STALE_MS / 2) return;
    const reason = `the lock was last confirmed ${Math.round(age / 1000)} s ago (was the process paused?); another process may hold the folder now`;
    opts.onLost(reason);
    throw new Error(`embedded database lock lost: ${reason}`);
  };
  const release = async () => {
    if (released) return;
    released = true;
    // ask the worker to stop between two refreshes (terminate() could cut one in half)
    await new Promise<void>((resolve) => {
      stopped = resolve;
      worker.postMessage({ type: 'stop' });
      setTimeout(resolve, 2_000).unref();
    });
    await worker.terminate();
    const seen = look(file);
    if (seen.kind === 'record' && seen.record.token === record.token) rmSync(file, { force: true });
  };
  return { assertHeld, release };
}
