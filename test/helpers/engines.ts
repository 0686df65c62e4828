// Tests that touch storage run on embedded PGlite always, and on PostgreSQL when
// TEST_DATABASE_URL is set (CI sets it, so CI covers both engines).
import type { Engine } from '../../src/store/db.js';

export function engines(): Engine[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/**
 * The engines of a test whose subject is a transport (HTTP, the pages, the browser, GraphQL over
 * HTTP, the OAuth endpoints' wire format): the embedded one only. What differs between the
 * engines is the store, and the store contract suite (test/store/contract/) runs on both; a few
 * end-to-end paths stay on both as well (sign-in pages, throttles, device flow, SAML consumption,
 * the token throttle, tenant search).
 */
export function transportEngines(): Engine[] {
  return ['pglite'];
}
