// The device approval page over HTTP, on both engines: it names where and when the device login
// was started, with a warning against approving someone else's (RFC 8628 section 5.4); and codes
// looked up there count against the address like typed ones, so a signed-in account cannot probe
// which codes are live.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { type PageClient, signedInUser } from '../helpers/pages.js';

for (const engine of engines()) {
  describe(`device approval page (${engine})`, () => {
    let t: TestApp;
    let person: PageClient;
    before(async () => {
      t = await startTestApp({ engine });
      person = (await signedInUser(t, 'approver@example.com')).client;
    });
    after(() => t.close());

    const start = async (remoteAddress: string) =>
      (
        await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/device/code',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: 'approver@example.com' }).toString(),
          remoteAddress,
        })
      ).body as { user_code: string };

    it('names the address and time the login was started from, and warns against approving a stranger’s', async () => {
      const { user_code } = await start('203.0.113.9');
      t.clock.advance(3 * 60_000);
      const page = await person.get(`/device/approve?user_code=${user_code}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Requested from <strong>203\.0\.113\.9<\/strong> at 10:00 UTC \(3 minutes ago\)/);
      assert.match(page.text, /Approve only if you started this yourself, just now/);
    });

    it('probing codes on the approval page slows the address down after 10 wrong ones, as typing them does', async () => {
      const { user_code } = await start('203.0.113.10');
      for (let i = 0; i < 10; i++) assert.equal((await person.get(`/device/approve?user_code=BBBBBBB${'CDFGHJKLMN'[i]}`)).status, 400);
      const blocked = await person.get(`/device/approve?user_code=${user_code}`);
      assert.equal(blocked.status, 429, 'even a live code waits');
      assert.match(blocked.text, /Too many wrong codes/);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
    });
  });
}
