// A forgotten password, in a real browser (helpers/chromium.ts), with a real SMTP server in the test
// process: "Forgot your password?" from the password step, the address, the link from the mail
// that arrived, a new password (the page says the authenticator stays), then a sign-in with the
// new password and a code from the same authenticator. Every page passes axe-core; no script
// error and no CSP violation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { DESKTOP, enrolThroughLink, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { listen } from '../helpers/listen.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';

const NEW_PASSWORD = 'a fresh and unusual passphrase';

describe('a forgotten password, reset through the mailed link, in a browser', { skip }, () => {
  let t: TestApp;
  let smtp: TestSmtp;
  let base: string;
  let browser: Browser;
  let key: string;
  const problems: string[] = [];
  const email = 'forgetful@example.com';

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
    const made = await t.service.services.users.createAsOperator({ kind: 'operator', id: 'root' }, '1', { email });
    const first = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    key = await enrolThroughLink(t, first, served(made.setupUrl!));
    await first.context().close();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  it('asks for a link, follows it from the mail, sets a new password, and signs in with it and the same authenticator', async () => {
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

    const from = smtp.received.length;
    assert.equal((await t.service.services.mail.deliverDue()).sent, 1);
    const [mail] = (await smtp.waitFor(from + 1)).slice(from);
    assert.match(mail!.parsed.subject ?? '', /Reset your password/);
    const link = /https?:\/\/\S+\/login\/reset\?token=[A-Za-z0-9_-]+/.exec(mail!.parsed.text ?? '')![0];

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
