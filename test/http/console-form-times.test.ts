// The times typed in the console's forms (src/http/pages/console/form-times.ts): a datetime-local
// value, to the minute or the second, is the UTC time it spells, whatever the server's time zone
// (run this file with TZ=America/New_York: the same answers); anything else is refused, naming
// the field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { formTime } from '../../src/http/pages/console/form-times.js';

describe('console form times', () => {
  it('reads a datetime-local value as UTC, to the minute or the second', () => {
    assert.equal(formTime('2026-11-28T09:30', 'until')?.toISOString(), '2026-11-28T09:30:00.000Z');
    // the shape a browser sends when the value has seconds: no zone, and still UTC, not the server's local time
    assert.equal(formTime('2026-11-28T09:30:15', 'until')?.toISOString(), '2026-11-28T09:30:15.000Z');
    assert.equal(formTime(' 2026-07-01T23:59:59 ', 'until')?.toISOString(), '2026-07-01T23:59:59.000Z', 'around it, spaces do not count');
  });

  it('an empty field is no time', () => {
    assert.equal(formTime(undefined, 'until'), undefined);
    assert.equal(formTime('', 'until'), undefined);
    assert.equal(formTime('  ', 'until'), undefined);
  });

  it('refuses anything else, naming the field', () => {
    for (const given of [
      'tomorrow',
      '2026-11-28',
      '2026-11-28 09:30',
      '2026-11-28T09:30Z',
      '2026-11-28T09:30+05:00',
      '2026-11-28T09:30:15.250',
      '2026-02-30T10:00',
      '2026-11-28T24:00',
      '2026-11-28T09:60',
      '28/11/2026 09:30',
    ]) {
      assert.throws(
        () => formTime(given, 'created_from'),
        (err: unknown) =>
          err instanceof AppError &&
          err.code === 'BAD_USER_INPUT' &&
          err.details.field === 'created_from' &&
          err.message === 'created_from must be a date and time such as 2026-11-28T09:30 (UTC)',
        given,
      );
    }
  });
});
