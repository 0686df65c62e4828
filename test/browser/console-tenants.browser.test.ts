// The tenant pages of the console in a real browser (Debian's chromium driven by playwright-core;
// see helpers/chromium.ts): a partner's Administrator finds a child by filters, opens it, edits it,
// turns support access on with a reason, and creates a child, with the keyboard where a person
// would (Enter submits); every page rendered passes axe-core (WCAG 2.1 A/AA, best practices); at
// 390 px nothing is wider than the screen; no script error and no CSP violation. Screenshots at
// 1280 and 390 px: test-artifacts/console-tenants-*.png.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { DESKTOP, drawnWidth, enrolThroughLink, PHONE, screenshots, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { listen } from '../helpers/listen.js';
import { setupLink } from '../helpers/pages.js';
import { createTenant, tq } from '../helpers/tenants.js';

describe('the tenant pages in a browser', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let partner: string;
  let retail: string;
  const problems: string[] = [];

  before(async () => {
    t = await startTestApp({ engine: 'pglite' });
    base = await listen(t);
    browser = await launchChromium();
    partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
    retail = await createTenant(t, partner, { name: 'Acme Retail', environments: ['echo', 'pilot'], labels: [{ name: 'tier', value: 'gold' }] });
    await createTenant(t, partner, { name: 'Acme Wholesale' });
    await createTenant(t, partner, { name: 'Bravo Shops', environments: ['pilot'] });
    page = await watchedPage(await browser.newContext({ viewport: DESKTOP }), problems);
    await enrolThroughLink(t, page, base + (await setupLink(t, 'partner-admin@acme.test', { tenant: partner, roles: [ROLE_IDS.Administrator] })));
    await page.getByRole('heading', { name: 'Your tenants' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const screenshot = screenshots('console-tenants-');
  const shot = (name: string) => screenshot(page, name);
  /** axe-core, and a screenshot at 1280 px */
  async function check(name: string) {
    await assertAccessible(page, name);
    await shot(name);
  }
  const read = async (id: string) =>
    (
      await tq(
        t,
        await t.rootToken(),
        'query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids}) { results { name description support_enabled support_reason partnership { child_tenants { name } } } } }',
        { ids: [id] },
      )
    ).body.data.tenants.results[0];

  it('opens the partner, and finds a child by filters', async () => {
    await page.getByRole('link', { name: 'Acme Partners' }).click();
    await page.getByRole('heading', { name: 'Acme Partners', level: 1 }).waitFor();
    await page.getByRole('table', { name: 'Tenants under Acme Partners' }).waitFor();
    await check('1-partner');
    await page.getByRole('link', { name: 'Search the tenants below it' }).click();
    await page.getByRole('heading', { name: 'Search Acme Partners and the tenants below it' }).waitFor();
    await check('2-search');
    await page.getByLabel('Name or id').fill('acme%');
    await page.getByLabel('Environment').selectOption('pilot');
    await page.getByLabel('Enabled there').selectOption('yes');
    await page.getByLabel('Name or id').press('Enter');
    await page.getByRole('status').getByText('1 tenant matches.').waitFor();
    const found = await page.getByRole('table', { name: 'Tenants found' }).locator('tbody tr').allInnerTexts();
    assert.deepEqual(
      found.map((r) => r.split('\t')[0]),
      ['Acme Retail'],
    );
    await check('3-found');
    // keyboard: the link to the tenant found, followed with Enter
    await page.getByRole('link', { name: 'Acme Retail' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Acme Retail', level: 1 }).waitFor();
    // the breadcrumbs: the partner above it, then the tenant
    const crumbs = await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('listitem').allInnerTexts();
    assert.deepEqual(crumbs, ['Your tenants', 'Acme Partners', 'Acme Retail']);
    await page.getByText('tier').first().waitFor();
    await check('4-child');
  });

  it('edits the child', async () => {
    await page.getByRole('link', { name: 'Edit, enable or disable, expiry' }).click();
    await page.getByRole('heading', { name: 'Edit Acme Retail' }).waitFor();
    await check('5-edit');
    await page.getByLabel('Description').fill('Stores in the north');
    await page.getByLabel('Name').fill('Acme Retail North');
    await page.getByLabel('Name').press('Enter');
    await page.getByRole('status').getByText('Acme Retail North was saved.').waitFor();
    assert.equal((await read(retail)).description, 'Stores in the north');
  });

  it('turns support access on with a reason', async () => {
    await page.getByRole('link', { name: 'Support access' }).click();
    await page.getByRole('heading', { name: 'Support access to Acme Retail North' }).waitFor();
    await check('6-support');
    await page.getByLabel('Reason').fill('ticket 4711');
    await page.getByLabel('Reason').press('Enter');
    await page
      .getByRole('status')
      .getByText(/Support access to Acme Retail North is on/)
      .waitFor();
    const now = await read(retail);
    assert.equal(now.support_enabled, true);
    assert.equal(now.support_reason, 'ticket 4711');
    await check('7-child-after');
  });

  it('shows the labels, subscriptions and offerings pages accessibly', async () => {
    await page.getByRole('link', { name: 'Labels' }).click();
    await page.getByRole('heading', { name: 'Labels of Acme Retail North' }).waitFor();
    await check('8-labels');
    await page.goto(`${base}/console/tenant/subscriptions?tenant=${retail}`);
    await page.getByRole('heading', { name: 'Subscriptions of Acme Retail North' }).waitFor();
    await check('9-subscriptions');
    await page.goto(`${base}/console/tenant/offerings?tenant=${partner}`);
    await page.getByRole('heading', { name: 'Services and subscriptions of Acme Partners' }).waitFor();
    await check('10-offerings');
  });

  it('creates a child of the partner', async () => {
    await page.goto(`${base}/console/tenant?tenant=${retail}`);
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Acme Partners' }).click();
    await page.getByRole('link', { name: 'Create a tenant under it' }).click();
    await page.getByRole('heading', { name: 'Create a tenant under Acme Partners' }).waitFor();
    await check('11-new');
    await page.getByLabel('Name').fill('Charlie Outlet');
    await page.getByLabel('pilot').check();
    await page.getByLabel('Name').press('Enter');
    await page
      .getByRole('status')
      .getByText(/Tenant Charlie Outlet \(id \d+\) was created under Acme Partners/)
      .waitFor();
    await page.getByRole('heading', { name: 'Charlie Outlet', level: 1 }).waitFor();
    assert.ok((await read(partner)).partnership.child_tenants.some((c: { name: string }) => c.name === 'Charlie Outlet'));
    await check('12-created');
  });

  it('on a phone (390 px) nothing is wider than the screen', async () => {
    await page.setViewportSize(PHONE);
    const pages: [string, string][] = [
      ['partner', `/console/tenant?tenant=${partner}`],
      ['search', `/console/tenants?tenant=${partner}&name=acme%25`],
      ['child', `/console/tenant?tenant=${retail}`],
      ['edit', `/console/tenant/edit?tenant=${retail}`],
      ['support', `/console/tenant/support?tenant=${retail}`],
      ['labels', `/console/tenant/labels?tenant=${retail}`],
      ['new', `/console/tenant/new?tenant=${partner}`],
    ];
    for (const [name, path] of pages) {
      await page.goto(base + path);
      const width = await drawnWidth(page);
      assert.ok(width <= 390, `${name}: ${width} px wide`);
      await assertAccessible(page, `${name} at 390 px`);
      await shot(`390-${name}`);
    }
    await page.setViewportSize(DESKTOP);
  });

  it('no script error and no CSP violation on any page', () => {
    assert.deepEqual(problems, []);
  });
});
