// `npm test`: the test runner. With no argument (CI), it builds dist/ (the CLI tests spawn it),
// type-checks (beside the tests), and runs every test/**/*.test.ts. With files or folders (`npm test --
// test/cli/ctrl-c.test.ts`), it builds dist/ and runs only those, without the type-check (tsx
// runs the files without one; `npm run typecheck` does it alone). Options of node's test runner
// (--test-name-pattern=…, --test-only, …) are passed on.
//
// The whole suite shares processes between files: each process pays for Node, tsx, the imports,
// the first PGlite and the first service once (about 3.7 CPU-s) instead of once per file. Node's
// runner runs one more process at a time than there are cores; the files are planned in as many
// lanes, balanced by the time each file took (test/durations.json, written by `npm run
// test:durations`; a file not listed counts as the median), and each lane's files are one bundle,
// a module that imports them (bundled()). A file whose first lines say `// test-runner: own
// process` (it patches a global, or measures its process) runs alone, at the head of a lane.
// Several files named on the command line (or a folder) are planned the same way; one file named
// runs alone, with node's runner as it is (scripts/test-harness-hook.mjs). PGlite databases
// are lent and given back within a process (test/helpers/db.ts).
//
// Node 20's runner needs the .ts files named one by one: given a folder, or nothing, it looks
// only for .js/.cjs/.mjs files, finds none and passes. So folders are expanded here, and a path
// that names no test file is an error, not an empty pass. The reporters are the suite's: spec on
// standard error for people, TAP on standard output for CI (its `# tests`, `# pass`, `# fail`).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** test processes at once: one more than the cores, as many tests wait on a child process, a
 *  browser or a socket (on 2 cores: 6m13s at 3, 6m58s at 2; docs/benchmarks.md) */
const CONCURRENCY = Number(process.env.GATEHOUSE_TEST_CONCURRENCY || availableParallelism() + 1);
/** the lanes the files are planned in: one per process at once (bundled()) */
const LANES = CONCURRENCY;

const USAGE = `Usage: npm test [-- [PATH]... [--test-name-pattern=REGEX] [--test-only]]

  npm test                            build, type-check, run every test/**/*.test.ts
  npm test -- test/config.test.ts     build, run that file only (no type-check)
  npm test -- test/cli                build, run every *.test.ts under that folder
  npm test -- test/cli.test.ts --test-name-pattern='first start'
                                      only the tests whose name matches

PATH is a test file or a folder, relative to the folder npm was run from (or to
the repository root). Options starting with --test- go to node's test runner
(node --test --help lists them). Storage tests run on PGlite, and also on
PostgreSQL when TEST_DATABASE_URL is set, e.g.
  TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test -- test/users
`;

