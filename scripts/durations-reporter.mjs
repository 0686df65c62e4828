// A reporter for node's test runner that writes test/durations.json: how long each test file's
// tests took (the sum of its top-level tests and suites, in milliseconds). scripts/test.mjs
// balances the processes of the whole suite by it. Refreshed by `npm run test:durations` (the
// whole suite, run as `npm test` runs it: shared processes, the same concurrency), best with
// TEST_DATABASE_URL set as CI sets it; a file it does not list counts as the median. Node's runner
// names the file a top-level test was declared in (the test file, not the bundle importing it).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default async function* durations(source) {
  const byFile = {};
  // when each file's top-level tests ended, from the start of the run (.cache/test-timeline.json):
  // which processes ended last, and how long the last ones ran alone
  const began = Date.now();
  const ended = {};
  let failed = 0;
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const file = relative(root, event.data.file);
      // a suite declared by a helper counts for no file: its time would balance nothing
      if (!file.endsWith('.test.ts')) continue;
      byFile[file] = Math.round((byFile[file] ?? 0) + event.data.details.duration_ms);
      ended[file] = Date.now() - began;
      if (event.type === 'test:fail') failed++;
    }
  }
  const sorted = Object.fromEntries(Object.entries(byFile).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(join(root, 'test', 'durations.json'), `${JSON.stringify(sorted, null, 2)}\n`);
  mkdirSync(join(root, '.cache'), { recursive: true });
  writeFileSync(join(root, '.cache', 'test-timeline.json'), `${JSON.stringify(ended, null, 2)}\n`);
  yield `test/durations.json: ${Object.keys(sorted).length} files${failed ? ` (${failed} failed: their times are partial)` : ''}\n`;
}
