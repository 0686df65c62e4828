// The scanner that finds repeated top-level keys in a JSON body, decoded as JSON defines them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { topLevelKeys } from '../../src/oauth/json-keys.js';

/** every character of the key as a \uXXXX escape */
const escapeAll = (key: string) =>
  [...key].map((c) => (c.length === 1 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : JSON.stringify(c).slice(1, -1))).join('');

describe('top-level JSON keys', () => {
  it('reads the keys of the top-level object only, whatever the values hold', () => {
    const text = ` {\n "a" : {"a":1,"b":[{"a":"}"}]}, "b":"\\"a\\":", "c":[1,"]",{"c":{}}], "d":-1.5e3 ,"e":true,"f":null, "g":[] }\t`;
    assert.deepEqual(topLevelKeys(text), ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    assert.deepEqual(topLevelKeys('{}'), []);
    assert.deepEqual(topLevelKeys('{"\\u0063lient_id":"x","client_id":"y","\\\\":"z"}'), ['client_id', 'client_id', '\\']);
  });

  it('gives the keys JSON.stringify wrote, for any object and indentation', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.constantFrom(undefined, 0, 2, '\t'), (object, indent) => {
        const text = JSON.stringify(object, null, indent);
        assert.deepEqual(topLevelKeys(text), Object.keys(JSON.parse(text)));
      }),
      { numRuns: 500 },
    );
  });

  it('finds a key written plainly and again in escapes as the same key twice', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.jsonValue(), fc.jsonValue(), (key, v1, v2) => {
        const text = `{${JSON.stringify(key)}:${JSON.stringify(v1)},"${escapeAll(key)}":${JSON.stringify(v2)}}`;
        JSON.parse(text); // well formed
        assert.deepEqual(topLevelKeys(text), [key, key]);
      }),
      { numRuns: 500 },
    );
  });
});
