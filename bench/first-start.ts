// npm run bench:start [-- --runs N]
//
// Time from `gatehouse serve` on an empty data folder (embedded PGlite) to the bootstrap
// credentials on stdout, and from a start on the existing folder to /readyz answering. The target
// (first start under 10 s on the machines of docs/benchmarks.md) is checked here, not by a timed
// test: a loaded CI machine says nothing about the product.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from './compare/proc.js';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(args.runs);
const bin = new URL('../bin/gatehouse.js', import.meta.url).pathname;

/** Starts serve and resolves with the ms until `ready(stdout, port)` holds; then stops it. */
async function timeStart(dataDir: string, ready: (stdout: string, port: number) => Promise<boolean>): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}) before it was ready`);
      if (performance.now() - t0 > 120_000) throw new Error('serve was not ready after 120 s');
      if (await ready(stdout, port)) return performance.now() - t0;
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function readyz(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

const first: number[] = [];
const again: number[] = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-start-'));
  try {
    first.push(await timeStart(join(dir, 'data'), async (out) => /^\s*admin password:\s+\S+\s*$/m.test(out)));
    again.push(await timeStart(join(dir, 'data'), async (_out, port) => readyz(port)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => `median ${Math.round(median(xs))} ms (runs: ${xs.map((x) => Math.round(x)).join(', ')})`;
process.stdout.write(
  [
    `Start-up, PGlite, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}`,
    `| first start: empty folder to credentials printed | ${fmt(first)} | target < 10,000 ms: ${median(first) < 10_000 ? 'met' : 'NOT met'} |`,
    `| start on the existing folder to /readyz 200 | ${fmt(again)} | |`,
  ].join('\n') + '\n',
);
