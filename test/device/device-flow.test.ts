// Device authorization (RFC 8628) at the protocol level, on both engines: the start response,
// every answer of section 3.5 while polling, slow_down growing the interval, an approved code
// yielding a working user token exactly once, denial, expiry, the wrong account, another client's
// code, and the metadata. (Here the person's approval goes through the service; the /device page
// that calls it is tested in test/http/device-pages.test.ts and in the browser.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { canonicalUserCode } from '../../src/device/model.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { loggedTestDb, type StatementLog } from '../helpers/statements.js';

const DEVICE_PATH = '/auth/api/v2/auth/device/code';
const TOKEN_PATH = '/auth/api/v2/auth/token';
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

for (const engine of engines()) {
  describe(`device authorization (${engine})`, () => {
    let t: TestApp;
    let userId: string;
    /** the statements the app sends (test/helpers/statements.ts) */
    let log: StatementLog;
    before(async () => {
      const logged = await loggedTestDb(engine);
      log = logged.log;
      t = await startTestApp({ engine, db: logged.db });
      const res = await t.gql(await t.rootToken(), 'mutation($e: String!) { createUser(email: $e) { user { id } } }', { e: 'cli@example.com' });
      userId = res.body.data.createUser.user.id;
    });
    after(() => t.close());

    const form = (body: Record<string, string>) => new URLSearchParams(body).toString();
    const start = (body: Record<string, string> = { client_id: 'gatehouse-cli', login_hint: 'cli@example.com' }) =>
      t.request({ method: 'POST', url: DEVICE_PATH, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form(body) });
    const poll = (deviceCode: string, clientId = 'gatehouse-cli') =>
      t.request({
        method: 'POST',
        url: TOKEN_PATH,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ grant_type: GRANT, device_code: deviceCode, client_id: clientId }),
      });
    /** 'done', or the refusal as `refused <status>: <message>` */
    const decide = async (userCode: string, approve: boolean, email = 'cli@example.com', id = userId) => {
      const decided = await t.service.services.device.decide(canonicalUserCode(userCode)!, { id, email, tenantId: '1' }, approve, undefined, {
        id: 'req-device',
        address: '192.0.2.77',
      });
      return decided.kind === 'refused' ? `refused ${decided.status}: ${decided.message}` : decided.kind;
    };

    it('starts: a high-entropy device code, an 8-letter user code of 20 consonants, the URIs, 600 s, 5 s', async () => {
      const res = await start();
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      const b = res.body;
      assert.match(b.device_code, /^[A-Za-z0-9_-]{43}$/);
      // RFC 8628 section 6.1: the 20 consonants, written out here rather than read from the source
      assert.match(b.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      assert.equal(b.verification_uri, 'http://gatehouse.test/device');
      assert.equal(b.verification_uri_complete, `http://gatehouse.test/device?user_code=${b.user_code}`);
      assert.deepEqual([b.expires_in, b.interval], [600, 5]);
      const rows = await t.db.kysely.selectFrom('device_authorizations').select('device_code_hash').execute();
      assert.ok(!rows.some((r) => Buffer.from(r.device_code_hash).toString('base64url') === b.device_code), 'only a digest is stored');
      // each start draws new codes: no counter, no repeat
      const more = [b];
      for (let i = 0; i < 4; i++) more.push((await start()).body);
      assert.equal(new Set(more.map((m) => m.device_code)).size, 5, 'five starts, five device codes');
      assert.equal(new Set(more.map((m) => m.user_code)).size, 5, 'five starts, five user codes');
    });

    it('refuses an unknown client and a missing login_hint', async () => {
      const unknown = await start({ client_id: 'someone-else', login_hint: 'cli@example.com' });
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error, 'invalid_client');
      const noHint = await start({ client_id: 'gatehouse-cli' });
      assert.equal(noHint.status, 400);
      assert.equal(noHint.body.error, 'invalid_request');
      assert.match(noHint.body.error_description, /login_hint/);
    });

    it('pending, then slow_down (interval + 5 s) when polled too fast, then the token once, then invalid_grant', async () => {
      const { device_code, user_code } = (await start()).body;
      let r = await poll(device_code);
      assert.deepEqual([r.status, r.body.error], [400, 'authorization_pending']);
      r = await poll(device_code);
      assert.deepEqual([r.status, r.body.error], [400, 'slow_down']);
      assert.match(r.body.error_description, /every 10 seconds/);
      // 6 s later: enough for the old interval (5 s), not for the raised one (10 s): slowed down again
      t.clock.advance(6_000);
      r = await poll(device_code);
      assert.deepEqual([r.status, r.body.error], [400, 'slow_down'], 'the raised interval holds');
      assert.match(r.body.error_description, /every 15 seconds/);
      t.clock.advance(15_000);
      r = await poll(device_code);
      assert.deepEqual([r.status, r.body.error], [400, 'authorization_pending'], 'at the new interval: pending');
      assert.equal(await decide(user_code, true), 'done');
      t.clock.advance(15_000);
      r = await poll(device_code);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.token_type, 'Bearer');
      // the token is the approving user's, in their home tenant
      const claims = decodeJwt(r.body.access_token);
      assert.deepEqual([claims.sub, claims.pty, claims.tid], [userId, 'user', '1']);
      const api = await t.gql(r.body.access_token, '{ clients { id } }');
      assert.equal(api.status, 200, 'the user token works on the APIs');
      t.clock.advance(15_000);
      r = await poll(device_code);
      assert.deepEqual([r.status, r.body.error], [400, 'invalid_grant'], 'an approved code yields its token once');
    });

    it('access_denied after a denial; expired_token after 600 s', async () => {
      const denied = (await start()).body;
      assert.equal(await decide(denied.user_code, false), 'done');
      const r = await poll(denied.device_code);
      assert.deepEqual([r.status, r.body.error], [400, 'access_denied']);
      const late = (await start()).body;
      t.clock.advance(601_000);
      const expired = await poll(late.device_code);
      assert.deepEqual([expired.status, expired.body.error], [400, 'expired_token']);
      assert.match(await decide(late.user_code, true), /^refused 400: It expired or was already used\./, 'nobody approves an expired code');
    });

    it('five polls at once after the approval: exactly one gets the token, the others invalid_grant', async () => {
      const { device_code, user_code } = (await start()).body;
      assert.equal(await decide(user_code, true), 'done');
      t.clock.advance(5_000);
      const answers = await Promise.all(Array.from({ length: 5 }, () => poll(device_code)));
      const issued = answers.filter((a) => a.status === 200);
      assert.equal(issued.length, 1, answers.map((a) => a.text).join('\n'));
      assert.match(issued[0]!.body.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.deepEqual(
        answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.error]),
        Array.from({ length: 4 }, () => [400, 'invalid_grant']),
      );
    });

    it('an approval and a denial are audit events of the user, with the request, never the codes; a refused one is none', async () => {
      const events = () =>
        t.db.kysely
          .selectFrom('audit_events')
          .selectAll()
          .where('action', 'in', ['device.approved', 'device.denied'])
          .orderBy('occurred_at')
          .orderBy('action')
          .execute();
      const before = (await events()).length;
      const approved = (await start()).body;
      assert.equal(await decide(approved.user_code, true), 'done');
      t.clock.advance(1000);
      const denied = (await start()).body;
      assert.equal(await decide(denied.user_code, false), 'done');
      assert.match(await decide(denied.user_code, true), /^refused 400/, 'decided already');
      const rows = (await events()).slice(before);
      assert.deepEqual(
        rows.map((r) => [r.action, r.actor_kind, r.actor_id, String(r.tenant_id), String(r.actor_tenant_id), r.outcome, r.request_id, r.address]),
        [
          ['device.approved', 'user', userId, '1', '1', 'success', 'req-device', '192.0.2.77'],
          ['device.denied', 'user', userId, '1', '1', 'success', 'req-device', '192.0.2.77'],
        ],
      );
      const text = JSON.stringify(rows);
      for (const secret of [approved.device_code, approved.user_code, denied.device_code, denied.user_code]) {
        assert.ok(!text.includes(secret) && !text.includes(canonicalUserCode(secret) ?? secret), 'a code is in an audit event');
      }
    });

    it('only the account the CLI named may approve; another client cannot poll the code; an unknown code is invalid_grant', async () => {
      const { device_code, user_code } = (await start()).body;
      assert.match(
        await decide(user_code, true, 'someone-else@example.com', userId),
        /^refused 403: Your command line asked to sign in as a different account than someone-else@example\.com\./,
      );
      assert.equal((await poll(device_code)).body.error, 'authorization_pending');
      t.clock.advance(5_000);
      const other = await poll(device_code, 'someone-else');
      assert.deepEqual([other.status, other.body.error], [401, 'invalid_client']);
      assert.equal((await poll('x'.repeat(43))).body.error, 'invalid_grant');
      // not a code's shape (too long, a character outside base64url): the same answer
      assert.equal((await poll(`${device_code}x`)).body.error, 'invalid_grant');
      assert.equal((await poll(`${device_code.slice(0, 42)}=`)).body.error, 'invalid_grant');
    });

    it('a disabled user gets no token from a code it approved before', async () => {
      const { device_code, user_code } = (await start()).body;
      assert.equal(await decide(user_code, true), 'done');
      t.clock.advance(1000);
      await t.gql(await t.rootToken(), 'mutation($id: ID!) { disableUser(id: $id) { id } }', { id: userId });
      const r = await poll(device_code);
      assert.equal(r.body.error, 'invalid_grant');
      await t.gql(await t.rootToken(), 'mutation($id: ID!) { enableUser(id: $id) { id } }', { id: userId });
    });

    it('guessing user codes from one address slows it down after 10 wrong ones', async () => {
      const { user_code } = (await start()).body;
      const enter = (code: string, address = '198.51.100.77') => t.service.services.device.enter(code, address);
      for (let i = 0; i < 10; i++) {
        const unknown = await enter(`BBBB-BBB${'CDFGHJKLMN'[i]}`);
        assert.deepEqual(unknown.kind === 'refused' && [unknown.status, unknown.retryAfter], [400, undefined], 'an unknown code');
      }
      const blocked = await enter(user_code);
      assert.ok(blocked.kind === 'refused' && blocked.status === 429 && blocked.retryAfter! > 0, 'even the right code waits');
      assert.equal((await enter(user_code, '198.51.100.78')).kind, 'ok', 'another address is not slowed');
      t.clock.advance(30_000);
      assert.equal((await enter(user_code.toLowerCase().replace('-', ' '))).kind, 'ok', 'after the delay; typed in any case, with a space');
    });

    it('a user code typed in lower case, with spaces or extra dashes is found; one with other characters or over 64 characters is refused unread', async () => {
      const { user_code } = (await start()).body;
      const enter = (code: string) => t.service.services.device.enter(code, '198.51.100.120');
      /** the answer to a typed code, and whether the code was looked up */
      const typed = async (code: string) => {
        let kind = '';
        const sent = await log.of(async () => {
          const entry = await enter(code);
          kind = entry.kind === 'refused' ? `refused ${entry.status}` : entry.kind;
        });
        return [kind, sent.includes('select device_authorizations')];
      };
      const [head, tail] = user_code.split('-');
      const lower = user_code.toLowerCase();
      for (const code of [
        lower,
        `${head}--${tail}`,
        `-${head}---${tail}-`,
        ` ${[...user_code].join(' ')} `,
        [...lower.replace('-', '')].join('-'),
        `${user_code}\t`,
        `${user_code}${' '.repeat(55)}`, // 64 characters
      ]) {
        assert.deepEqual(await typed(code), ['ok', true], JSON.stringify(code));
      }
      // the control: a well-formed code that names nothing is looked up
      assert.deepEqual(await typed('BBBB-BBBB'), ['refused 400', true]);
      for (const code of [
        'AEIO-U123',
        `${head}-${tail!.slice(0, 3)}A`,
        `${head}_${tail}`,
        `${head}.${tail}`,
        'B'.repeat(65),
        `${user_code}${' '.repeat(56)}`, // 65 characters, the live code among them
        `${'-'.repeat(60)}${user_code}`,
        'BBBB-BBB\u017f', // a long s, which upper-cases to S: not a letter of the alphabet as typed
      ]) {
        assert.deepEqual(await typed(code), ['refused 400', false], JSON.stringify(code));
      }
    });

    it('starting device logins from one address slows it down after 30 (429, slow_down, Retry-After); other addresses go on', async () => {
      const from = (remoteAddress: string) =>
        t.request({
          method: 'POST',
          url: DEVICE_PATH,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: form({ client_id: 'gatehouse-cli', login_hint: 'cli@example.com' }),
          remoteAddress,
        });
      for (let i = 0; i < 30; i++) assert.equal((await from('198.51.100.90')).status, 200);
      const refused = await from('198.51.100.90');
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error, 'slow_down');
      assert.match(refused.body.error_description, /too many device logins from this address; try again in 30 seconds/);
      assert.equal(refused.headers['retry-after'], '30');
      assert.equal((await from('198.51.100.91')).status, 200, 'another address is not slowed');
    });

    it('the metadata lists the device endpoint and grant', async () => {
      const m = (await t.request({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).body;
      assert.equal(m.device_authorization_endpoint, `http://gatehouse.test${DEVICE_PATH}`);
      assert.ok(m.grant_types_supported.includes(GRANT));
    });
  });
}

