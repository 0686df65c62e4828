// The credentials console in a real browser (Debian's chromium driven by playwright-core; see
// helpers/chromium.ts), on both engines: sign in through a set-up link, pick the tenant, create a
// credential (its secret works at the token endpoint, the copy button copies it; without
// JavaScript there is no button and the secret can still be selected), rotate the secret (the old
// one stops, the new one works), delete after confirmation; a refusal keeps the header and says
// what to do; on a phone (390 px) nothing is wider than the screen and each client's actions are
// in view; no script error and no Content-Security-Policy violation on any page. Screenshots:
// test-artifacts/<engine>-console-*.png.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { DESKTOP, enrolThroughLink, fitsWidth, PHONE, screenshots, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { setupLink } from '../helpers/pages.js';
import { createTenant } from '../helpers/tenants.js';

for (const engine of transportEngines()) {
  describe(`the console in a browser (${engine})`, { skip }, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const problems: string[] = [];
    let clientId = '';
    let secret = '';
    let link = '';

    before(async () => {
      t = await startTestApp({ engine });
      base = await listen(t);
      browser = await launchChromium();
      const partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
      await createTenant(t, partner, { name: 'Acme Retail' });
      context = await browser.newContext({ viewport: DESKTOP });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      page = await watched(context);
      link = base + (await setupLink(t, 'console@acme.test', { tenant: partner, roles: [ROLE_IDS.Administrator] }));
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    /** A new page whose CSP violations and script errors are collected. */
    const watched = (ctx: BrowserContext) => watchedPage(ctx, problems);
    const screenshot = screenshots(`${engine}-console-`);
    /** A screenshot for a person to look at, and axe-core's check of the page as drawn (it runs
     *  as a script in the page: not where scripts are off, whose page was checked with them on). */
    const shot = async (p: Page, name: string, opts: { scripts: boolean } = { scripts: true }) => {
      await screenshot(p, name);
      if (opts.scripts) await assertAccessible(p, name);
    };
    const tokenStatus = async (id: string, s: string) =>
      (
        await fetch(`${base}/auth/api/v2/auth/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(s)}`).toString('base64')}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ grant_type: 'client_credentials' }),
        })
      ).status;

    it('sign in, then pick the tenant', async () => {
      await enrolThroughLink(t, page, link);

      await page.getByRole('heading', { name: 'Your tenants' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/console');
      const rows = await page.locator('tbody tr').allInnerTexts();
      assert.deepEqual(
        rows.map((r) => r.split('\t')[0]),
        ['Acme Partners', 'Acme Retail'],
        'the tenant with the role and the one below it',
      );
      await shot(page, '1-tenants');
      await page.getByRole('link', { name: 'Acme Retail' }).click();
      // a tenant's home is its overview; the credentials are its second tab
      await page.getByRole('heading', { name: 'Acme Retail' }).waitFor();
      await page.getByRole('navigation', { name: 'Sections of Acme Retail' }).getByRole('link', { name: 'API credentials' }).click();
      await page.getByRole('heading', { name: 'API credentials of Acme Retail' }).waitFor();
      await page.getByText('This tenant has no API clients.').waitFor();
      await shot(page, '2-empty-list');
    });

    it('create a credential: the secret is shown once, copies, and works', async () => {
      await page.getByRole('link', { name: 'Create a credential' }).click();
      await page.getByLabel('Name').fill('Warehouse sync');
      assert.ok(await page.getByLabel('Analyst').isChecked(), 'Analyst by default');
      await page.getByLabel('Auditor').check();
      await page.getByRole('group', { name: 'Roles' }).waitFor();
      await shot(page, '3-create');
      await page.getByRole('button', { name: 'Create credential' }).click();

      await page.getByRole('heading', { name: 'Credential created' }).waitFor();
      assert.equal(await page.getByText('previous secret').count(), 0, 'a new client has no previous secret');
      clientId = await page.getByLabel('Client ID').inputValue();
      secret = await page.getByLabel('Client secret').inputValue();
      assert.match(secret, /^gatehouse_cs_/);
      assert.equal(await page.getByLabel('Client secret').getAttribute('readonly'), '');
      assert.equal(await tokenStatus(clientId, secret), 200, 'the secret shown works at the token endpoint');

      const copy = page.getByRole('button', { name: 'Copy secret' });
      assert.ok(await copy.isVisible(), 'the copy button shows (the script ran)');
      await copy.click();
      await page.locator('#client_secret-status').getByText('Copied.').waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret, 'the clipboard holds the secret');
      await shot(page, '4-secret');

      await page.getByRole('link', { name: /back to the credentials/ }).click();
      const row = page.getByRole('row', { name: /Warehouse sync/ });
      await row.waitFor();
      assert.match(await row.innerText(), new RegExp(`${clientId}\\s+Analyst, Auditor\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\s+never`));
      // the list names the secret by its hint only (prefix and last four characters), never whole
      assert.equal(await page.getByText(secret).count(), 0, 'not shown again');
      assert.equal(await page.getByText(`gatehouse_cs_…${secret.slice(-4)}`).count(), 1, 'named by its hint');
      await shot(page, '5-list');
    });

    it('without JavaScript there is no copy button, and the secret can be selected', async () => {
      const plain = await browser.newContext({ javaScriptEnabled: false });
      await plain.addCookies(await context.cookies());
      const p = await watched(plain);
      await p.goto(page.url());
      await p.getByRole('link', { name: 'Create a credential' }).click();
      await p.getByLabel('Name').fill('No script');
      await p.getByRole('button', { name: 'Create credential' }).click();
      await p.getByRole('heading', { name: 'Credential created' }).waitFor();
      assert.equal(await p.getByRole('button', { name: 'Copy secret' }).count(), 0, 'a hidden button is no button');
      const field = p.getByLabel('Client secret');
      await field.selectText();
      assert.match(await field.inputValue(), /^gatehouse_cs_/);
      await shot(p, '4b-secret-no-script', { scripts: false });
      await plain.close();
    });

    it('rotate: the new secret works and the old one stops', async () => {
      await page.getByRole('link', { name: 'Rotate secret of Warehouse sync' }).click();
      await page.getByRole('heading', { name: 'Rotate the secret of Warehouse sync' }).waitFor();
      await page.getByLabel('Current secret').fill(secret);
      assert.equal(await page.getByLabel('How long the old secret keeps working').inputValue(), '0');
      await shot(page, '6-rotate');
      await page.getByRole('button', { name: 'Rotate secret' }).click();

      await page.getByRole('heading', { name: 'New secret' }).waitFor();
      assert.equal(await page.getByLabel('Client ID').inputValue(), clientId);
      const fresh = await page.getByLabel('Client secret').inputValue();
      assert.notEqual(fresh, secret);
      assert.ok(await page.getByRole('button', { name: 'Copy secret' }).isVisible());
      await shot(page, '7-new-secret');
      assert.equal(await tokenStatus(clientId, secret), 401, 'the old secret stops');
      assert.equal(await tokenStatus(clientId, fresh), 200, 'the new one works');
      secret = fresh;
      await page.getByRole('link', { name: /back to the credentials/ }).click();
    });

    it('delete after confirmation', async () => {
      await page.getByRole('link', { name: 'Delete Warehouse sync' }).click();
      await page.getByRole('heading', { name: 'Delete client Warehouse sync?' }).waitFor();
      await page.getByText('This cannot be undone.').waitFor();
      await shot(page, '8-confirm-delete');
      assert.equal(await tokenStatus(clientId, secret), 200, 'asking deletes nothing');
      await page.getByRole('button', { name: 'Delete client' }).click();

      await page.getByRole('heading', { name: 'API credentials of Acme Retail' }).waitFor();
      await page
        .getByRole('status')
        .getByText(/Client Warehouse sync .* was deleted/)
        .waitFor();
      assert.equal(await page.getByRole('row', { name: /Warehouse sync/ }).count(), 0);
      await shot(page, '9-deleted');
      assert.equal(await tokenStatus(clientId, secret), 401);
    });

    it('a refusal is a page under the header that says what to do', async () => {
      await page.goto(`${base}/console/credentials?tenant=987654321`);
      await page.getByRole('heading', { name: 'Tenant not found' }).waitFor();
      await page.getByRole('alert').getByText('No tenant 987654321 is visible to you.').waitFor();
      await page.getByText('Check the id, or pick a tenant from your list.').waitFor();
      await page.getByText('Signed in as console@acme.test').waitFor();
      assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible(), 'the way out stays');
      await shot(page, '10-refused');
      await page.getByRole('link', { name: 'Back to your tenants' }).click();
      await page.getByRole('heading', { name: 'Your tenants' }).waitFor();
    });

    it('the audit trail: reached by its tab, filtered by action, with the keyboard', async () => {
      await page.goto(`${base}/console`);
      await page.getByRole('link', { name: 'Acme Retail' }).click();
      await page.getByRole('navigation', { name: 'Sections of Acme Retail' }).getByRole('link', { name: 'Audit trail' }).click();
      await page.getByRole('heading', { name: 'Audit trail of Acme Retail' }).waitFor();
      await page.getByLabel('Action').focus();
      await page.keyboard.type('client.deleted');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Audit trail of Acme Retail' }).waitFor();
      const actions = await page.locator('tbody th[data-label="Action"]').allInnerTexts();
      assert.ok(actions.length >= 1, 'the deletion made above is listed');
      for (const a of actions) assert.equal(a.trim(), 'client.deleted');
      assert.equal(await page.getByLabel('Action').inputValue(), 'client.deleted', 'the filter stays in its field');
      await shot(page, '11-audit');
    });

    it('on a phone: nothing wider than the screen, each client stacked with its actions in view', async () => {
      const phone = await browser.newContext({ viewport: PHONE });
      await phone.addCookies(await context.cookies());
      const p = await watched(phone);
      // strings run in the page (these tests are compiled without the DOM's types)
      const fits = () => fitsWidth(p);
      await p.goto(`${base}/console`);
      assert.ok(await fits(), 'the tenants');
      await shot(p, 'phone-1-tenants');
      await p.getByRole('link', { name: 'Acme Retail' }).click();
      await p.getByRole('navigation', { name: 'Sections of Acme Retail' }).getByRole('link', { name: 'API credentials' }).click();
      await p.getByRole('link', { name: 'Create a credential' }).click();
      await p.getByLabel('Name').fill('Phone client');
      await p.getByRole('button', { name: 'Create credential' }).click();
      await p.getByRole('heading', { name: 'Credential created' }).waitFor();
      assert.ok(await fits(), 'the secret page');
      const secretBox = (await p.getByLabel('Client secret').boundingBox())!;
      assert.ok(secretBox.width > 300, `the secret's field takes the width of the screen: ${secretBox.width}`);
      await shot(p, 'phone-2-secret');
      await p.getByRole('link', { name: /back to the credentials/ }).click();
      const row = p.getByRole('row', { name: /Phone client/ });
      await row.waitFor();
      assert.ok(await fits(), 'the list');
      for (const name of ['Rotate secret of Phone client', 'Delete Phone client']) {
        const box = (await p.getByRole('link', { name }).boundingBox())!;
        assert.ok(box.x >= 0 && box.x + box.width <= 390, `${name} is on the screen: ${JSON.stringify(box)}`);
      }
      const cells = await p.evaluate<{ x: number; label: string }[]>(
        `[...[...document.querySelectorAll('tbody tr')].find((tr) => tr.textContent.includes('Phone client')).querySelectorAll('td[data-label]')].map((td) => ({ x: Math.round(td.getBoundingClientRect().left), label: getComputedStyle(td, '::before').content }))`,
      );
      assert.deepEqual(
        cells.map((c) => c.label),
        ['"Client ID: "', '"Roles: "', '"Created: "', '"Last used: "', '"Secrets: "'],
        'each value after its label',
      );
      assert.equal(new Set(cells.map((c) => c.x)).size, 1, 'one under the other');
      await shot(p, 'phone-3-list');
      await p.getByRole('link', { name: 'Delete Phone client' }).click();
      await p.getByRole('heading', { name: 'Delete client Phone client?' }).waitFor();
      assert.ok(await fits(), 'the confirmation, client id included');
      await shot(p, 'phone-4-confirm-delete');
      await p.getByRole('link', { name: 'Audit trail' }).click();
      await p.getByRole('heading', { name: /^Audit trail of/ }).waitFor();
      assert.ok(await fits(), 'the audit trail');
      await shot(p, 'phone-5-audit');
      await p.goto(`${base}/console/credentials?tenant=987654321`);
      await p.getByRole('heading', { name: 'Tenant not found' }).waitFor();
      assert.ok(await fits(), 'the refusal');
      await shot(p, 'phone-5-refused');
      await phone.close();
    });

    it('no script error and no Content-Security-Policy violation', () => {
      assert.deepEqual(problems, []);
    });
  });
}
