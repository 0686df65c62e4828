// Build step run by `npm ci` (prepare): compile TypeScript to dist/, copy the GraphQL schema
// files next to their compiled modules, and record what the version endpoints report.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

function copyAssets(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) copyAssets(path);
    else if (name.endsWith('.graphql')) {
      const target = join(root, 'dist', relative(join(root, 'src'), path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
    }
  }
}
copyAssets(join(root, 'src'));

let revision = process.env.GATEHOUSE_REVISION ?? '';
if (!revision) {
  try {
    revision = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    revision = 'unknown';
  }
}
writeFileSync(join(root, 'dist', 'build-info.json'), JSON.stringify({ revision, timestamp: new Date().toISOString() }, null, 2) + '\n');
