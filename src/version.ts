// What the version endpoints report: the package version, the git commit it was built from, and
// the build time (dist/build-info.json, written by `npm run build`). Run from source, the commit
// is asked of git and the time is the process start.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface VersionInfo {
  tag: string;
  revision: string;
  timestamp: string;
}

function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found');
    dir = parent;
  }
  return dir;
}

let loaded: VersionInfo | undefined;

export function loadVersionInfo(): VersionInfo {
  loaded ??= readVersionInfo();
  return loaded;
}

function readVersionInfo(): VersionInfo {
  const root = projectRoot();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const buildInfo = join(root, 'dist', 'build-info.json');
  const fromSource = !import.meta.url.includes('/dist/');
  if (!fromSource && existsSync(buildInfo)) {
    const info = JSON.parse(readFileSync(buildInfo, 'utf8')) as { revision: string; timestamp: string };
    return { tag: pkg.version, revision: info.revision, timestamp: info.timestamp };
  }
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
  return { tag: pkg.version, revision, timestamp: new Date().toISOString() };
}
