// npm run bench [-- --reseed] [--only search-postgres,search-pglite,signing,signin-timing,cli-start,compare] [--no-write]
//
// Every benchmark of the project in one run, one after the other (never two at once, so that
// none measures the others' load): the tenants search on PostgreSQL at 1,000,000 tenants and on
// PGlite at 100,000 (bench/search.ts), what signing one token costs (bench/signing.ts), whether a
// password sign-in's answer time tells which addresses have an account (bench/signin-timing.ts:
// it fails the run if it does), how long the executable takes to answer --version and --help
// (bench/cli-start.ts), then Gatehouse side by side with its peers (bench/compare/compare.ts).
// Each writes its own section of docs/benchmarks.md; this script writes how long each part took.
// --reseed loads the tenants again, as on a machine that never ran the benchmark. The parts run as
// child processes of their own: a part that fails stops the run.
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { writeSection } from './compare/report.js';

const PARTS = ['search-postgres', 'search-pglite', 'signing', 'signin-timing', 'cli-start', 'compare'] as const;
type Part = (typeof PARTS)[number];

const { values: args } = parseArgs({
  options: {
    reseed: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});
const only = args.only ? args.only.split(',') : [...PARTS];
const unknown = only.filter((p) => !(PARTS as readonly string[]).includes(p));
if (unknown.length) {
  process.stderr.write(`npm run bench: unknown part ${unknown.join(', ')}; the parts are ${PARTS.join(', ')}\n`);
  process.exit(2);
}

const common = [...(args['no-write'] ? ['--no-write'] : [])];
const commands: Record<Part, string[]> = {
  // 100 requests per row: p99 is then the second slowest, and both engines fit the time budget
  'search-postgres': ['bench/search.ts', '--engine', 'postgres', '--iterations', '100', ...(args.reseed ? ['--reseed'] : []), ...common],
  'search-pglite': ['bench/search.ts', '--engine', 'pglite', '--iterations', '100', ...(args.reseed ? ['--reseed'] : []), ...common],
  signing: ['bench/signing.ts', ...common],
  'signin-timing': ['bench/signin-timing.ts', ...common],
  'cli-start': ['bench/cli-start.ts', ...common],
  compare: ['bench/compare/compare.ts', ...common],
};

function run(part: Part): Promise<void> {
  return new Promise((resolve, reject) => {
    // production mode, as `gatehouse serve` runs (the search part builds the service in its process)
    const child = spawn(process.execPath, ['--import', 'tsx', ...commands[part]], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'production' },
    });
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.once('SIGINT', forward);
    process.once('SIGTERM', forward);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      if (code === 0) resolve();
      else reject(new Error(`${part} failed (${signal ?? `exit ${code}`}); the parts before it wrote their sections`));
    });
  });
}

const started = Date.now();
const took: string[] = [];
for (const part of PARTS.filter((p) => only.includes(p))) {
  const t0 = Date.now();
  process.stderr.write(`\n== ${part}\n`);
  await run(part);
  took.push(`${part} ${Math.round((Date.now() - t0) / 1000)} s`);
}
const total = Math.round((Date.now() - started) / 1000);
const line =
  `Last \`npm run bench\`${args.reseed ? ' -- --reseed' : ''}: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ` +
  `${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}: ${took.join(', ')}; ${total} s (${(total / 60).toFixed(1)} min) in all.`;
process.stderr.write(`\n${line}\n`);
if (!args['no-write'] && only.length === PARTS.length) writeSection(new URL('../docs/benchmarks.md', import.meta.url).pathname, 'bench-run', line);
