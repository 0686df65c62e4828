// The data-folder lock's refresher (see data-dir-lock.ts), on a thread of its own so that a main
// thread busy in a long PGlite query cannot let the lock lapse. Every refresh first checks that
// the lock file still holds our token; when it does not, the main thread is told to stop, and if
// it has not exited shortly after (it is stuck in a query), this thread kills the process: two
// writers on one folder lose data, a killed process does not (PGlite survives a crash).
// Plain JavaScript, copied next to the compiled code by scripts/build.mjs, so that it runs the same
// from dist/ and from the TypeScript sources under tsx.
import { readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { file, record, refreshMs, staleMs, lostExitGraceMs, confirmed } = workerData;
const tmp = `${file}.${record.token}.tmp`;
// monotonic: a wall-clock jump must not look like a long time without a refresh
let lastRefresh = performance.now();
let lost = false;

function loseLock(reason) {
  if (lost) return;
  lost = true;
  clearInterval(timer);
  parentPort.postMessage({ type: 'lost', reason });
  setTimeout(() => {
    const line = { level: 60, time: Date.now(), pid: process.pid, msg: `embedded database lock lost: ${reason}; stopping the process` };
    writeSync(1, JSON.stringify(line) + '\n');
    writeSync(2, `gatehouse: embedded database lock lost: ${reason}; stopping at once so that no other process's writes are lost\n`);
    process.kill(process.pid, 'SIGKILL');
  }, lostExitGraceMs);
}

function refresh() {
  let raw;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return loseLock(`${file} was deleted`);
    // a passing read error is survivable; not refreshing until the lock could lapse is not
    if (performance.now() - lastRefresh > staleMs / 2) loseLock(`${file} cannot be read: ${err.message}`);
    return;
  }
  let holder;
  try {
    holder = JSON.parse(raw);
  } catch {
    return loseLock(`${file} was overwritten`);
  }
  if (!holder || holder.token !== record.token) {
    const who = holder?.pid ? ` by process ${holder.pid} on host ${holder.host}` : '';
    return loseLock(`${file} was taken over${who}`);
  }
  try {
    // write aside, then rename over: a reader never sees a half-written record
    writeFileSync(tmp, JSON.stringify({ ...record, refreshedAt: new Date().toISOString() }) + '\n');
    renameSync(tmp, file);
    lastRefresh = performance.now();
    // the main thread checks this before every database access (assertHeld in data-dir-lock.ts)
    Atomics.store(confirmed, 0, BigInt(Date.now()));
  } catch (err) {
    rmSync(tmp, { force: true });
    if (performance.now() - lastRefresh > staleMs / 2) loseLock(`${file} cannot be refreshed: ${err.message}`);
  }
}

const timer = setInterval(refresh, refreshMs);

parentPort.on('message', (m) => {
  if (m.type !== 'stop') return;
  clearInterval(timer);
  parentPort.postMessage({ type: 'stopped' });
  parentPort.close();
});
