// The security-relevant libraries' floor (issue 25, "Dependencies"; the SAML stack's own, with the
// CVEs the list of attacks names, is test/sso/saml-dependency-floor.test.ts): every copy that
// package-lock.json resolves, nested ones included, is at or above the newest patch of its line
// on the day the floor was set (2026-11-28, read from the npm registry), so that a lockfile that
// falls back to an older copy fails here. `npm audit` cannot run on these machines (the registry
// answers its advisory endpoint with 405): docs/security.md says how the floors are raised.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compareVersions as compare } from '../helpers/versions.js';

/** name → lowest acceptable version of each major line found (the newest patch of that line,
 *  2026-11-28); a copy of a line not listed fails, so a new line is a decision, not a default */
const FLOOR: Record<string, string | string[]> = {
  // JOSE: access tokens signed and verified, JWKS (line 5: oidc-provider's own copy, a
  // devDependency of the side-by-side benchmark only)
  jose: ['6.2.18', '5.10.0'],
  // user passwords (argon2id)
  '@node-rs/argon2': '2.2.1',
  // passkeys (WebAuthn)
  '@simplewebauthn/server': '14.0.3',
  // mail (SMTP, STARTTLS)
  nodemailer: '10.6.1',
  // the web framework
  fastify: '5.12.8',
  // both GraphQL interfaces
  graphql: '16.15.0',
  // the PostgreSQL driver
  pg: '8.23.1',
};

test('every resolved copy of a security-relevant library is at or above its floor', () => {
  const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const found = new Set<string>();
  for (const [path, { version }] of Object.entries(lock.packages)) {
    if (!path.includes('node_modules/')) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const floors = FLOOR[name];
    if (floors === undefined) continue;
    const line = version?.split('.')[0];
    const floor = [floors].flat().find((f) => f.split('.')[0] === line);
    assert.ok(floor, `${path} is ${version}: no floor for line ${line} of ${name} (add one, or keep to a listed line)`);
    assert.ok(version && compare(version, floor) >= 0, `${path} is ${version}, below ${floor}`);
    found.add(name);
  }
  // not a vacuous pass: each library is there to be checked
  assert.deepEqual([...found].sort(), Object.keys(FLOOR).sort());
});

test('the floor compares versions as numbers, a pre-release below its release', () => {
  assert.ok(compare('6.2.18', '6.2.9') > 0);
  assert.ok(compare('10.0.0', '9.9.9') > 0);
  assert.ok(compare('6.2.18-rc.1', '6.2.18') < 0);
  assert.equal(compare('5.12.8', '5.12.8'), 0);
});
