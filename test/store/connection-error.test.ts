// The words for a failed first connection to PostgreSQL, for the causes a test cannot provoke on
// a local trust-auth server (wrong password, pg_hba, time-out); the others are tested through the
// executable (test/cli/start-failures.test.ts). DATABASE_URL's password never appears.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeConnectionFailure, isConnectionFailure, redactUrl } from '../../src/store/connection-error.js';

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

// A connection failure during service becomes DatabaseUnavailableError (503 UNAVAILABLE at each
// edge: docs/operations.md, "PostgreSQL outages and failover"); what the database said about a
// statement stays what it was. End to end: test/ops/pg-outage.test.ts.
describe('isConnectionFailure', () => {
  const unavailable: [string, object][] = [
    ['refused', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }],
    ['reset', { code: 'ECONNRESET', message: 'read ECONNRESET' }],
    ['server shutting down', { code: '57P01', message: 'terminating connection due to administrator command' }],
    ['server starting', { code: '57P03', message: 'the database system is starting up' }],
    ['connection exception class', { code: '08006', message: 'connection failure' }],
    ['a write on a standby', { code: '25006', message: 'cannot execute INSERT in a read-only transaction' }],
    ['lost mid-statement', { message: 'Connection terminated unexpectedly' }],
    ['connect timeout', { message: 'timeout exceeded when trying to connect' }],
    ['a dead client reused', { message: 'Client has encountered a connection error and is not queryable' }],
    ['every address refused', { message: 'connect failed', errors: [{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }] }],
  ];
  for (const [what, err] of unavailable) {
    it(`${what}: unavailable`, () => assert.equal(isConnectionFailure(err), true));
  }
  const other: [string, unknown][] = [
    ['a unique violation', { code: '23505', message: 'duplicate key value violates unique constraint' }],
    ['a statement timeout', { code: '57014', message: 'canceling statement due to statement timeout' }],
    ['a syntax error', { code: '42601', message: 'syntax error at or near "selec"' }],
    ['a pool closed by us', new Error('Cannot use a pool after calling end on the pool')],
    ['not an error', undefined],
  ];
  for (const [what, err] of other) {
    it(`${what}: not unavailable`, () => assert.equal(isConnectionFailure(err), false));
  }
});
