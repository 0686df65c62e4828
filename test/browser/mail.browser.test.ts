// Links followed from the mail, in a real browser (helpers/chromium.ts), with a real SMTP server in
// the test process, one app and one Chromium for both:
// - an invitation: the Administrator invites from the console and is told where the link went (no
//   link on the page); the person opens the link from the mail that arrived, sets a password and an
//   authenticator, and lands in the console; the Administrator then sees the address proven;
// - a forgotten password: "Forgot your password?" from the password step, the address, the link
//   from the mail that arrived, a new password (the page says the authenticator stays), then a
//   sign-in with the new password and a code from the same authenticator.
// Every page passes axe-core; no script error and no CSP violation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ROLE_IDS } from '../../src/access/roles.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { DESKTOP, enrolThroughLink, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { listen } from '../helpers/listen.js';
import { linkIn, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createTenant } from '../helpers/tenants.js';

const NEW_PASSWORD = 'a fresh and unusual passphrase';
const OPERATOR = { kind: 'operator', id: 'root' } as const;

describe('links followed from the mail, in a browser', { skip }, () => {
  let t: TestApp;
  let smtp: TestSmtp;
  let base: string;
  let browser: Browser;
  const problems: string[] = [];

  /** the link as the mail has it, on the listening test server (the test's base URL is not served) */
  const served = (url: string) => {
    const u = new URL(url);
    return base + u.pathname + u.search;
  };
  /** the messages delivered now, from the `from`th received on */
  const deliveredSince = async (from: number) => {
    const sent = (await t.service.services.mail.deliverDue()).sent;
    return (await smtp.waitFor(from + sent)).slice(from);
  };

  before(async () => {
    smtp = await startSmtp();
    t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_SMTP_URL: smtp.url } });
    base = await listen(t);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it('invites, mails the link, and the person sets up through it', async () => {
    const tenant = await createTenant(t, '1', { name: 'Acme' });
    const made = await t.service.services.users.createAsOperator(OPERATOR, tenant, { email: 'admin@acme.test', roles: [ROLE_IDS.Administrator] });
    const admin: Page = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    await enrolThroughLink(t, admin, served(made.setupUrl!));

    await admin.goto(`${base}/console/users?tenant=${tenant}`);
    await admin.getByRole('link', { name: 'Invite a user' }).click();
    await admin.getByLabel('E-mail address').fill('pat@acme.test');
    await admin.getByRole('button', { name: 'Invite' }).click();
    await admin.getByText('Set-up link sent to pat@acme.test').waitFor();
    assert.equal(await admin.locator('#setup_url').count(), 0, 'no link on the page');
    await assertAccessible(admin, 'invitation sent');

    const mails = await deliveredSince(smtp.received.length);
    assert.equal(mails.length, 1);
    const person = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    await enrolThroughLink(t, person, served(linkIn(mails[0]!)));
    await person.getByText('Signed in as pat@acme.test').waitFor();

    await admin.getByRole('link', { name: 'To the user’s page' }).click();
    await admin.getByText('Proven: the person followed a link mailed to it').waitFor();
    await assertAccessible(admin, 'user page, address proven');
    assert.deepEqual(problems, []);
    await Promise.all([admin.context().close(), person.context().close()]);
  });

  it('asks for a reset link, follows it from the mail, sets a new password, and signs in with it and the same authenticator', async () => {
    const email = 'forgetful@example.com';
    const made = await t.service.services.users.createAsOperator(OPERATOR, '1', { email });
    const first = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    const key = await enrolThroughLink(t, first, served(made.setupUrl!));
    await first.context().close();

    const page = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    await page.goto(`${base}/login`);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await assertAccessible(page, 'forgot form');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Send a reset link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    await assertAccessible(page, 'check your mail');

    const mails = await deliveredSince(smtp.received.length);
    assert.equal(mails.length, 1);
    assert.match(mails[0]!.parsed.subject ?? '', /Reset your password/);
    const link = /https?:\/\/\S+\/login\/reset\?token=[A-Za-z0-9_-]+/.exec(mails[0]!.parsed.text ?? '')![0];

    await page.goto(served(link));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    assert.equal(new URL(page.url()).search, '', 'the token left the address bar');
    await page.getByText('Your authenticator app stays as it is').waitFor();
    await assertAccessible(page, 'reset form');
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByLabel('The same password again').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByText('Your new password is set').waitFor();

    t.clock.advance(31_000);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Code from your authenticator app').fill(totpCodeAt(key, t.clock.now()));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(`Signed in as ${email}`).waitFor();

    // the link again: refused, with the way to a new one
    await page.goto(served(link));
    await page.getByRole('heading', { name: 'This link does not work' }).waitFor();
    await page.getByRole('link', { name: 'Ask for a new link' }).waitFor();
    assert.deepEqual(problems, []);
    await page.context().close();
  });
});
