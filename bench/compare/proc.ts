// Child processes of the comparison: spawning, readiness, CPU and RSS from /proc, and killing.
//
// Every server and load generator is a process of its own, so that what one costs (CPU, memory)
// can be read from the kernel per process, and so that no server shares an event loop with the
// load that measures it. All children are registered here and SIGKILLed when this process exits,
// whatever the reason: a failed run must not leave servers on ports.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const live = new Set<ChildProcess>();
const killAll = () => {
  for (const c of live) c.kill('SIGKILL');
};
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });
}

export interface Proc {
  child: ChildProcess;
  pid: number;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** Text the process wrote to stdout so far. */
  stdout: () => string;
}

/** Spawns `node args` with env added; stderr goes to logFile (read when something fails). */
export function spawnNode(args: string[], env: Record<string, string>, logFile: string): Proc {
  // every server in production mode, as the gatehouse executable runs (graphql-js, which the
  // graphql-jit reference uses too, reads it: docs/performance.md#production-mode)
  const child = spawn(process.execPath, args, { env: { ...process.env, NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stderr!.pipe(log);
  // stdout goes to the log too (a server's request log must not pile up in this process); the
  // first 1 MB is also kept, which is all a load generator's one result line needs
  let out = '';
  child.stdout!.on('data', (b: Buffer) => {
    log.write(b);
    if (out.length < 1 << 20) out += b.toString();
  });
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      live.delete(child);
      r();
    }),
  );
  return { child, pid: child.pid!, exited, stdout: () => out };
}

/** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
export async function stop(p: Proc, graceMs = 5000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const t = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
  await p.exited;
  clearTimeout(t);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Polls url until it answers 200; returns ms since t0. Throws if the process dies or 120 s pass. */
export async function waitReady(p: Proc, url: string, t0: number): Promise<number> {
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`${url}: server exited (${p.child.exitCode}) before it was ready`);
    if (performance.now() - t0 > 120_000) throw new Error(`${url}: not ready after 120 s`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - t0;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

// Linux clock ticks per second (USER_HZ): 100 on every architecture Node runs on.
const TICKS = 100;

/** utime + stime of a process in ms, from /proc/<pid>/stat (fields 14 and 15). */
export function cpuMs(pid: number): number {
  let total = 0;
  for (const p of tree(pid)) {
    const stat = readOr(`/proc/${p}/stat`);
    if (!stat) continue;
    // the command name (field 2) may hold spaces: count fields after its closing parenthesis
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
  }
  return total;
}

/** Resident set size in MB, from VmRSS in /proc/<pid>/status, summed over the process and its children. */
export function rssMb(pid: number): number {
  let total = 0;
  for (const p of tree(pid)) {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readOr(`/proc/${p}/status`));
    if (m) total += Number(m[1]) / 1024;
  }
  return total;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // the process exited meanwhile
  }
}

/** The process and its live descendants (a cluster primary and its workers). */
function tree(pid: number): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${all[i]}/task`)) {
        const children = readFileSync(`/proc/${all[i]}/task/${task}/children`, 'utf8').trim();
        if (children) all.push(...children.split(' ').map(Number));
      }
    } catch {
      // exited meanwhile
    }
  }
  return all;
}
