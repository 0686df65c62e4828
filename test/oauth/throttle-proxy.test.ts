// The guessing throttle keys on (client_id, client address). Behind an ingress the address comes
// from X-Forwarded-For only when GATEHOUSE_TRUST_PROXY says so; otherwise the header is ignored,
// so a guesser cannot shed its counter by inventing addresses.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type TestApp } from '../helpers/app.js';

const tokenRequest = (t: TestApp, secret: string, forwardedFor: string) =>
  t.request({
    method: 'POST',
    url: '/auth/api/v2/auth/token',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': forwardedFor,
      authorization: 'Basic ' + Buffer.from(`${ROOT_CLIENT_ID}:${encodeURIComponent(secret)}`).toString('base64'),
    },
    payload: { grant_type: 'client_credentials' },
    remoteAddress: '10.0.0.1', // the ingress
  });

describe('token-endpoint throttle behind a proxy (pglite)', () => {
  const apps: TestApp[] = [];
  after(async () => {
    for (const t of apps) await t.close();
  });

  it('with GATEHOUSE_TRUST_PROXY=true, one guessing caller does not lock out the client for others', async () => {
    const t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_TRUST_PROXY: 'true' } });
    apps.push(t);
    for (let i = 0; i < 10; i++) assert.equal((await tokenRequest(t, ROOT_CLIENT_SECRET + 'x', '203.0.113.7')).status, 401);
    assert.equal((await tokenRequest(t, ROOT_CLIENT_SECRET, '203.0.113.7')).status, 429);
    assert.equal((await tokenRequest(t, ROOT_CLIENT_SECRET, '198.51.100.9')).status, 200);
  });

  it('without it, X-Forwarded-For is ignored: inventing addresses does not escape the throttle', async () => {
    const t = await startTestApp({ engine: 'pglite' });
    apps.push(t);
    for (let i = 0; i < 10; i++) assert.equal((await tokenRequest(t, ROOT_CLIENT_SECRET + 'x', `203.0.113.${i}`)).status, 401);
    const res = await tokenRequest(t, ROOT_CLIENT_SECRET + 'x', '198.51.100.200');
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers['retry-after']) > 0);
  });

  it('counts parallel guesses: a burst of 30 gets at most 10 answers of 401', async () => {
    const t = await startTestApp({ engine: 'pglite' });
    apps.push(t);
    const results = await Promise.all(Array.from({ length: 30 }, () => tokenRequest(t, ROOT_CLIENT_SECRET + 'x', '1.2.3.4')));
    assert.ok(results.filter((r) => r.status === 401).length <= 10);
    assert.ok(results.filter((r) => r.status === 429).length >= 20);
  });
});
