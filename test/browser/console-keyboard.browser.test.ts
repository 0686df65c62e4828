// The console with the keyboard alone (Debian's chromium driven by playwright-core; see
// helpers/chromium.ts), on both engines: after signing in, a partner's Administrator does each of
// the console's flows with Tab, Enter and Space (typing into fields, the arrow keys in a radio
// group) and no click: picks a tenant, creates a tenant under it, invites a user there, gives the
// user a role, creates an API client and copies its secret with the copy button, and takes the
// single sign-on wizard's first step. Every control is reached by Tab (helpers/browser.ts, tabTo:
// a control that cannot be reached, or a trap that keeps the focus elsewhere, fails the test) and
// shows where the focus is. Every page reached passes axe-core; no script error and no
// Content-Security-Policy violation. Screenshots: test-artifacts/<engine>-keyboard-*.png.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { DESKTOP, enrolThroughLink, focused, screenshots, tabTo, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { setupLink } from '../helpers/pages.js';
import { createTenant } from '../helpers/tenants.js';

for (const engine of transportEngines()) {
  describe(`the console with the keyboard alone (${engine})`, { skip }, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let page: Page;
    const problems: string[] = [];
    const shot = screenshots(`${engine}-keyboard-`);

    before(async () => {
      t = await startTestApp({ engine });
      base = await listen(t);
      browser = await launchChromium();
      const partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
      await createTenant(t, partner, { name: 'Acme Retail', environments: ['pilot'] });
      const context = await browser.newContext({ viewport: DESKTOP });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      page = await watchedPage(context, problems);
      await enrolThroughLink(t, page, base + (await setupLink(t, 'keys@acme.test', { tenant: partner, roles: [ROLE_IDS.Administrator] })));
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    /** Tab from the top of the page to `target`; it must show the focus (an outline). */
    async function reach(target: Locator, what: string): Promise<void> {
      await tabTo(page, target, what);
      const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
      assert.notEqual(outline, 'none', `${what}: the focus is drawn`);
    }
    /** Tab to a link or button and press Enter on it. */
    async function follow(target: Locator, what: string): Promise<void> {
      await reach(target, what);
      await page.keyboard.press('Enter');
    }
    /** Tab to a field and type into it. */
    async function type(target: Locator, what: string, text: string): Promise<void> {
      await reach(target, what);
      await page.keyboard.type(text);
    }
    /** axe-core on the page reached, and a screenshot. */
    async function checked(name: string): Promise<void> {
      await assertAccessible(page, name);
      await shot(page, name);
    }
    const sections = (tenant: string) => page.getByRole('navigation', { name: `Sections of ${tenant}` });

    it('picks a tenant', async () => {
      await page.goto(`${base}/console`);
      await page.getByRole('heading', { name: 'Your tenants' }).waitFor();
      await checked('1-tenants');
      await follow(page.getByRole('link', { name: 'Acme Partners', exact: true }), 'the partner in the list');
      await page.getByRole('heading', { name: 'Acme Partners', level: 1 }).waitFor();
      await checked('2-partner');
    });

    it('skips the header: the first Tab of a page offers a link past it, to the page’s content', async () => {
      await page.reload();
      await page.keyboard.press('Tab');
      const skip = page.getByRole('link', { name: 'Skip to the page’s content' });
      assert.ok(await focused(skip), 'the first Tab reaches the skip link');
      assert.ok(await skip.isVisible(), 'the skip link shows once focused');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Tab');
      // the header (breadcrumbs, account, the tenant's tabs) is outside #content
      const inContent = await page.evaluate<boolean>("document.getElementById('content').contains(document.activeElement)");
      assert.ok(inContent, 'the next Tab is in the content, past the header and its tabs');
    });

    it('creates a tenant under it', async () => {
      await follow(page.getByRole('link', { name: 'Create a tenant under it' }), 'the link to create a tenant');
      await page.getByRole('heading', { name: 'Create a tenant under Acme Partners' }).waitFor();
      await checked('3-new-tenant');
      await type(page.getByLabel('Name', { exact: true }), 'the name', 'Delta Depot');
      const pilot = page.getByLabel('pilot');
      await reach(pilot, 'the environment pilot');
      await page.keyboard.press('Space');
      assert.ok(await pilot.isChecked(), 'Space ticks the environment');
      await follow(page.getByRole('button', { name: 'Create tenant' }), 'the button Create tenant');
      await page
        .getByRole('status')
        .getByText(/Tenant Delta Depot \(id \d+\) was created under Acme Partners/)
        .waitFor();
      await page.getByRole('heading', { name: 'Delta Depot', level: 1 }).waitFor();
      await checked('4-created');
    });

    it('invites a user to it, and gives the user a role', async () => {
      await follow(sections('Delta Depot').getByRole('link', { name: 'Users' }), 'the Users tab');
      await page.getByRole('heading', { name: 'Users of Delta Depot' }).waitFor();
      await checked('5-users');
      await follow(page.getByRole('link', { name: 'Invite a user' }), 'the link Invite a user');
      await type(page.getByLabel('E-mail address'), 'the e-mail address', 'kay@acme.test');
      // the role is a group of radio buttons: Tab enters it at the one chosen (Analyst), and the
      // arrow keys move the choice within it, as in every radio group
      await reach(page.getByLabel('Analyst'), 'the role chosen by default');
      const responder = page.getByLabel('Responder');
      for (let i = 0; i < 8 && !(await responder.isChecked()); i++) await page.keyboard.press('ArrowDown');
      assert.ok(await responder.isChecked(), 'the arrow keys choose Responder');
      await checked('6-invite');
      await follow(page.getByRole('button', { name: 'Invite', exact: true }), 'the button Invite');
      await page.getByRole('heading', { name: 'User invited' }).waitFor();
      await checked('7-invited');
      await follow(page.getByRole('link', { name: /to the user’s page/ }), 'the link to the user’s page');
      await page.getByRole('heading', { name: 'kay@acme.test' }).waitFor();

      const role = page.getByLabel('Role', { exact: true });
      await reach(role, 'the role to give');
      // a closed list box takes the first letters of its choice, as it does from the keyboard
      await page.keyboard.type('Auditor');
      assert.equal(await role.inputValue(), ROLE_IDS.Auditor, 'the role chosen by typing');
      await follow(page.getByRole('button', { name: 'Give role' }), 'the button Give role');
      await page.getByText('kay@acme.test now holds Auditor in Delta Depot').waitFor();
      assert.match(await page.locator('tbody').innerText(), /Auditor/);
      await checked('8-user');
    });

    it('creates an API client and copies its secret with the copy button', async () => {
      await follow(sections('Delta Depot').getByRole('link', { name: 'API credentials' }), 'the API credentials tab');
      await page.getByRole('heading', { name: 'API credentials of Delta Depot' }).waitFor();
      await follow(page.getByRole('link', { name: 'Create a credential' }), 'the link Create a credential');
      await page.getByRole('heading', { name: /credential/i, level: 1 }).waitFor();
      await type(page.getByLabel('Name', { exact: true }), 'the client’s name', 'Keyboard sync');
      await checked('9-new-client');
      await follow(page.getByRole('button', { name: 'Create credential' }), 'the button Create credential');
      await page.getByRole('heading', { name: 'Credential created' }).waitFor();
      const secret = await page.getByLabel('Client secret').inputValue();
      assert.match(secret, /^gatehouse_cs_/);
      await reach(page.getByRole('button', { name: 'Copy secret' }), 'the button Copy secret');
      await page.keyboard.press('Space');
      await page.locator('#client_secret-status').getByText('Copied.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'the clipboard holds the secret');
      await checked('10-secret');
    });

    it('takes the single sign-on wizard’s first step', async () => {
      await follow(sections('Delta Depot').getByRole('link', { name: 'Single sign-on' }), 'the Single sign-on tab');
      await page.getByRole('heading', { name: 'Single sign-on of Delta Depot' }).waitFor();
      await checked('11-sso');
      await follow(page.getByRole('link', { name: 'Set up a connection' }), 'the link Set up a connection');
      await page.getByRole('heading', { name: 'Set up single sign-on' }).waitFor();
      await type(page.getByLabel('Name', { exact: true }), 'the connection’s name', 'Delta IdP');
      await type(page.getByLabel('E-mail domains'), 'the e-mail domains', 'delta.test');
      await checked('12-sso-new');
      await follow(page.getByRole('button', { name: 'Create and continue' }), 'the button Create and continue');
      await page.getByRole('heading', { name: 'Connection Delta IdP' }).waitFor();
      await checked('13-sso-values');
    });

    it('no script error and no CSP violation on any page', () => {
      assert.deepEqual(problems, []);
    });
  });
}
