// Tests that touch storage run on embedded PGlite always, and on PostgreSQL when
// TEST_DATABASE_URL is set (CI sets it, so CI covers both engines).
import type { Engine } from '../../src/store/db.js';

export function engines(): Engine[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}
