// An invitation followed from the mail, in a real browser (helpers/chromium.ts), with a real SMTP
// server in the test process: the Administrator invites from the console and is told where the
// link went (no link on the page); the person opens the link from the mail that arrived, sets a
// password and an authenticator, and lands in the console; the Administrator then sees the address
// proven. Every page passes axe-core; no script error and no CSP violation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { DESKTOP, enrolThroughLink, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { listen } from '../helpers/listen.js';
import { linkIn, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createTenant } from '../helpers/tenants.js';

describe('an invitation followed from the mail, in a browser', { skip }, () => {
  let t: TestApp;
  let smtp: TestSmtp;
  let base: string;
  let browser: Browser;
  let admin: Page;
  let tenant: string;
  const problems: string[] = [];

  /** the link as the mail has it, on the listening test server (the test's base URL is not served) */
  const served = (url: string) => {
    const u = new URL(url);
    return base + u.pathname + u.search;
  };

  before(async () => {
    smtp = await startSmtp();
    t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_SMTP_URL: smtp.url } });
    base = await listen(t);
    browser = await launchChromium();
    tenant = await createTenant(t, '1', { name: 'Acme' });
    const made = await t.service.services.users.createAsOperator({ kind: 'operator', id: 'root' }, tenant, {
      email: 'admin@acme.test',
      roles: [ROLE_IDS.Administrator],
    });
    admin = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    await enrolThroughLink(t, admin, served(made.setupUrl!));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it('invites, mails the link, and the person sets up through it', async () => {
    await admin.goto(`${base}/console/users?tenant=${tenant}`);
    await admin.getByRole('link', { name: 'Invite a user' }).click();
    await admin.getByLabel('E-mail address').fill('pat@acme.test');
    await admin.getByRole('button', { name: 'Invite' }).click();
    await admin.getByText('Set-up link sent to pat@acme.test').waitFor();
    assert.equal(await admin.locator('#setup_url').count(), 0, 'no link on the page');
    await assertAccessible(admin, 'invitation sent');

    assert.equal((await t.service.services.mail.deliverDue()).sent, 1);
    const [mail] = await smtp.waitFor(1);
    const person = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    await enrolThroughLink(t, person, served(linkIn(mail!)));
    await person.getByText('Signed in as pat@acme.test').waitFor();

    await admin.getByRole('link', { name: 'To the user’s page' }).click();
    await admin.getByText('Proven: the person set up their sign-in through a link mailed to it').waitFor();
    await assertAccessible(admin, 'user page, address proven');
    assert.deepEqual(problems, []);
  });
});
