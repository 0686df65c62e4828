// No comment or document points at a file that is not in the repository: every path-like
// reference (`sso/sign-in.ts`, `docs/users.md`, `test/helpers/db.ts`) in the sources, tests and
// docs names a tracked file, read from the repository root, from src/, from test/ or from the
// referring file's own folder. A file moved or renamed without its mentions fails here.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Mentions that are not files of the repository on purpose. */
const NOT_FILES = new Set([
  // ARCHITECTURE.md's worked example of adding a capability
  'src/widgets/model.ts',
  'src/store/widgets.ts',
  // examples of `npm test -- FILE`, the second one of a file that does not exist
  'test/some.test.ts',
  'test/no-such.test.ts',
  // written by the build into dist/
  'dist/build-info.json',
]);

const REFERENCE = /(?<![\w./@-])((?:[\w-]+\/)+[\w.-]+\.(?:ts|md|mjs|cjs|json|py|graphql))(?![\w/])/g;

describe('file references', () => {
  it('every file a comment or document names is in the repository', () => {
    const tracked = new Set(execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean));
    const present = (path: string) => tracked.has(path) || (existsSync(join(root, path)) && statSync(join(root, path)).isDirectory());
    const dangling: string[] = [];
    for (const file of tracked) {
      if (!/\.(ts|md|mjs|cjs|py|graphql)$/.test(file) || file.startsWith('docs/api/') || file.includes('.generated.')) continue;
      const text = readFileSync(join(root, file), 'utf8');
      for (const m of text.matchAll(REFERENCE)) {
        const path = m[1]!;
        // part of a URL (https://host/path/x.json), not a file
        if (/:\/\/\S*$/.test(text.slice(Math.max(0, m.index - 200), m.index))) continue;
        if (path.startsWith('node_modules/') || NOT_FILES.has(path)) continue;
        const candidates = [path, `src/${path}`, `test/${path}`, normalize(join(dirname(file), path))];
        if (!candidates.some(present)) dangling.push(`${file}: ${path}`);
      }
    }
    assert.deepEqual(dangling, [], 'references to files that are not in the repository');
  });
});
