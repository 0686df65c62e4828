// Sign-in and device login in a real browser (Debian's chromium driven by playwright-core), on
// both engines: a set-up link through password and authenticator enrolment to the console, a
// later sign-in with a code, a sign-in with a recovery code, sign-out; the recovery codes laid
// out whole at 1280 and 390 px, copied and downloaded (and without script still there as text);
// links in the accent colour; device login approved (the token works, once), denied, and refused
// for another account; no Content-Security-Policy violation on any page. Screenshots are kept in
// test-artifacts/ for a person to look at.
//
// CI (.ci/run) installs chromium and sets CI_REQUIRE_BROWSER=1, so there this test cannot be
// skipped; elsewhere it is skipped, saying why, when /usr/bin/chromium is missing.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ARTIFACTS, launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { confirmDeviceCode, signInOnPage } from '../helpers/browser.js';
import { PASSWORD } from '../helpers/pages.js';

for (const engine of transportEngines()) {
  describe(`sign-in in a browser (${engine})`, { skip }, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    const cspViolations: string[] = [];

    before(async () => {
      t = await startTestApp({ engine });
      base = await listen(t);
      browser = await launchChromium();
      mkdirSync(ARTIFACTS, { recursive: true });
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
      const context = await browser.newContext(options);
      const page = await context.newPage();
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
      });
      return page;
    }
    const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${engine}-${name}.png`), fullPage: true });

    async function setupPath(email: string): Promise<string> {
      const res = await t.gql(await t.rootToken(), 'mutation($e: String!) { createUser(email: $e) { setup_url } }', { e: email });
      const url = new URL(res.body.data.createUser.setup_url);
      return url.pathname + url.search;
    }

    let key = '';
    let recoveryCodes: string[] = [];

    interface CodesLayout {
      columns: number;
      lines: number[];
      numberNeeds: number;
      between: number | null;
      overflow: boolean;
    }

    /** How the recovery codes lie on the page: the columns, the lines each code takes, the room
     *  between the first column's codes and the second column's (where its numbers stand), and
     *  what a number needs there to stand apart: " 10. " in the list's font. */
    const codesLayout = (page: Page) =>
      // a string, run in the page (these tests are compiled without the DOM's types)
      page.evaluate<CodesLayout>(`(() => {
        const list = document.querySelector('ol.codes');
        const range = document.createRange();
        const items = [...list.querySelectorAll('li')].map((li) => {
          range.selectNodeContents(li);
          return { left: Math.round(li.getBoundingClientRect().left), right: range.getBoundingClientRect().right, lines: range.getClientRects().length };
        });
        const lefts = [...new Set(items.map((i) => i.left))].sort((a, b) => a - b);
        const first = items.filter((i) => i.left === lefts[0]);
        const measure = document.createElement('canvas').getContext('2d');
        measure.font = getComputedStyle(list).font;
        return {
          columns: lefts.length,
          lines: items.map((i) => i.lines),
          numberNeeds: measure.measureText(' 10. ').width,
          between: lefts.length > 1 ? lefts[1] - Math.max(...first.map((i) => i.right)) : null,
          overflow: document.documentElement.scrollWidth > window.innerWidth,
        };
      })()`);

    it('first sign-in through a set-up link: password, authenticator, recovery codes, console', async () => {
      const page = await newPage();
      await page.goto(base + (await setupPath('browser@example.com')));
      assert.equal(new URL(page.url()).pathname, '/login');
      assert.equal(new URL(page.url()).search, '', 'the token is gone from the address bar');
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('The same password again').fill(PASSWORD);
      await shot(page, '1-choose-password');
      await page.getByRole('button', { name: 'Continue' }).click();

      await page.getByRole('heading', { name: 'Set up your authenticator' }).waitFor();
      assert.ok(await page.locator('.qr svg').isVisible(), 'the QR code shows');
      key = (await page.locator('code').innerText()).replace(/\s/g, '');
      await shot(page, '2-enrol');
      await page.getByLabel('Code the app now shows').fill(totpCodeAt(key, t.clock.now()));
      await page.getByRole('button', { name: 'Confirm' }).click();

      await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
      recoveryCodes = await page.locator('ol.codes li').allInnerTexts();
      assert.equal(recoveryCodes.length, 10);
      const layout = await codesLayout(page);
      assert.equal(layout.columns, 2, 'two columns at 1280 px');
      assert.deepEqual(layout.lines, Array(10).fill(1), 'each code on one line');
      assert.ok(layout.between! >= layout.numberNeeds, `the second column's numbers clear the first column's codes: ${JSON.stringify(layout)}`);
      assert.equal(layout.overflow, false);
      await shot(page, '3-recovery-codes');
      await page.getByRole('link', { name: /continue/ }).click();
      await page.getByText('Signed in as').waitFor();
      assert.equal(new URL(page.url()).pathname, '/console');
      const cookies = await page.context().cookies();
      assert.deepEqual(
        cookies.map((c) => [c.name, c.httpOnly, c.sameSite]).sort(),
        [
          ['gatehouse_browser', true, 'Lax'],
          ['gatehouse_session', true, 'Lax'],
        ],
        'the session, and the cookie by which this browser is recognised at its next sign-in',
      );
      const recognition = cookies.find((c) => c.name === 'gatehouse_browser')!;
      assert.ok(recognition.expires * 1000 > Date.now() + 89 * 86_400_000, 'recognised for 90 days');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByText('You have signed out.').waitFor();
      assert.deepEqual(
        (await page.context().cookies()).map((c) => c.name).filter((n) => n === 'gatehouse_browser'),
        ['gatehouse_browser'],
        'signing out keeps the recognition',
      );
      await page.context().close();
    });

    it('the recovery codes on a phone: whole, one column; copied, and downloaded as a text file', async () => {
      const page = await newPage({ viewport: { width: 390, height: 844 } });
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      await page.goto(base + (await setupPath('phone@example.com')));
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('The same password again').fill(PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      const phoneKey = (await page.locator('code').innerText()).replace(/\s/g, '');
      await page.getByLabel('Code the app now shows').fill(totpCodeAt(phoneKey, t.clock.now()));
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
      const codes = await page.locator('ol.codes li').allInnerTexts();
      const layout = await codesLayout(page);
      assert.equal(layout.columns, 1, 'one column at 390 px');
      assert.deepEqual(layout.lines, Array(10).fill(1), 'no code broken at a hyphen');
      assert.equal(layout.overflow, false, 'nothing wider than the screen');

      await page.getByRole('button', { name: 'Copy codes' }).click();
      await page.locator('#recovery-codes-status').getByText('Copied.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), codes.join('\n'), 'the clipboard holds the codes, one a line');

      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download as .txt' }).click();
      const file = await download;
      assert.equal(file.suggestedFilename(), 'vendor-recovery-codes.txt');
      const text = await readFile((await file.path())!, 'utf8');
      assert.match(text, /^Vendor recovery codes\. Each one signs you in once, in place of a code from your authenticator app\.\n\n/);
      assert.deepEqual(text.trim().split('\n').slice(2), codes, 'the codes, one a line');
      await page.locator('#recovery-codes-status').getByText('Download started: vendor-recovery-codes.txt.').waitFor();
      await shot(page, '3b-recovery-codes-phone');
      await page.getByRole('link', { name: /continue/ }).click();
      await page.getByText('Signed in as').waitFor();
      await page.context().close();
    });

    it('without JavaScript the recovery codes are text to select, and no button shows', async () => {
      const page = await newPage({ javaScriptEnabled: false });
      await page.goto(base + (await setupPath('no-script@example.com')));
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('The same password again').fill(PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      const plainKey = (await page.locator('code').innerText()).replace(/\s/g, '');
      await page.getByLabel('Code the app now shows').fill(totpCodeAt(plainKey, t.clock.now()));
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
      assert.equal(await page.getByRole('button').count(), 0, 'hidden buttons are no buttons');
      const codes = await page.locator('ol.codes li').allInnerTexts();
      assert.equal(codes.length, 10);
      for (const code of codes) assert.match(code, /^[0-9a-z]{5}-[0-9a-z]{5}-[0-9a-z]{4}$/);
      await page.context().close();
    });

    it("links are in the accent colour, not the browser's blue", async () => {
      const page = await newPage();
      await page.goto(`${base}/login`);
      // a form sent after its session ended: the page that links back to sign-in
      await page.context().clearCookies();
      await page.getByLabel('E-mail address').fill('browser@example.com');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'This form has expired' }).waitFor();
      const colours = await page.evaluate<string[]>(`[...document.querySelectorAll('a:not(.button)')].map((a) => getComputedStyle(a).color)`);
      assert.ok(colours.length > 0);
      assert.deepEqual([...new Set(colours)], ['rgb(31, 79, 209)']);
      await page.context().close();
    });

    it('a later sign-in: e-mail, password, a code from the app', async () => {
      t.clock.advance(30_000);
      const page = await newPage();
      await page.goto(`${base}/console`);
      await page.getByLabel('E-mail address').fill('Browser@Example.com');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').getByText('The e-mail address or the password is wrong.').waitFor();
      await shot(page, '4-wrong-password');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Code from your authenticator app').fill(totpCodeAt(key, t.clock.now()));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in as').waitFor();
      assert.equal(new URL(page.url()).pathname, '/console', 'back where the person was going');
      await page.context().close();
    });

    it('a sign-in with a recovery code, which then no longer works', async () => {
      const signIn = async (code: string) => {
        const page = await newPage();
        await page.goto(`${base}/login`);
        await page.getByLabel('E-mail address').fill('browser@example.com');
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByLabel('Code from your authenticator app').fill(code);
        await page.getByRole('button', { name: 'Sign in' }).click();
        return page;
      };
      const first = await signIn(recoveryCodes[0]!);
      // led to the account page, where a lost authenticator is replaced (docs/users.md "Lost authenticator")
      await first.getByText(/You used a recovery code: \d+ are left.*Lost your authenticator app\? Replace it now/).waitFor();
      assert.equal(new URL(first.url()).pathname, '/console/account');
      await first.context().close();
      const again = await signIn(recoveryCodes[0]!);
      await again.getByRole('alert').waitFor();
      assert.equal(new URL(again.url()).pathname, '/login');
      await again.context().close();
    });

    /** What the CLI does: ask for a device code for an account. */
    async function startDevice(loginHint: string) {
      const res = await fetch(`${base}/auth/api/v2/auth/device/code`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: loginHint }),
      });
      assert.equal(res.status, 200);
      return (await res.json()) as { device_code: string; user_code: string; verification_uri_complete: string };
    }
    async function pollOnce(deviceCode: string) {
      const res = await fetch(`${base}/auth/api/v2/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: deviceCode,
          client_id: 'gatehouse-cli',
        }),
      });
      return (await res.json()) as { access_token?: string; error?: string };
    }
    /** Opens the verification link, confirms the code, and signs in as `email` on the way. */
    async function confirmAndSignIn(link: string, email: string, shownCode: string): Promise<Page> {
      const page = await newPage();
      await confirmDeviceCode(t, page, base, link, shownCode, email, key);
      return page;
    }

    it('device login: the code matches, sign in, approve; the CLI gets a working token once', async () => {
      const device = await startDevice('browser@example.com');
      assert.equal((await pollOnce(device.device_code)).error, 'authorization_pending');
      const page = await confirmAndSignIn(device.verification_uri_complete, 'browser@example.com', device.user_code);
      await page.getByRole('heading', { name: 'Approve this device?' }).waitFor();
      await shot(page, '5-device-approve');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Device approved' }).waitFor();
      t.clock.advance(10_000);
      const token = await pollOnce(device.device_code);
      assert.ok(token.access_token, JSON.stringify(token));
      const api = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token.access_token}` },
        body: JSON.stringify({ query: '{ users { email } }' }),
      });
      assert.equal(api.status, 200, 'the token works on the APIs');
      t.clock.advance(10_000);
      assert.equal((await pollOnce(device.device_code)).error, 'invalid_grant', 'once');
      await page.context().close();
    });

    it('device login: deny, and the wrong account refused', async () => {
      const denied = await startDevice('browser@example.com');
      const page = await confirmAndSignIn(denied.verification_uri_complete, 'browser@example.com', denied.user_code);
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.getByRole('heading', { name: 'Device denied' }).waitFor();
      t.clock.advance(10_000);
      assert.equal((await pollOnce(denied.device_code)).error, 'access_denied');
      await page.context().close();

      // a browser signed in as browser@example.com opens a code started for someone else
      const other = await startDevice('someone-else@example.com');
      const wrong = await newPage();
      await wrong.goto(`${base}/login`);
      t.clock.advance(30_000);
      await signInOnPage(t, wrong, 'browser@example.com', key);
      await wrong.getByText('Signed in as').waitFor();
      const link = new URL(other.verification_uri_complete);
      await wrong.goto(base + link.pathname + link.search);
      await wrong.getByRole('button', { name: 'Yes, it matches' }).click();
      await wrong.getByRole('heading', { name: 'Another account' }).waitFor();
      await shot(wrong, '6-device-wrong-account');
      t.clock.advance(10_000);
      assert.equal((await pollOnce(other.device_code)).error, 'authorization_pending', 'nothing was approved');
      await wrong.context().close();
    });

    it('no page broke its Content-Security-Policy', () => {
      assert.deepEqual(cspViolations, []);
    });
  });
}
