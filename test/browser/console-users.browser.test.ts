// The users console and the own-account page in a real browser (helpers/chromium.ts): an
// Administrator invites a user (the set-up link is shown once and the copy button copies it), the
// user enrols through it, the Administrator gives a role with an end, disables (the person's
// session ends) and enables them; the person changes their password and signs out everywhere
// else (their other browser is signed out), replaces their authenticator and makes new recovery
// codes. Every page passes axe-core; at 390 px nothing is
// wider than the screen; no script error and no CSP violation. Screenshots at 1280 and 390 px:
// test-artifacts/<engine>-users-*.png.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROLE_IDS } from '../../src/access/roles.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { atPhoneWidth, DESKTOP, enrolThroughLink, fitsWidth, PHONE, screenshots, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { PASSWORD, setupLink } from '../helpers/pages.js';
import { createTenant } from '../helpers/tenants.js';

const NEW_PASSWORD = 'a different and longer passphrase';

for (const engine of transportEngines()) {
  describe(`the users console in a browser (${engine})`, { skip }, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let admin: Page;
    let person: Page;
    let personKey = '';
    let setupUrl = '';
    const problems: string[] = [];

    before(async () => {
      t = await startTestApp({ engine });
      base = await listen(t);
      browser = await launchChromium();
      const partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
      await createTenant(t, partner, { name: 'Acme Retail' });
      const ctx = await browser.newContext({ viewport: DESKTOP });
      await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      admin = await watched(ctx);
      await enrol(admin, base + (await setupLink(t, 'admin@acme.test', { tenant: partner, roles: [ROLE_IDS.Administrator] })));
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    const watched = (ctx: BrowserContext) => watchedPage(ctx, problems);
    /** Sets an account up through its link; the authenticator key. */
    const enrol = (p: Page, link: string) => enrolThroughLink(t, p, link);

    /** Signs in from /login with a password and a fresh code. */
    async function signIn(p: Page, email: string, password: string, key: string): Promise<void> {
      await p.goto(`${base}/login`);
      await p.getByLabel('E-mail address').fill(email);
      await p.getByRole('button', { name: 'Continue' }).click();
      await p.getByLabel('Password').fill(password);
      await p.getByRole('button', { name: 'Continue' }).click();
      t.clock.advance(30_000);
      await p.getByLabel('Code from your authenticator app').fill(totpCodeAt(key, t.clock.now()));
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByText('Signed in as').waitFor();
    }

    /** Screenshots at 1280 and 390 px (nothing wider than a phone's screen), then back. */
    const screenshot = screenshots(`${engine}-users-`);
    async function shots(p: Page, name: string): Promise<void> {
      await screenshot(p, name);
      await atPhoneWidth(p, async () => {
        await screenshot(p, `${name}-390`);
        assert.ok(await fitsWidth(p), `${name} fits 390 px`);
      });
    }

    it('an Administrator invites a user: the set-up link is shown once and copies', async () => {
      await admin.getByRole('link', { name: 'Acme Retail' }).click();
      await admin.getByRole('link', { name: 'Users' }).click();
      await admin.getByRole('heading', { name: 'Users of Acme Retail' }).waitFor();
      await assertAccessible(admin, 'the users list');
      await shots(admin, '1-list');
      await admin.getByRole('link', { name: 'Invite a user' }).click();
      await admin.getByLabel('E-mail address').fill('person@acme.test');
      await admin.getByLabel('Name (optional)').fill('Pat Person');
      await admin.getByLabel('Responder').check();
      await assertAccessible(admin, 'the invite form');
      await shots(admin, '2-invite');
      await admin.getByRole('button', { name: 'Invite' }).click();
      await admin.getByRole('heading', { name: 'User invited' }).waitFor();
      setupUrl = await admin.getByLabel('Set-up link for person@acme.test').inputValue();
      assert.match(setupUrl, /\/login\/setup\?token=/);
      const copy = admin.getByRole('button', { name: 'Copy link' });
      assert.ok(await copy.isVisible(), 'the copy button shows (the script ran)');
      await copy.click();
      await admin.locator('#setup_url-status').getByText('Copied.').waitFor();
      assert.equal(await admin.evaluate('navigator.clipboard.readText()'), setupUrl, 'the clipboard holds the link');
      await assertAccessible(admin, 'the set-up link page');
      await shots(admin, '3-link');
      await admin.getByRole('link', { name: /to the user’s page/ }).click();
      assert.equal(await admin.locator('#setup_url').count(), 0, 'not shown again');
    });

    it('the user enrols through the link', async () => {
      person = await watched(await browser.newContext({ viewport: DESKTOP }));
      // the link names the service's configured address; the test's server listens elsewhere
      const link = new URL(setupUrl);
      personKey = await enrol(person, base + link.pathname + link.search);
    });

    it('the Administrator gives a role with an end, disables and enables the user', async () => {
      await admin.reload();
      await admin.getByRole('heading', { name: 'Pat Person' }).waitFor();
      await admin.getByLabel('Role', { exact: true }).selectOption({ label: 'Auditor' });
      const end = new Date(t.clock.now().getTime() + 7 * 86_400_000).toISOString().slice(0, 16);
      await admin.getByLabel('Until (optional)').fill(end);
      await admin.getByRole('button', { name: 'Give role' }).click();
      await admin.getByText('person@acme.test now holds Auditor in Acme Retail until the time given.').waitFor();
      const auditorRow = admin.locator('tbody tr', { hasText: 'Auditor' });
      assert.match(await auditorRow.innerText(), new RegExp(`${end.replace('T', ' ')} UTC`));
      await assertAccessible(admin, 'the user’s page');
      await shots(admin, '4-user');

      await admin.getByRole('button', { name: 'Disable' }).click();
      await admin.getByText('person@acme.test is disabled').waitFor();
      assert.equal(await admin.locator('dd', { hasText: 'Disabled' }).count(), 1);
      await person.goto(`${base}/console`);
      assert.equal(new URL(person.url()).pathname, '/login', 'the disabled person is signed out');
      await admin.getByRole('button', { name: 'Enable' }).click();
      await admin.getByText('person@acme.test is enabled').waitFor();
      await shots(admin, '5-enabled');
      await admin.getByRole('button', { name: 'Unlock sign-in' }).click();
      await admin.getByText('person@acme.test can sign in again at once with their password and authenticator').waitFor();
      await assertAccessible(admin, 'the user’s page after an unlock');
      await shots(admin, '5-unlocked');
      await admin.getByRole('link', { name: 'Back to the users' }).click();
      await admin.getByLabel('Status').selectOption({ label: 'Active' });
      await admin.getByRole('button', { name: 'Filter' }).click();
      const row = admin.locator('tbody tr', { hasText: 'person@acme.test' });
      assert.match(await row.innerText(), /Responder, Auditor/);
      await assertAccessible(admin, 'the filtered users list');
      await shots(admin, '5-list-filtered');
    });

    it('the person changes their password and signs out everywhere else', async () => {
      await signIn(person, 'person@acme.test', PASSWORD, personKey);
      await person.getByRole('link', { name: 'Your account' }).click();
      await person.getByRole('heading', { name: 'Your account' }).waitFor();
      await assertAccessible(person, 'the account page');
      await shots(person, '6-account');
      await person.getByLabel('Current password').fill(PASSWORD);
      await person.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await person.getByLabel('New password again').fill(NEW_PASSWORD);
      await person.getByRole('button', { name: 'Change password' }).click();
      await person.getByText('Your password was changed, and every other session of yours was signed out.', { exact: false }).waitFor();

      // another browser, with the new password
      const other = await watched(await browser.newContext({ viewport: PHONE }));
      await signIn(other, 'person@acme.test', NEW_PASSWORD, personKey);
      await person.reload();
      await person.getByRole('rowheader', { name: /Another browser/ }).waitFor();
      await assertAccessible(person, 'the account page with two sessions');
      await shots(person, '7-sessions');
      await person.getByRole('button', { name: 'Sign out everywhere else' }).click();
      await person.getByText('You were signed out of 1 other session.').waitFor();
      await other.goto(`${base}/console`);
      assert.equal(new URL(other.url()).pathname, '/login', 'the other browser is signed out');
      await person.goto(`${base}/console`);
      assert.equal(new URL(person.url()).pathname, '/console', 'this one goes on');
    });

    it('the person replaces their authenticator and makes new recovery codes', async () => {
      await person.goto(`${base}/console/account`);
      t.clock.advance(30_000);
      await person.locator('#authenticator-code').fill(totpCodeAt(personKey, t.clock.now()));
      await person.getByRole('button', { name: 'Replace authenticator' }).click();
      await person.getByRole('heading', { name: 'Your new authenticator' }).waitFor();
      await assertAccessible(person, 'the new authenticator page');
      await shots(person, '8-authenticator');
      const newKey = (await person.locator('code').innerText()).replace(/\s/g, '');
      t.clock.advance(30_000);
      await person.getByLabel('Code the new app now shows').fill(totpCodeAt(newKey, t.clock.now()));
      await person.getByRole('button', { name: 'Confirm new authenticator' }).click();
      await person.getByText('Your authenticator was replaced').waitFor();
      personKey = newKey;

      t.clock.advance(30_000);
      await person.locator('#recovery-code').fill(totpCodeAt(personKey, t.clock.now()));
      await person.getByRole('button', { name: 'Make new recovery codes' }).click();
      await person.getByRole('heading', { name: 'Your new recovery codes' }).waitFor();
      assert.equal(await person.locator('#recovery-codes li').count(), 10);
      assert.ok(await person.getByRole('button', { name: 'Copy codes' }).isVisible(), 'the copy button shows (the script ran)');
      await assertAccessible(person, 'the new recovery codes page');
      await shots(person, '9-recovery-codes');
      assert.deepEqual(problems, []);
    });
  });
}
