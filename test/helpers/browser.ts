// The steps a person takes in the browser, for the browser tests (the browser itself: chromium.ts):
// a fresh page that records Content-Security-Policy violations, enrolment through a set-up link,
// a sign-in with a code, a device code confirmed; and a clock that runs with real time. For the
// console's tests: a page whose script errors are collected too, screenshots at 1280 and 390 px,
// and the keyboard's way to a control (Tab until it has the focus).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { ManualClock } from '../../src/clock.js';
import { totpCodeAt } from '../../src/users/totp.js';
import type { TestApp } from './app.js';
import { ARTIFACTS } from './chromium.js';
import { PASSWORD } from './pages.js';

/** The desktop and the phone the console's tests draw pages at. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** A new page of `ctx` whose Content-Security-Policy (and Trusted Types) violations and uncaught
 *  script errors are pushed to `problems` (a test asserts it stays empty). */
export async function watchedPage(ctx: BrowserContext, problems: string[]): Promise<Page> {
  const p = await ctx.newPage();
  p.on('console', (m) => {
    if (/Content Security Policy|Trusted Type/i.test(m.text())) problems.push(m.text());
  });
  p.on('pageerror', (err) => problems.push(err.message));
  return p;
}

/** Where screenshots go: test-artifacts/ (made if missing), each named `<prefix><name>.png`. */
export function screenshots(prefix: string): (p: Page, name: string) => Promise<Buffer> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return (p, name) => p.screenshot({ path: join(ARTIFACTS, `${prefix}${name}.png`), fullPage: true });
}

/** Whether nothing on the page is wider than its window (no sideways scrolling). */
export const fitsWidth = (p: Page): Promise<boolean> => p.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');

/** The page's width in CSS pixels, as drawn (its widest element's right edge at least). */
export const drawnWidth = async (p: Page): Promise<number> => (await p.evaluate('document.documentElement.scrollWidth')) as number;

/** Runs `fn` with the page at a phone's width (390 px), then puts the page back at its size. */
export async function atPhoneWidth<T>(p: Page, fn: () => Promise<T>): Promise<T> {
  const size = p.viewportSize() ?? DESKTOP;
  await p.setViewportSize(PHONE);
  try {
    return await fn();
  } finally {
    await p.setViewportSize(size);
  }
}

/** Sets an account up through its set-up link (a path of the service, or a whole address) on
 *  `p`: a password, the authenticator confirmed with a code, on past the recovery codes to the
 *  console. Returns the authenticator's key. */
export async function enrolThroughLink(t: TestApp, p: Page, link: string): Promise<string> {
  await p.goto(link);
  await p.getByLabel('New password').fill(PASSWORD);
  await p.getByLabel('The same password again').fill(PASSWORD);
  await p.getByRole('button', { name: 'Continue' }).click();
  await p.getByRole('heading', { name: 'Set up your authenticator' }).waitFor();
  const key = (await p.locator('code').innerText()).replace(/\s/g, '');
  await p.getByLabel('Code the app now shows').fill(totpCodeAt(key, t.clock.now()));
  await p.getByRole('button', { name: 'Confirm' }).click();
  await p.getByRole('link', { name: /continue/ }).click();
  await p.getByText('Signed in as').waitFor();
  return key;
}

/** Whether `target` holds the keyboard's focus. */
export const focused = (target: Locator): Promise<boolean> =>
  target.evaluate((el) => el === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement);

/**
 * Presses Tab (Shift+Tab when `back`) until `target` has the focus, as a person with a keyboard
 * would; fails, naming `what`, when it is not reached within `max` presses (unreachable, or
 * behind a trap that keeps the focus elsewhere). Returns the number of presses.
 */
export async function tabTo(p: Page, target: Locator, what: string, opts: { max?: number; back?: boolean } = {}): Promise<number> {
  const max = opts.max ?? 120;
  for (let presses = 1; presses <= max; presses++) {
    await p.keyboard.press(opts.back ? 'Shift+Tab' : 'Tab');
    if (await focused(target)) return presses;
  }
  const at = await p.evaluate<string>(
    "(() => { const e = document.activeElement; return e ? e.tagName + ' ' + (e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 60) : 'nothing'; })()",
  );
  assert.fail(`${what}: not reached with ${max} presses of Tab (the focus is on ${at})`);
}

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
