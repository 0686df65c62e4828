// The words for a failed first connection to PostgreSQL, for the causes a test cannot provoke on
// a local trust-auth server (wrong password, pg_hba, time-out); the others are tested through the
// executable (test/cli/start-failures.test.ts). DATABASE_URL's password never appears.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeConnectionFailure, redactUrl } from '../../src/store/connection-error.js';

const URL_WITH_PASSWORD = 'postgres://gatehouse:Hunter2-secret@db.internal:6543/gh?sslmode=require';

describe('describeConnectionFailure', () => {
  const cases: [string, object, RegExp, RegExp][] = [
    [
      'refused',
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 10.0.0.5:6543' },
      /: connection refused; /,
      /check that PostgreSQL is running/,
    ],
    [
      'refused (several addresses tried)',
      Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], ''), {}),
      /: connection refused; /,
      /listening on db\.internal port 6543/,
    ],
    ['host not found', { code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND db.internal' }, /: host not found; /, /check the host name/],
    ['timed out', { message: 'Connection terminated due to connection timeout' }, /: timed out/, /firewalls/],
    [
      'password',
      { code: '28P01', message: 'password authentication failed for user "gatehouse"' },
      /: password authentication failed; /,
      /user name and password/,
    ],
    ['no database', { code: '3D000', message: 'database "gh" does not exist' }, /: database "gh" does not exist; /, /create it/],
    [
      'pg_hba',
      { code: '28000', message: 'no pg_hba.conf entry for host "10.0.0.9", user "gatehouse", database "gh", no encryption' },
      /: no pg_hba\.conf entry allows this connection; /,
      /pg_hba\.conf/,
    ],
    [
      'no password given',
      { message: 'SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string' },
      /asks for a password and DATABASE_URL gives none/,
      /put the password/,
    ],
  ];
  for (const [name, err, cause, check] of cases) {
    it(`${name}: one line naming DATABASE_URL (password hidden), host and port, the cause and what to check`, () => {
      const line = describeConnectionFailure(URL_WITH_PASSWORD, err);
      assert.equal(line.includes('\n'), false);
      assert.ok(line.includes('DATABASE_URL=postgres://gatehouse:***@db.internal:6543/gh?sslmode=require'), line);
      assert.match(line, /at db\.internal port 6543/);
      assert.match(line, cause);
      assert.match(line, check);
      assert.equal(line.includes('Hunter2-secret'), false);
    });
  }

  it("an unknown error keeps pg's words, without the password", () => {
    const line = describeConnectionFailure(URL_WITH_PASSWORD, new Error(`something odd about ${URL_WITH_PASSWORD}\nsecond line`));
    assert.equal(line.includes('Hunter2-secret'), false);
    assert.equal(line.includes('\n'), false);
    assert.match(line, /something odd/);
  });
});

describe('redactUrl', () => {
  it('hides a password in the user part or in a password parameter, and nothing else', () => {
    assert.equal(redactUrl('postgres://u:p%40ss@h/db'), 'postgres://u:***@h/db');
    assert.equal(redactUrl('postgres://u@h:5433/db?password=secret&sslmode=require'), 'postgres://u@h:5433/db?password=***&sslmode=require');
    assert.equal(redactUrl('postgres://u@h/db'), 'postgres://u@h/db');
    assert.equal(redactUrl('postgres://h/db'), 'postgres://h/db');
  });
});
