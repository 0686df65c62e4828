// The Time scalar: what a caller sends that is not a time is the caller's error (BAD_USER_INPUT);
// what the server produces that is not a time is the server's (INTERNAL, logged, never shown).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GraphQLError } from 'graphql';
import { formatGraphQLError } from '../../src/graphql/errors.js';
import { TimeScalar } from '../../src/graphql/scalars.js';

describe('Time scalar', () => {
  it('serializes dates and ISO text of the server as UTC with milliseconds', () => {
    assert.equal(TimeScalar.serialize(new Date('2026-11-23T10:00:00+01:00')), '2026-11-23T09:00:00.000Z');
    assert.equal(TimeScalar.serialize('2026-11-23T10:00:00Z'), '2026-11-23T10:00:00.000Z');
  });

  it('serializes a Date again after it changed (the text of a Date served before is kept)', () => {
    const d = new Date('2026-11-22T10:00:00Z');
    assert.equal(TimeScalar.serialize(d), '2026-11-22T10:00:00.000Z');
    assert.equal(TimeScalar.serialize(d), '2026-11-22T10:00:00.000Z');
    d.setTime(d.getTime() + 1500);
    assert.equal(TimeScalar.serialize(d), '2026-11-22T10:00:01.500Z');
  });

  it('reports a value the server produced that is not a time as an internal error, not as bad input', () => {
    for (const bad of ['soon', 42, new Date('invalid'), null]) {
      let thrown: unknown;
      try {
        TimeScalar.serialize(bad);
      } catch (err) {
        thrown = err;
      }
      assert.ok(thrown instanceof Error && !(thrown instanceof GraphQLError), `${String(bad)}: ${String(thrown)}`);
      // as graphql-js reports it: wrapped, with the original error inside
      const logged: unknown[] = [];
      const shown = formatGraphQLError(new GraphQLError('wrapped', { originalError: thrown as Error }), (e) => logged.push(e));
      assert.deepEqual(shown, { message: 'Internal server error', extensions: { code: 'INTERNAL' } });
      assert.equal(logged.length, 1);
    }
  });

  it("reports a caller's value that is not a time as BAD_USER_INPUT", () => {
    assert.throws(
      () => TimeScalar.parseValue('soon'),
      (err: GraphQLError) => err.extensions.code === 'BAD_USER_INPUT',
    );
  });
});
