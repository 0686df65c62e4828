// SAML single sign-on in a real browser (Debian's chromium through playwright-core) against a real
// SAML IdP served on loopback (test/helpers/saml-idp.ts), on both engines: a connection created and
// configured by the IdP's metadata URL, Testing: a tester signs in at the IdP and lands in the
// console, a non-tester is asked for a password; Enabled: anyone in the domain signs in at the IdP;
// and `gatehouse login` (the real CLI, a child process) completed through the IdP.
// Screenshots: test-artifacts/<engine>-sso-*.png.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freshPage, RunningClock, screenshots } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium } from '../helpers/chromium.js';
import { deviceLoginShown, ensureBuilt, exitOf, freePort, gatehouse, killAll } from '../helpers/cli.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { issuedValue, proveByDns } from '../helpers/sso-domains.js';
import { createTenant } from '../helpers/tenants.js';

ensureBuilt();

const WAIT_MS = 60_000;
const TENANT_PATH = '/public/query';

for (const engine of transportEngines()) {
  describe(`SAML sign-in in a browser (${engine})`, { skip: skipWithoutChromium }, () => {
    let t: TestApp;
    let base: string;
    let idp: TestIdp;
    let dns: TestDnsServer;
    let browser: Browser;
    let tenant: string;
    let connection: string;
    const problems: string[] = [];
    const configs: string[] = [];

    before(async () => {
      const port = await freePort();
      // the IdP and node-saml read the real clock: the service's runs with it
      // the domain is proven the real way: its TXT record on a DNS responder on loopback
      dns = await startDnsServer();
      t = await startTestApp({
        engine,
        clock: new RunningClock(),
        env: {
          GATEHOUSE_BASE_URL: `http://127.0.0.1:${port}`,
          GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true',
          GATEHOUSE_DNS_SERVERS: dns.address,
          // the CLI's login below polls every second rather than every 5 (a wait, not a check)
          GATEHOUSE_DEVICE_POLL_INTERVAL_SECONDS: '1',
        },
      });
      base = await listen(t, port);
      // the IdP on another site (localhost, the service on 127.0.0.1): its POST to the ACS is cross-site, as in
      // production, so the SameSite=Lax session cookie does not come with it
      [idp, browser] = await Promise.all([startTestIdp({ host: 'localhost' }), launchChromium()]);
      tenant = await createTenant(t, '1', { name: 'Corp' });
    });
    after(async () => {
      await killAll();
      await browser?.close();
      await idp?.close();
      await t?.close();
      await dns?.close();
      for (const dir of configs) rmSync(dir, { recursive: true, force: true });
    });

    const admin = async (query: string, variables: Record<string, unknown>) => {
      const res = await t.gql(await t.rootToken(), query, variables, { path: TENANT_PATH, tenant });
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data;
    };
    const shot = screenshots(`${engine}-sso-`);

    /** /login in a fresh browser, the address typed: the page that follows. */
    async function typeAddress(email: string): Promise<Page> {
      const page = await freshPage(browser, problems);
      await page.goto(`${base}/login`);
      await page.getByLabel('E-mail address').fill(email);
      await page.getByRole('button', { name: 'Continue' }).click();
      return page;
    }

    it("an Administrator creates the connection and configures it by the IdP's metadata URL: Testing", async () => {
      const created = await admin(
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id status domainProofs { domain txtRecordValue } } }',
        { c: { name: 'Corp IdP', type: 'saml', domains: ['corp.test'], testers: ['tester@corp.test'] } },
      );
      connection = created.createSSOConnection.id;
      assert.equal(created.createSSOConnection.status, 'Created');
      const value = issuedValue(created.createSSOConnection, 'corp.test');
      assert.equal((await proveByDns(t, dns, await t.rootToken(), tenant, connection, 'corp.test', value)).status, 'proven');
      const updated = await admin('mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }', {
        u: { id: connection, connectionConfiguration: { samlConfiguration: { metadataURL: idp.metadataUrl } } },
      });
      assert.equal(updated.updateSSOConnection.status, 'Testing');
    });

    it('Testing: a tester signs in at the IdP and lands in the console; a non-tester is asked for a password', async () => {
      idp.setUser('tester@corp.test');
      const page = await typeAddress('tester@corp.test');
      await page.getByText('Signed in as').waitFor();
      assert.equal(new URL(page.url()).pathname, '/console');
      assert.equal(await page.locator('.account strong').innerText(), 'tester@corp.test');
      await shot(page, 'tester-signed-in');
      await page.context().close();

      const other = await typeAddress('someone@corp.test');
      await other.getByRole('heading', { name: 'Enter your password' }).waitFor();
      assert.equal(idp.requests.length, 1, 'nobody else was sent to the IdP');
      await other.context().close();
    });

    it('Enabled: anyone in the domain signs in at the IdP', async () => {
      await admin('mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }', {
        u: { id: connection, status: 'Enabled' },
      });
      idp.setUser('anyone@corp.test');
      const page = await typeAddress('anyone@corp.test');
      await page.getByText('Signed in as').waitFor();
      assert.equal(await page.locator('.account strong').innerText(), 'anyone@corp.test');
      await page.context().close();
    });

    it('gatehouse login through the IdP: the code confirmed, the IdP signs in, approve, and the CLI has a working token', async () => {
      const dir = join(mkdtempSync(join(tmpdir(), 'gatehouse-cli-config-')), 'gatehouse');
      configs.push(dir);
      const login = gatehouse(['login', '--url', base, '--username', 'tester@corp.test'], { GATEHOUSE_CONFIG_DIR: dir });
      const { code, link } = await deviceLoginShown(login, WAIT_MS);
      idp.setUser('tester@corp.test');
      const page = await freshPage(browser, problems);
      const u = new URL(link);
      await page.goto(base + u.pathname + u.search);
      assert.equal(await page.locator('.usercode strong').innerText(), code);
      await page.getByRole('button', { name: 'Yes, it matches' }).click();
      // no password, no authenticator code: the IdP signed the person in
      await page.getByRole('heading', { name: 'Approve this device?' }).waitFor();
      await shot(page, 'device-approve');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Device approved' }).waitFor();
      await page.context().close();
      const done = await exitOf(login, WAIT_MS);
      assert.equal(done.code, 0, login.stderr());
      assert.match(login.stdout(), /Signed in to .* as tester@corp\.test/);
      const token = gatehouse(['token'], { GATEHOUSE_CONFIG_DIR: dir });
      assert.equal((await exitOf(token, WAIT_MS)).code, 0, token.stderr());
      const version = await fetch(`${base}/assets/version`, { headers: { authorization: `Bearer ${token.stdout().trim()}` } });
      assert.equal(version.status, 200);
    });

    it('no page broke its Content-Security-Policy or threw', () => {
      assert.deepEqual(problems, []);
    });
  });
}
