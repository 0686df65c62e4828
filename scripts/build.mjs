// Build step run by `npm ci` (prepare) and by `npm test` (scripts/test.mjs) before the tests: compile TypeScript to dist/, copy
// the GraphQL schema files and the plain-JavaScript worker modules (.mjs) next to their compiled
// modules, and record what the version endpoints report.
//
// It does nothing when dist/ is already built from the current sources and commit, and a build
// never leaves dist/ half-written: it compiles into a folder of its own and swaps it in with a
// rename. Both matter because the first `npx gatehouse …` in a checkout installs the checkout
// into npx's cache and runs this script again (prepare), possibly while a server runs from dist/.
// `npm run build` (--force) builds in any case.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestMtime(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

function currentRevision() {
  if (process.env.GATEHOUSE_REVISION) return process.env.GATEHOUSE_REVISION;
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

const revision = currentRevision();
const infoFile = join(dist, 'build-info.json');

function upToDate() {
  if (!existsSync(infoFile) || !existsSync(join(dist, 'cli', 'main.js'))) return false;
  const info = JSON.parse(readFileSync(infoFile, 'utf8'));
  if (info.revision !== revision) return false;
  return statSync(infoFile).mtimeMs >= Math.max(...INPUTS.map((p) => newestMtime(join(root, p))));
}

if (!process.argv.includes('--force') && upToDate()) process.exit(0);

const staging = `${dist}.building-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
// Each module is transpiled on its own by esbuild (the compiler tsx runs the tests with), with
// tsconfig.build.json's settings: the sources are written for it (`isolatedModules`,
// `verbatimModuleSyntax`), so no module needs another to compile. Types are not checked here:
// `npm test` and `npm run typecheck` do that (tsc). tsc took 14 CPU-seconds for this; esbuild
// takes well under one, and `npm ci` runs this script on every install (docs/benchmarks.md).
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}
const { build } = await import('esbuild');
const result = await build({
  entryPoints: sources(join(root, 'src')),
  outbase: join(root, 'src'),
  outdir: staging,
  tsconfig: join(root, 'tsconfig.build.json'),
  format: 'esm',
  platform: 'node',
  target: 'node20',
  bundle: false,
  sourcemap: false,
  logLevel: 'warning',
});
if (result.errors.length > 0) process.exit(1);

function copyAssets(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copyAssets(path);
    else if (name.endsWith('.graphql') || name.endsWith('.mjs')) {
      const target = join(staging, relative(join(root, 'src'), path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
copyAssets(join(root, 'src'));
writeFileSync(join(staging, 'build-info.json'), JSON.stringify({ revision, timestamp: new Date().toISOString() }, null, 2) + '\n');

// swap: the old build moves aside, the new one takes its name, the old one goes
const old = `${dist}.old-${process.pid}`;
try {
  renameSync(dist, old);
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
try {
  renameSync(staging, dist);
} catch (err) {
  // a build running at the same time swapped its own in first: it is built from the same sources
  if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
  rmSync(staging, { recursive: true, force: true });
}
rmSync(old, { recursive: true, force: true });
