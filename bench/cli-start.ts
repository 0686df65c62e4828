// npm run bench -- --only cli-start [--no-write]   (alone: node --import tsx bench/cli-start.ts [--runs N])
//
// How long the gatehouse executable takes to answer what loads no command: --version, --help and
// a command's --help, from the spawn to the exit of `node bin/gatehouse.js …` (compiled dist/,
// built first if it is not current). Beside them, Node starting and doing nothing (the floor no
// command can go under) and Node importing every command's module, which is what each of them
// loaded before the commands were imported lazily (src/cli/main.ts). The target, under 150 ms
// for --version and --help on the machines of docs/benchmarks.md, is checked here, never by a
// timed test. Medians of N runs (default 20) after one warm-up each, the rows interleaved so that
// a burst of load elsewhere on the machine spreads over all of them. Writes the section between
// the cli-start markers of docs/benchmarks.md.
import { execFileSync, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { writeSection } from './compare/report.js';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '20' }, 'no-write': { type: 'boolean', default: false } } });
const runs = Number(args.runs);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write(`bench/cli-start.ts: --runs takes a whole number of at least 1, not ${args.runs}\n`);
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });

const TARGET_MS = 150;
const bin = join(root, 'bin', 'gatehouse.js');
const everyCommand = ['serve', 'migrate', 'users', 'login', 'token', 'whoami', 'logout']
  .map((name) => `import(${JSON.stringify(pathToFileURL(join(root, 'dist', 'cli', 'commands', `${name}.js`)).href)})`)
  .join(', ');

interface Row {
  name: string;
  argv: string[];
  /** held to TARGET_MS */
  target?: boolean;
}
const ROWS: Row[] = [
  { name: 'node -e 0 (Node alone: the floor)', argv: ['-e', '0'] },
  { name: '`gatehouse --version`', argv: [bin, '--version'], target: true },
  { name: '`gatehouse --help`', argv: [bin, '--help'], target: true },
  { name: '`gatehouse serve --help` (with the settings table)', argv: [bin, 'serve', '--help'] },
  { name: '`gatehouse users --help`', argv: [bin, 'users', '--help'] },
  { name: '`gatehouse token --help`', argv: [bin, 'token', '--help'] },
  {
    name: 'Node importing every command (what each of the above loaded before)',
    argv: ['--input-type=module', '-e', `await Promise.all([${everyCommand}])`],
  },
];

/** Milliseconds from the spawn to the exit; a run that fails stops the benchmark. */
function once(argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, argv, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (code === 0) resolve(ms);
      else reject(new Error(`node ${argv.join(' ')} exited ${code}: ${stderr}`));
    });
  });
}

const load = loadavg()[0]!;
const times = new Map<Row, number[]>(ROWS.map((row) => [row, []]));
for (const row of ROWS) await once(row.argv); // warm-up: the file system's cache
for (let i = 0; i < runs; i++) for (const row of ROWS) times.get(row)!.push(await once(row.argv));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const lines = ROWS.map((row) => {
  const xs = times.get(row)!;
  const verdict = row.target ? (median(xs) < TARGET_MS ? `< ${TARGET_MS}: met` : `< ${TARGET_MS}: NOT met`) : '';
  return `| ${row.name} | ${Math.round(median(xs))} | ${Math.round(Math.min(...xs))} | ${Math.round(Math.max(...xs))} | ${verdict} |`;
});
const section = [
  '## CLI start-up (`npm run bench -- --only cli-start`)',
  '',
  `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, ` +
    `load average ${load.toFixed(1)} at the start (the first row shows what the machine's load adds): ` +
    `milliseconds from spawn to exit of \`node bin/gatehouse.js …\` (compiled dist/), ${runs} runs each after a warm-up, interleaved (bench/cli-start.ts).`,
  '',
  '| Command | median ms | min ms | max ms | target ms |',
  '|---|---|---|---|---|',
  ...lines,
].join('\n');
process.stdout.write(`${section}\n`);
if (!args['no-write']) writeSection(join(root, 'docs', 'benchmarks.md'), 'cli-start', section);
