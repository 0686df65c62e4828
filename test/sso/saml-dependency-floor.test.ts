// The SAML stack's dependency floor (security-tests.md item 69): every copy package-lock.json
// resolves, nested ones included, at or above the version that fixed the CVEs listed there. A
// package that bundles an older copy fails here rather than in production; the cure is an npm
// `overrides` entry in package.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

/** name → lowest acceptable version; null: no copy at all */
const FLOOR: Record<string, string | null> = {
  // CVE-2024-32962 (KeyInfo trusted), CVE-2025-29774 and -29775 (reference and comment bypasses)
  'xml-crypto': '6.0.1',
  // CVE-2022-39353 (several roots) and the serializer injections fixed up to 0.8.14
  '@xmldom/xmldom': '0.8.14',
  // the unscoped predecessor, abandoned with CVE-2021-21366 open
  xmldom: null,
  // CVE-2025-54369 and -54419: the assertion read from the unsigned document
  '@node-saml/node-saml': '5.1.0',
  // CVE-2025-47949: signature wrapping (the test IdP only, but no weaker copy even there)
  samlify: '2.10.0',
};

test('every resolved copy of the SAML stack is at or above its fixed version', () => {
  const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const found: string[] = [];
  for (const [path, { version }] of Object.entries(lock.packages)) {
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (!path.includes('node_modules/') || !(name in FLOOR)) continue;
    const floor = FLOOR[name]!;
    if (floor === null) assert.fail(`${path} ${version}: ${name} must not be installed`);
    assert.ok(version && compare(version, floor) >= 0, `${path} is ${version}, below ${floor}`);
    found.push(name);
  }
  // not a vacuous pass: the stack is there to be checked
  for (const name of ['xml-crypto', '@xmldom/xmldom', '@node-saml/node-saml', 'samlify'])
    assert.ok(found.includes(name), `${name} not in the lockfile`);
});

/** Compares x.y.z versions; a pre-release (x.y.z-rc) counts as below its release. */
function compare(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.split('-', 2);
    return [...core.split('.').map(Number), pre === undefined ? 1 : 0];
  };
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
