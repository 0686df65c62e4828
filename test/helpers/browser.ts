// The steps a person takes in the browser, for the browser tests (the browser itself: chromium.ts):
// a fresh page that records Content-Security-Policy violations, enrolment through a set-up link,
// a sign-in with a code, a device code confirmed; and a clock that runs with real time.
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.js';
import { totpCodeAt } from '../../src/users/totp.js';
import type { TestApp } from './app.js';
import { PASSWORD } from './pages.js';

/** A page in a fresh context (no cookies), recording Content-Security-Policy violations. */
export async function freshPage(browser: Browser, cspViolations: string[]): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return page;
}

/**
 * A clock that runs with real time and can be moved on: for tests where a separate process (the
 * CLI, a Python script) paces itself by real time while the test moves the service's time on
 * (a TOTP step, a code's expiry).
 */
export class RunningClock extends ManualClock {
  private offset = 0;
  override now(): Date {
    return new Date(Date.now() + this.offset);
  }
  override advance(ms: number): void {
    this.offset += ms;
  }
  override set(date: Date): void {
    this.offset = date.getTime() - Date.now();
  }
}

/** A person who can sign in: created by the root client, enrolled through the set-up link in the browser. Returns the TOTP key. */
export async function enrolledUser(t: TestApp, base: string, page: Page, email: string, roles?: string[]): Promise<string> {
  const res = await t.gql(await t.rootToken(), 'mutation($e: String!, $r: [ID!]) { createUser(email: $e, roles: $r) { setup_url } }', {
    e: email,
    r: roles ?? null,
  });
  const link = new URL(res.body.data.createUser.setup_url);
  await page.goto(base + link.pathname + link.search);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('The same password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Set up your authenticator' }).waitFor();
  const key = (await page.locator('code').innerText()).replace(/\s/g, '');
  await page.getByLabel('Code the app now shows').fill(totpCodeAt(key, t.clock.now()));
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
  await page.getByRole('link', { name: /continue/ }).click();
  await page.getByText('Signed in as').waitFor();
  return key;
}

/** The sign-in form from its first step: e-mail, password, a fresh code (the clock moves on a time step, so no code repeats). */
export async function signInOnPage(t: TestApp, page: Page, email: string, key: string): Promise<void> {
  await page.getByLabel('E-mail address').fill(email);
  await page.getByRole('button', { name: 'Continue' }).click();
  await passwordAndCode(t, page, key);
}

/** The password step (the account already chosen) and a fresh code. */
async function passwordAndCode(t: TestApp, page: Page, key: string): Promise<void> {
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Continue' }).click();
  t.clock.advance(30_000);
  await page.getByLabel('Code from your authenticator app').fill(totpCodeAt(key, t.clock.now()));
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Opens a verification link as a person would, checks it shows `code`, confirms it, and signs in as `email`. */
export async function confirmDeviceCode(t: TestApp, page: Page, base: string, link: string, code: string, email: string, key: string): Promise<void> {
  const u = new URL(link);
  await page.goto(base + u.pathname + u.search);
  assert.equal(await page.locator('.usercode strong').innerText(), code, 'the page shows the code the command line shows');
  await page.getByRole('button', { name: 'Yes, it matches' }).click();
  // the sign-in is for the account the command line named: its password is asked at once
  await page.getByText(`Sign in as ${email} to approve ${code}`).waitFor();
  await passwordAndCode(t, page, key);
}