describe('GATEHOUSE_DEVICE_POLL_INTERVAL_SECONDS', () => {
  it('is the interval a CLI is given and held to: a poll sooner is slow_down, with 5 s more', async () => {
    const t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_DEVICE_POLL_INTERVAL_SECONDS: '2' } });
    try {
      await t.gql(await t.rootToken(), 'mutation($e: String!) { createUser(email: $e) { user { id } } }', { e: 'cli@example.com' });
      const form = (body: Record<string, string>) => new URLSearchParams(body).toString();
      const headers = { 'content-type': 'application/x-www-form-urlencoded' };
      const started = await t.request({
        method: 'POST',
        url: DEVICE_PATH,
        headers,
        payload: form({ client_id: 'gatehouse-cli', login_hint: 'cli@example.com' }),
      });
      assert.equal(started.body.interval, 2, started.text);
      const poll = () =>
        t.request({
          method: 'POST',
          url: TOKEN_PATH,
          headers,
          payload: form({ grant_type: GRANT, device_code: started.body.device_code, client_id: 'gatehouse-cli' }),
        });
      assert.equal((await poll()).body.error, 'authorization_pending');
      t.clock.advance(2_000);
      assert.equal((await poll()).body.error, 'authorization_pending', 'two seconds later is not too soon');
      t.clock.advance(1_000);
      const sooner = await poll();
      assert.deepEqual([sooner.status, sooner.body.error], [400, 'slow_down']);
      assert.match(sooner.body.error_description, /every 7 seconds/);
    } finally {
      await t.close();
    }
  });
});
