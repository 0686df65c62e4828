// A reset asked for an account that signs in through its organisation's SSO (docs/users.md
// "Forgotten password"): the same page as any address, and a mail that says how the account signs
// in, with no link.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { smtpTransport } from '../../src/mail/transports.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { RunningClock } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { PageClient } from '../helpers/pages.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { connectIdp } from '../sso/saml-flow.js';

for (const engine of engines()) {
  describe(`a reset asked for an SSO account (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let smtp: TestSmtp;
    before(async () => {
      smtp = await startSmtp();
      // node-saml and the IdP read the real clock: the service's runs with it
      [t, idp] = await Promise.all([
        startTestApp({
          engine,
          clock: new RunningClock(),
          env: { GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true' },
          mailTransport: smtpTransport(smtp.url),
        }),
        startTestIdp(),
      ]);
    });
    after(async () => {
      await Promise.all([t.close(), idp.close(), smtp.close()]);
    });

    it('mails how the account signs in, no link; the page is the same as for any address', async () => {
      const { tenant } = await connectIdp(t, idp, 'corp-reset.test', 'Enabled');
      const made = await t.gql(
        await t.rootToken(),
        'mutation($e: String!) { createUser(email: $e) { user { id } } }',
        { e: 'pat@corp-reset.test' },
        { tenant },
      );
      assert.equal(made.body.errors, undefined, made.text);
      await t.service.services.mail.deliverDue(100);
      const from = smtp.received.length;
      const ask = async (email: string) => {
        const b = new PageClient(t, 'gatehouse_session', '198.51.100.80');
        const form = await b.get('/login/forgot');
        return b.post('/login/forgot', { _csrf: b.csrf(form), email });
      };
      const sso = await ask('pat@corp-reset.test');
      const unknown = await ask('nobody@corp-reset.test');
      const strip = (s: string) => s.replace(/value="[A-Za-z0-9_-]{43}"/g, '').replace(/nonce="[^"]*"/g, '');
      assert.equal(sso.status, 200);
      assert.equal(strip(sso.text), strip(unknown.text));
      await t.service.services.mail.deliverDue(100);
      const mails = smtp.received.slice(from);
      assert.equal(mails.length, 1, 'only the account gets a mail');
      assert.match(mails[0]!.parsed.subject ?? '', /How you sign in/);
      assert.match(mails[0]!.parsed.text ?? '', /single sign-on/);
      assert.doesNotMatch(mails[0]!.parsed.text ?? '', /login\/reset/);
    });
  });
}
