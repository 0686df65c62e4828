// PGlite takes no lock on its folder, and two processes writing one folder corrupt it. A lock
// file holding our pid makes the second opener fail fast with a clear message; a lock left by a
// process that no longer runs (kill -9) is taken over.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDataDirLock(dir: string): () => void {
  const file = join(dir, 'gatehouse.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isRunning(pid)) {
        throw new Error(
          `the embedded database in ${dir} is in use by process ${pid} (lock file ${file}); stop it, or use DATABASE_URL for several processes`,
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`cannot lock the embedded database in ${dir}`);
}
