// The single sign-on set-up wizard in a real browser (Debian's chromium through playwright-core)
// against a real SAML IdP on loopback (test/helpers/saml-idp.ts): an Administrator creates the
// connection, reads the values to paste, gives the IdP's metadata URL, sees the live check, saves
// it (Testing), adds a domain and a tester, runs the test sign-in in a new tab and sees the
// attributes the IdP sent, and enables the connection. Every page is checked with axe-core and
// photographed at 1280 and 390 px: test-artifacts/<engine>-console-sso-*.png; on a phone nothing
// is wider than the screen. No page breaks its Content-Security-Policy or throws.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { atPhoneWidth, DESKTOP, drawnWidth, enrolThroughLink, RunningClock, screenshots, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium } from '../helpers/chromium.js';
import { freePort } from '../helpers/cli.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { setupLink } from '../helpers/pages.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { createTenant } from '../helpers/tenants.js';

for (const engine of transportEngines()) {
  describe(`the SSO set-up wizard in a browser (${engine})`, { skip: skipWithoutChromium }, () => {
    let t: TestApp;
    let base: string;
    let idp: TestIdp;
    let dns: TestDnsServer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let tenant: string;
    const problems: string[] = [];
    let link = '';

    before(async () => {
      const port = await freePort();
      // the IdP and node-saml read the real clock: the service's runs with it
      dns = await startDnsServer();
      t = await startTestApp({
        engine,
        clock: new RunningClock(),
        env: { GATEHOUSE_BASE_URL: `http://127.0.0.1:${port}`, GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true', GATEHOUSE_DNS_SERVERS: dns.address },
      });
      base = await listen(t, port);
      [idp, browser] = await Promise.all([startTestIdp({ host: 'localhost' }), launchChromium()]);
      tenant = await createTenant(t, '1', { name: 'Corp' });
      context = await browser.newContext({ viewport: DESKTOP });
      page = await watchedPage(context, problems);
      link = base + (await setupLink(t, 'it-admin@corp-it.test', { tenant, roles: [ROLE_IDS.Administrator] }));
    });
    after(async () => {
      await browser?.close();
      await idp?.close();
      await t?.close();
      await dns?.close();
    });

    const screenshot = screenshots(`${engine}-console-sso-`);

    /** axe-core, then screenshots at 1280 and 390 px; on the phone nothing is wider than the screen. */
    async function checked(p: Page, name: string): Promise<void> {
      await assertAccessible(p, name);
      await screenshot(p, `${name}-1280`);
      await atPhoneWidth(p, async () => {
        await screenshot(p, `${name}-390`);
        const wide = await drawnWidth(p);
        assert.ok(wide <= 390, `${name}: the page is ${wide} px wide on a 390 px phone`);
        await assertAccessible(p, `${name} at 390 px`);
      });
    }

    it('sign in as the Administrator', async () => {
      await enrolThroughLink(t, page, link);
      await page.getByRole('heading', { name: 'Your tenants' }).waitFor();
    });

    it('the Single sign-on tab, then step 1: name and domain', async () => {
      await page.getByRole('link', { name: 'Corp' }).first().click();
      await page.getByRole('link', { name: 'Single sign-on' }).click();
      await page.getByRole('heading', { name: 'Single sign-on of Corp' }).waitFor();
      await checked(page, '1-list-empty');
      await page.getByRole('link', { name: 'Set up a connection' }).click();
      await page.getByRole('heading', { name: 'Set up single sign-on' }).waitFor();
      await checked(page, '2-new');
      await page.getByLabel('Name').fill('Corp IdP');
      await page.getByLabel('E-mail domains').fill('corp.test');
      await page.getByRole('button', { name: 'Create and continue' }).click();
      await page.getByRole('heading', { name: 'Connection Corp IdP' }).waitFor();
    });

    it('step 2: the values to paste, with copy buttons and instructions for three IdPs', async () => {
      const entityId = await page.getByLabel('Entity ID (Audience URI)').inputValue();
      assert.match(entityId, /\/sso\/saml\/[0-9a-f-]{36}$/);
      assert.match(await page.getByLabel('ACS URL (Reply URL)').inputValue(), /\/acs$/);
      assert.match(await page.getByLabel('SP metadata link').inputValue(), /\/metadata$/);
      assert.equal(await page.getByRole('button', { name: /^Copy/ }).count(), 3, 'the copy script showed the buttons');
      await page.getByText('Microsoft Entra ID').click();
      await page.getByText('Enterprise applications').waitFor();
      await checked(page, '3-values');
    });

    it('step 3: the metadata URL, checked (issuer, subject, validity) before it is saved; saved: Testing', async () => {
      await page.getByLabel('Metadata URL', { exact: true }).fill(idp.metadataUrl);
      await page.getByRole('button', { name: 'Check', exact: true }).click();
      await page.getByText('Nothing is saved yet').waitFor();
      const facts = await page.locator('.cert-check').first().innerText();
      for (const label of ['Issuer', 'Subject', 'Valid from', 'Valid until']) assert.match(facts, new RegExp(label));
      await checked(page, '4-checked');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.locator('p.notice').getByText('the connection is Testing').waitFor();
      await checked(page, '5-testing');
    });

    it('a domain and a tester are added', async () => {
      await page.getByLabel('Add a domain').fill('corp-mail.test');
      await page.locator('#domains').getByRole('button', { name: 'Add' }).click();
      await page.getByText('Saved: added corp-mail.test').waitFor();
      await page.getByLabel('Add a tester').fill('tester@corp.test');
      await page.locator('#testers').getByRole('button', { name: 'Add' }).click();
      await page.getByText('Saved: added tester@corp.test').waitFor();
      assert.deepEqual(await page.locator('#testers ul.values code').allInnerTexts(), ['tester@corp.test']);
    });

    it('corp.test is proven: a new value shown once with the record to publish, published, then Check now', async () => {
      const row = page.locator('#domains tr', { has: page.locator('th', { hasText: 'corp.test' }) }).first();
      assert.match(await row.innerText(), /pending/);
      await row.getByRole('button', { name: 'Show a new value for corp.test' }).click();
      await page.getByText('Publish this DNS record for corp.test').waitFor();
      assert.equal(await page.locator('#txt-name-corp\\.test').inputValue(), '_gatehouse-challenge.corp.test');
      const value = await page.locator('#txt-value-corp\\.test').inputValue();
      assert.match(value, /^[A-Za-z0-9_-]{43}$/);
      await checked(page, '5b-domain-value');
      dns.setTxt('_gatehouse-challenge.corp.test', [value]);
      await page.getByRole('button', { name: 'Check now corp.test' }).click();
      await page.getByText('corp.test is proven: people in it sign in through this connection').waitFor();
      assert.equal(await page.locator('#txt-value-corp\\.test').count(), 0, 'the value is not shown again');
    });

    it('the test sign-in, in a new tab, shows the attributes the IdP sent; nobody is signed in', async () => {
      idp.setUser('tester@corp.test', { displayName: 'Tess Ter', department: 'IT' });
      const [tab] = await Promise.all([context.waitForEvent('page'), page.getByRole('button', { name: /Test sign-in/ }).click()]);
      tab.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) problems.push(m.text());
      });
      await tab.getByRole('heading', { name: 'Test sign-in worked' }).waitFor({ timeout: 30_000 });
      const attributes = await tab.locator('.attributes').innerText();
      assert.match(attributes, /displayName\s+Tess Ter/);
      assert.match(attributes, /department\s+IT/);
      // what the sign-in itself would do (its own decision): nobody has the address yet
      assert.match(await tab.locator('.notice').innerText(), /would be signed in with a new account/);
      await checked(tab, '6-test-result');
      await tab.close();
      // the console's tab is still the Administrator's
      await page.reload();
      assert.equal(await page.locator('.account strong').innerText(), 'it-admin@corp-it.test');
    });

    it('enable, and the list shows it (with the test IdP’s two-day certificate flagged)', async () => {
      await page.getByRole('button', { name: 'Enable for everyone' }).click();
      await page.getByText('The connection is enabled').waitFor();
      await checked(page, '7-enabled');
      await page.getByRole('link', { name: 'Back to the connections' }).click();
      const row = await page.locator('tbody tr').first().innerText();
      assert.match(row, /Corp IdP/);
      assert.match(row, /Enabled/);
      assert.match(row, /Certificate expires/);
      await checked(page, '8-list');
    });

    it('delete asks first', async () => {
      await page.getByRole('link', { name: 'Corp IdP' }).click();
      await page.getByRole('link', { name: 'Delete this connection' }).click();
      await page.getByRole('heading', { name: 'Delete connection Corp IdP?' }).waitFor();
      await checked(page, '9-delete');
      await page.getByRole('button', { name: 'Delete connection' }).click();
      await page.getByText('was deleted').waitFor();
    });

    it('no page broke its Content-Security-Policy or threw', () => {
      assert.deepEqual(problems, []);
    });
  });
}
