// The SAML stack's dependency floor (security-tests.md item 69): every copy package-lock.json
// resolves, nested ones included, at or above the version that fixed the CVEs listed there, and
// no copy at all of the SAML libraries the service does not use. A package that bundles an older
// copy fails here rather than in production; the cure is an npm `overrides` entry in package.json.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compareVersions as compare } from '../helpers/versions.js';

/** name → lowest acceptable version, or one per release line (major.minor) where fixes were
 *  released on several; null: no copy at all */
const FLOOR: Record<string, string | readonly string[] | null> = {
  // CVE-2024-32962 (KeyInfo trusted), CVE-2025-29774 and -29775 (reference and comment bypasses)
  'xml-crypto': '6.0.1',
  // CVE-2022-39353 (several roots) and the serializer injections (CVE-2026-34601, -41674,
  // -83605): fixed up to 0.8.14 on the 0.8 line, in 0.9.9 on the 0.9 line
  '@xmldom/xmldom': ['0.8.14', '0.9.9'],
  // the unscoped predecessor, abandoned with CVE-2021-21366 open
  xmldom: null,
  // CVE-2025-54369 and -54419: the assertion read from the unsigned document
  '@node-saml/node-saml': '5.1.0',
  // CVE-2025-47949: signature wrapping (the test IdP only, but no weaker copy even there)
  samlify: '2.10.0',
  // other SAML libraries, with advisories of their own: none of them is used, so no copy at all
  // passport-saml: CVE-2022-39299 (several roots), fixed in 3.2.2; renamed @node-saml/passport-saml
  'passport-saml': null,
  // saml2-js: GHSA-5p5w-j3g7-w4wv (a comment truncates the NameID), fixed in 1.12.4 and 2.0.2
  'saml2-js': null,
  // node-saml, unscoped: CVE-2022-39299 up to 4.0.0-beta.5; the library lives on as @node-saml/node-saml
  'node-saml': null,
};

type Lockfile = { packages: Record<string, { version?: string }> };

/** What breaks the floor in a lockfile: one line per offending copy. */
function belowFloor(lock: Lockfile): { problems: string[]; found: Set<string> } {
  const problems: string[] = [];
  const found = new Set<string>();
  for (const [path, { version }] of Object.entries(lock.packages)) {
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    if (!path.includes('node_modules/') || !(name in FLOOR)) continue;
    found.add(name);
    const floor = FLOOR[name]!;
    if (floor === null) {
      problems.push(`${path} ${version}: ${name} must not be installed`);
      continue;
    }
    const applies = floorFor(floor, version ?? '0.0.0');
    if (!version || compare(version, applies) < 0) problems.push(`${path} is ${version}, below ${applies}`);
  }
  return { problems, found };
}

/** The floor on the version's release line, if listed; else the highest (a version on no listed
 *  line must be newer than them all: an older line is unfixed). */
function floorFor(floor: string | readonly string[], version: string): string {
  if (typeof floor === 'string') return floor;
  const line = (v: string) => v.split('.').slice(0, 2).join('.');
  return floor.find((f) => line(f) === line(version)) ?? floor.reduce((a, b) => (compare(a, b) >= 0 ? a : b));
}

test('every resolved copy of the SAML stack is at or above its fixed version', () => {
  const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as Lockfile;
  const { problems, found } = belowFloor(lock);
  assert.deepEqual(problems, []);
  // not a vacuous pass: the stack is there to be checked
  for (const name of ['xml-crypto', '@xmldom/xmldom', '@node-saml/node-saml', 'samlify']) assert.ok(found.has(name), `${name} not in the lockfile`);
});

test('the floor holds each @xmldom/xmldom line to its own fix, and refuses any copy of the unused SAML libraries', () => {
  const nested = (name: string) => `node_modules/some-idp-kit/node_modules/${name}`;
  const lock: Lockfile = {
    packages: {
      '': { version: '0.1.0' },
      'node_modules/@xmldom/xmldom': { version: '0.8.14' },
      [nested('@xmldom/xmldom')]: { version: '0.9.9' },
      'node_modules/a/node_modules/@xmldom/xmldom': { version: '0.9.8' },
      'node_modules/b/node_modules/@xmldom/xmldom': { version: '0.8.13' },
      'node_modules/c/node_modules/@xmldom/xmldom': { version: '0.10.0' },
      'node_modules/d/node_modules/@xmldom/xmldom': { version: '0.7.13' },
      [nested('passport-saml')]: { version: '3.2.2' },
      [nested('saml2-js')]: { version: '2.0.2' },
      [nested('node-saml')]: { version: '4.0.0' },
      [nested('@node-saml/passport-saml')]: { version: '5.1.0' },
    },
  };
  assert.deepEqual(belowFloor(lock).problems, [
    'node_modules/a/node_modules/@xmldom/xmldom is 0.9.8, below 0.9.9',
    'node_modules/b/node_modules/@xmldom/xmldom is 0.8.13, below 0.8.14',
    'node_modules/d/node_modules/@xmldom/xmldom is 0.7.13, below 0.9.9',
    `${nested('passport-saml')} 3.2.2: passport-saml must not be installed`,
    `${nested('saml2-js')} 2.0.2: saml2-js must not be installed`,
    `${nested('node-saml')} 4.0.0: node-saml must not be installed`,
  ]);
});
