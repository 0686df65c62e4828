// The token endpoint's guessing throttle through HTTP: only failures count, so a client that
// authenticates correctly is never throttled however many requests it runs at once; failures
// count per (client_id, address) and per address, so junk client ids from one address throttle
// that address instead of pushing the target's count out of the table.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { createClient, type SeededClient } from '../helpers/seed.js';

// the documented thresholds (docs/tokens.md), per 5-minute window
const PAIR_LIMIT = 10;
const ADDRESS_LIMIT = 100;

const basic = (clientId: string, secret: string) =>
  'Basic ' + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');

function tokenRequest(t: TestApp, clientId: string, secret: string, remoteAddress: string): Promise<Response> {
  return t.request({
    method: 'POST',
    url: '/auth/api/v2/auth/token',
    headers: { 'content-type': 'application/json', authorization: basic(clientId, secret) },
    payload: { grant_type: 'client_credentials' },
    remoteAddress,
  });
}

/** a wrong secret of the issued format (it passes the offline checksum, so it costs a lookup) */
const wrongSecret = (c: SeededClient) => c.secret.slice(0, 20) + (c.secret[20] === 'A' ? 'B' : 'A') + c.secret.slice(21);
const junkId = () => randomBytes(16).toString('hex');

function statuses(responses: Response[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of responses) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

for (const engine of engines()) {
  describe(`token-endpoint throttle (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    it('answers four waves of 100 concurrent requests of one valid client from one address all with 200', async () => {
      const address = '192.0.2.10';
      for (let wave = 0; wave < 4; wave++) {
        const responses = await Promise.all(Array.from({ length: 100 }, () => tokenRequest(t, ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, address)));
        assert.deepEqual(statuses(responses), { 200: 100 }, `wave ${wave + 1}`);
      }
    });

    it('50 wrong secrets at once for one client from one address: 10 are checked, the other 40 refused unchecked', async () => {
      const target = await createClient(t, await t.rootToken(), 'burst-target');
      const credentials = t.service.services.credentials;
      let checked = 0;
      const authenticate = credentials.authenticate.bind(credentials);
      credentials.authenticate = async (...args: Parameters<typeof credentials.authenticate>) => {
        if (args[0] === target.clientId) checked++;
        return authenticate(...args);
      };
      try {
        const responses = await Promise.all(Array.from({ length: 50 }, () => tokenRequest(t, target.clientId, wrongSecret(target), '198.51.100.60')));
        assert.deepEqual(statuses(responses), { 401: PAIR_LIMIT, 429: 50 - PAIR_LIMIT });
        assert.equal(checked, PAIR_LIMIT, 'no more secrets checked than the allowance');
        // the right secret is not checked either, from there, until the window ends
        assert.equal((await tokenRequest(t, target.clientId, target.secret, '198.51.100.60')).status, 429);
        assert.equal(checked, PAIR_LIMIT);
        // and from elsewhere it works
        assert.equal((await tokenRequest(t, target.clientId, target.secret, '198.51.100.61')).status, 200);
      } finally {
        delete (credentials as { authenticate?: unknown }).authenticate;
      }
    });

    it('keeps a throttled client throttled while junk client ids from the same address throttle that address', async () => {
      const start = t.clock.now();
      try {
        const target = await createClient(t, await t.rootToken(), 'junk-flush-target');
        const attacker = '203.0.113.50';
        for (let i = 0; i < PAIR_LIMIT; i++) assert.equal((await tokenRequest(t, target.clientId, wrongSecret(target), attacker)).status, 401);
        assert.equal((await tokenRequest(t, target.clientId, target.secret, attacker)).status, 429, 'the target is throttled at the attacker');

        // junk ids from the same address: the address's own count runs out and it gets 429
        const junk: Response[] = [];
        for (let i = 0; i < ADDRESS_LIMIT; i++) junk.push(await tokenRequest(t, junkId(), wrongSecret(target), attacker));
        assert.deepEqual(statuses(junk), { 401: ADDRESS_LIMIT - PAIR_LIMIT, 429: PAIR_LIMIT });
        const limited = junk.at(-1)!;
        assert.ok(Number(limited.headers['retry-after']) > 0, limited.text);
        assert.equal(limited.body.error, 'temporarily_unavailable');

        // the target stays throttled there, and so does every client at that address
        assert.equal((await tokenRequest(t, target.clientId, target.secret, attacker)).status, 429);
        assert.equal((await tokenRequest(t, ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, attacker)).status, 429);
        // the correct secret from another address still works
        assert.equal((await tokenRequest(t, target.clientId, target.secret, '198.51.100.50')).status, 200);
        assert.equal((await tokenRequest(t, ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, '198.51.100.50')).status, 200);

        // when the window ends the address may try again
        t.clock.advance(5 * 60_000);
        assert.equal((await tokenRequest(t, target.clientId, target.secret, attacker)).status, 200);
      } finally {
        t.clock.set(start);
      }
    });

    it('keeps serving the clients that authenticated from a shared address when another one floods it with failures', async () => {
      const start = t.clock.now();
      try {
        const nat = '203.0.113.52';
        const neighbour = await createClient(t, await t.rootToken(), 'nat-neighbour');
        const noisy = await createClient(t, await t.rootToken(), 'nat-noisy');
        assert.equal((await tokenRequest(t, neighbour.clientId, neighbour.secret, nat)).status, 200);
        // a misconfigured job behind the same NAT fails with junk ids until the address is throttled
        for (let i = 0; i < ADDRESS_LIMIT; i++) await tokenRequest(t, junkId(), wrongSecret(noisy), nat);
        assert.equal((await tokenRequest(t, junkId(), wrongSecret(noisy), nat)).status, 429);
        // the neighbour that was served from there in the window still is
        t.clock.advance(60_000);
        assert.equal((await tokenRequest(t, neighbour.clientId, neighbour.secret, nat)).status, 200);
        // a client that never authenticated from there waits like any stranger
        assert.equal((await tokenRequest(t, noisy.clientId, noisy.secret, nat)).status, 429);
        // and the neighbour's own failures still count for it
        for (let i = 0; i < PAIR_LIMIT; i++) assert.equal((await tokenRequest(t, neighbour.clientId, wrongSecret(neighbour), nat)).status, 401);
        assert.equal((await tokenRequest(t, neighbour.clientId, neighbour.secret, nat)).status, 429);
      } finally {
        t.clock.set(start);
      }
    });

    it("does not clear an address's count when a client of its own succeeds in between", async () => {
      const start = t.clock.now();
      try {
        const own = await createClient(t, await t.rootToken(), 'interleaving-attacker');
        const attacker = '203.0.113.51';
        for (let i = 0; i < ADDRESS_LIMIT; i++) {
          assert.equal((await tokenRequest(t, junkId(), wrongSecret(own), attacker)).status, 401, `failure ${i + 1}`);
          if (i % 5 === 0) assert.equal((await tokenRequest(t, own.clientId, own.secret, attacker)).status, 200, `success after failure ${i + 1}`);
        }
        assert.equal((await tokenRequest(t, junkId(), wrongSecret(own), attacker)).status, 429);
        // its own client, which authenticated from there in the window, is still served: it holds
        // its secret, and serving it clears nothing for the junk ids
        assert.equal((await tokenRequest(t, own.clientId, own.secret, attacker)).status, 200);
        assert.equal((await tokenRequest(t, junkId(), wrongSecret(own), attacker)).status, 429);
      } finally {
        t.clock.set(start);
      }
    });

    it('counts the addresses of one IPv6 /64 together, and no other /64 with them', async () => {
      const start = t.clock.now();
      try {
        const target = await createClient(t, await t.rootToken(), 'ipv6-target');
        // ten hosts of one /64 guess once each: together they use up the pair's budget
        for (let i = 1; i <= PAIR_LIMIT; i++) {
          assert.equal((await tokenRequest(t, target.clientId, wrongSecret(target), `2001:db8:7:1::${i.toString(16)}`)).status, 401);
        }
        for (const host of ['2001:db8:7:1::ffff', '2001:db8:7:1:8000:0:0:1', '2001:0db8:0007:0001:0000:0000:0000:0abc']) {
          assert.equal((await tokenRequest(t, target.clientId, target.secret, host)).status, 429, host);
        }
        assert.equal((await tokenRequest(t, target.clientId, target.secret, '2001:db8:7:2::1')).status, 200, 'another /64');
        assert.equal((await tokenRequest(t, target.clientId, target.secret, '192.0.2.77')).status, 200, 'an IPv4 address');
      } finally {
        t.clock.set(start);
      }
    });
  });
}