/** Every *.test.ts under `dir`. */
function testFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...testFiles(path));
    else if (entry.name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

function fail(message) {
  process.stderr.write(`npm test: ${message}; see npm test -- --help\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const options = [];
const files = [];
// npm runs the script from the repository root; INIT_CWD is where it was typed
const bases = [...new Set([process.env.INIT_CWD, process.cwd(), root].filter(Boolean))];
for (const arg of args) {
  if (arg.startsWith('--test-')) {
    options.push(arg);
    continue;
  }
  if (arg.startsWith('-')) fail(`unknown option ${arg} (options of node's test runner start with --test-)`);
  const path = bases.map((base) => resolve(base, arg)).find((p) => existsSync(p));
  if (!path) fail(`no such file or folder: ${arg}`);
  if (statSync(path).isDirectory()) {
    const inside = testFiles(path);
    if (inside.length === 0) fail(`no *.test.ts file under ${arg}`);
    files.push(...inside.sort());
  } else files.push(path);
}
const everything = files.length === 0;

function run(command, commandArgs) {
  const r = spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit' });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

// dist/ is what the CLI tests spawn; the build does nothing when it is current
const built = run(process.execPath, [join(root, 'scripts', 'build.mjs')]);
if (built !== 0) process.exit(built);
// The whole suite type-checks too, beside the tests rather than before them (tsc takes one core
// for several seconds: 18 CPU-s on a fresh clone), at the lowest priority, so that it runs in the
// moments the tests leave a core idle (waiting on a child process, a browser, a timer) rather than
// taking one from them; GATEHOUSE_TEST_TYPECHECK=0 leaves it out (CI's second Node line: the
// first one checked the same sources).
const typecheck =
  everything && process.env.GATEHOUSE_TEST_TYPECHECK !== '0'
    ? lowestPriority(
        spawn(
          process.execPath,
          [
            join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
            '-p',
            'tsconfig.json',
            '--noEmit',
            // what did not change since the last run is not checked again (a fresh clone checks all)
            '--incremental',
            '--tsBuildInfoFile',
            join(root, 'node_modules', '.cache', 'gatehouse-test', 'tsconfig.tsbuildinfo'),
          ],
          {
            cwd: root,
            stdio: ['ignore', 'inherit', 'inherit'],
          },
        ),
      )
    : Promise.resolve(0);
// several files (a folder, or the whole suite) are planned in lanes and bundled; one file runs alone
const named = [...new Set(files)];
const planned = everything || named.length > 1;
const list = everything ? bundled(testFiles(join(root, 'test')).sort()) : planned ? bundled(named) : named;
// each bundle module leaves a mark once its files are loaded: a runner that leaves a file out
// without a word (Node 26's leaves out any path under node_modules, and passed) fails the run
const marks = planned ? list.map((f) => `${f}.ran`) : [];
const tests = await exitOf(
  spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      // the whole suite: node's runner without its per-promise async hook (scripts/test-harness-hook.mjs)
      ...(planned ? ['--import', pathToFileURL(join(root, 'scripts', 'test-harness-hook.mjs')).href] : []),
      '--test',
      `--test-concurrency=${CONCURRENCY}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stderr',
      '--test-reporter=tap',
      '--test-reporter-destination=stdout',
      // `npm run test:durations`: each file's time in this very run (shared processes, as balanced)
      ...(process.env.GATEHOUSE_TEST_DURATIONS === '1'
        ? [`--test-reporter=${pathToFileURL(join(root, 'scripts', 'durations-reporter.mjs')).href}`, '--test-reporter-destination=stderr']
        : []),
      ...options,
      ...list.map((f) => relative(root, f)),
    ],
    { cwd: root, stdio: 'inherit' },
  ),
);
const checked = await typecheck;
// checked after a pass only (a failed or interrupted run fails anyway, with its own status), and
// once the type-check has ended, so that nothing prints after the verdict
const unran = tests === 0 ? marks.filter((m) => !existsSync(m)).map((m) => relative(root, m.slice(0, -'.ran'.length))) : [];
if (unran.length > 0) {
  process.stderr.write(
    `npm test: node's test runner never loaded ${unran.length} of ${marks.length} test modules (${unran.join(', ')}): the run is not a pass\n`,
  );
  process.exit(1);
}
if (checked !== 0) process.stderr.write('npm test: the type-check failed (above)\n');
process.exit(tests !== 0 ? tests : checked);

/** The child's exit, as exitOf, once it is set to the lowest priority (nice 19; where the system
 *  refuses, it runs as it is). */
function lowestPriority(child) {
  try {
    if (child.pid !== undefined) setPriority(child.pid, 19);
  } catch {
    // not permitted here: no matter
  }
  return exitOf(child);
}

function exitOf(child) {
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/**
 * The files to hand to node's runner for the whole suite, planned as lanes: one lane per test
 * process running at once (CONCURRENCY). A file that needs a process of its own goes first, to
 * the lightest lane; then the shared files, longest first, each to the lightest lane; each lane's
 * shared files are one bundle (a module importing them). Node's runner starts the first
 * CONCURRENCY items of its list and, whenever one ends, the next: so the list is the own files
 * (longest first) and then the bundles, the bundle of the lane with nothing before it first and
 * that of the lane with the longest own file last, which starts when that file ends. Every lane
 * then ends at about the same time, instead of the last bundles running alone on idle cores.
 */
function bundled(all) {
  const own = all.filter((f) => /^\/\/ test-runner: own process/m.test(readFileSync(f, 'utf8').slice(0, 2000)));
  const shared = all.filter((f) => !own.includes(f));
  const durations = loadDurations();
  const known = Object.values(durations).sort((a, b) => a - b);
  const median = known.length > 0 ? known[Math.floor(known.length / 2)] : 1;
  const cost = (f) => durations[relative(root, f)] ?? median;
  const lanes = Array.from({ length: Math.max(1, Math.min(LANES, shared.length)) }, () => ({ cost: 0, own: 0, files: [] }));
  const lightest = () => lanes.reduce((a, b) => (b.cost < a.cost ? b : a));
  const ownFirst = [...own].sort((a, b) => cost(b) - cost(a));
  for (const f of ownFirst) {
    const lane = lightest();
    lane.own += cost(f);
    lane.cost += cost(f);
  }
  for (const f of [...shared].sort((a, b) => cost(b) - cost(a))) {
    const lane = lightest();
    lane.files.push(f);
    lane.cost += cost(f);
  }
  // not under node_modules: Node 26's runner leaves out every file there, even one named to it
  // (it ran the two own-process files only, and passed)
  // a folder of this run's own: a run may start another (test/cli/test-runner.test.ts does), and
  // runs in other terminals may share the checkout; the folders of runs that ended go
  const dir = bundleDir();
  // a file that needs a process of its own is a bundle of one, so that it leaves its mark too
  const alone = ownFirst.map((f, i) => {
    const file = join(dir, `own-${String(i + 1).padStart(2, '0')}.test.mjs`);
    writeBundle(file, [f]);
    return file;
  });
  const bundles = [...lanes]
    .filter((l) => l.files.length > 0)
    .sort((a, b) => a.own - b.own)
    .map((lane, i) => {
      const file = join(dir, `bundle-${String(i + 1).padStart(2, '0')}.test.mjs`);
      // in the order of the suite, so a bundle's output reads like the files' own
      writeBundle(file, lane.files.sort());
      return file;
    });
  return [...alone, ...bundles];
}

/** A module that imports the test files, then marks itself loaded (`<module>.ran`; imports are
 *  evaluated before the module's own body). */
function writeBundle(file, testFiles) {
  const lines = testFiles.map((f) => `import ${JSON.stringify(pathToFileURL(f).href)};`);
  writeFileSync(
    file,
    `// ${testFiles.length} test file${testFiles.length === 1 ? '' : 's'} in one process (scripts/test.mjs)\n` +
      `import { writeFileSync } from 'node:fs';\n${lines.join('\n')}\n` +
      `writeFileSync(${JSON.stringify(`${file}.ran`)}, '');\n`,
  );
}

/** `.cache/test-bundles/<pid>`, new; the folders of runs no longer running are removed (they
 *  remove their own when they end, unless killed). */
function bundleDir() {
  const parent = join(root, '.cache', 'test-bundles');
  mkdirSync(parent, { recursive: true });
  for (const name of readdirSync(parent)) {
    if (/^\d+$/.test(name) && Number(name) !== process.pid && alive(Number(name))) continue;
    rmSync(join(parent, name), { recursive: true, force: true });
  }
  const dir = join(parent, String(process.pid));
  mkdirSync(dir, { recursive: true });
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function loadDurations() {
  const file = join(root, 'test', 'durations.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
}
