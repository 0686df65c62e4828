// The embedded database's buffer cache is 32 MB (src/store/db.ts): PostgreSQL's default of 128 MB
// is zeroed at start inside PGlite's WebAssembly memory and held about 100 MB more in every idle
// process (docs/benchmarks.md). The size is given at each start, so a data folder's own
// postgresql.conf is never rewritten by Gatehouse.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/store/db.js';

describe('embedded database buffers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-buffers-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a data folder opens with 32 MB of shared buffers, and its postgresql.conf does not say so', async () => {
    for (let start = 0; start < 2; start++) {
      const db = await openDb({ engine: 'pglite', dataDir: dir });
      try {
        const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(db.kysely);
        assert.equal(rows[0]!.shared_buffers, '32MB', `start ${start + 1}`);
      } finally {
        await db.close();
      }
    }
    assert.doesNotMatch(readFileSync(join(dir, 'pgdata', 'postgresql.conf'), 'utf8'), /^\s*shared_buffers\s*=\s*32MB/m);
  });
});
