// The interface reference in docs/api/ is generated from the SDL files (scripts/gen-api-docs.ts).
// A schema change without `npm run docs` fails here, so CI catches a reference that drifted.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { buildSchema } from 'graphql';
import { API_DOCS, missingDescriptions, renderApiDoc, ROOT } from '../../scripts/gen-api-docs.js';

describe('generated GraphQL reference (docs/api)', () => {
  for (const doc of API_DOCS) {
    const sdl = readFileSync(join(ROOT, doc.sdl), 'utf8');

    it(`${doc.sdl}: every type, field, argument, input field and enum value has a description`, () => {
      assert.deepEqual(missingDescriptions(buildSchema(sdl)), []);
    });

    it(`${doc.out} is what \`npm run docs\` generates from ${doc.sdl}`, () => {
      const expected = renderApiDoc(doc, sdl);
      const path = join(ROOT, doc.out);
      const actual = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
      if (actual === expected) return;
      const have = actual?.split('\n') ?? [];
      const want = expected.split('\n');
      const at = want.findIndex((line, i) => have[i] !== line);
      assert.fail(
        actual === undefined
          ? `${doc.out} is missing: run \`npm run docs\` and commit the result`
          : `${doc.out} differs from the SDL (first at line ${at + 1}: ${JSON.stringify(have[at])} instead of ${JSON.stringify(want[at])}): run \`npm run docs\` and commit the result`,
      );
    });
  }

  it('names the undocumented elements of a schema', () => {
    const schema = buildSchema('"Q" type Query { "a" a(x: Int): E b: Int } enum E { "one" ONE TWO }');
    assert.deepEqual(missingDescriptions(schema), ['Query.a(x)', 'Query.b', 'E', 'E.TWO']);
  });
});
