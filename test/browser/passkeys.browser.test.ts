// Passkeys in a real browser (Chromium with its virtual authenticator, CDP WebAuthn: ctap2,
// internal, resident keys, user verification), served from http://localhost:PORT with the base
// URL set to match (WebAuthn refuses an IP address as RP id). A person registers a passkey on
// their account page, signs out, signs in with the password and the passkey in place of the code,
// then with the passkey alone, and removes it (the passkey then fails, clearly). The attacks: a
// page of the service relayed through another origin (its assertion is refused: the origin is the
// base URL's, not the Host header's), the same signed answer posted again, a counter behind the
// stored one (a clone), an authenticator that does not verify the user (refused by the browser, and
// by the service when the options are altered to ask for none). No CSP violation or
// script error on any page; axe-core on the new pages. Screenshots in test-artifacts/.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { totpCodeAt } from '../../src/users/totp.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertAccessible } from '../helpers/axe.js';
import { enrolledUser, screenshots, watchedPage } from '../helpers/browser.js';
import { launchChromium, skipWithoutChromium as skip } from '../helpers/chromium.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';
import { PASSWORD } from '../helpers/pages.js';

/** A port free now (the system's pick), for a base URL that must be known before the app starts. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A relay on another port that passes every request on to `port` with its Host header as the
 *  browser sent it (another origin serving the service's pages, as a phishing proxy would). */
async function relay(port: number): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const out = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

for (const engine of transportEngines()) {
  describe(`passkeys in a browser (${engine})`, { skip }, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let proxy: { server: Server; port: number };
    const problems: string[] = [];
    const shot = screenshots(`passkeys-${engine}-`);

    before(async () => {
      const port = await freePort();
      base = `http://localhost:${port}`;
      t = await startTestApp({ engine, env: { GATEHOUSE_BASE_URL: base } });
      await listen(t, port);
      proxy = await relay(port);
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await new Promise((r) => proxy?.server.close(r));
      await t?.close();
    });

    /** A page with a virtual authenticator (user verification as asked). */
    async function withAuthenticator(userVerified = true): Promise<{ ctx: BrowserContext; page: Page; cdp: CDPSession; authenticatorId: string }> {
      const ctx = await browser.newContext();
      const page = await watchedPage(ctx, problems);
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: userVerified,
          automaticPresenceSimulation: true,
        },
      });
      return { ctx, page, cdp, authenticatorId };
    }

    const signOut = async (page: Page) => {
      await page.getByRole('button', { name: 'Sign out' }).first().click();
      await page.getByText('You have signed out.').waitFor();
    };
    const code = (key: string) => {
      t.clock.advance(30_000);
      return totpCodeAt(key, t.clock.now());
    };
    const events = (action: string) => t.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', action).execute();

    async function addPasskey(page: Page, key: string, name: string) {
      await page.goto(`${base}/console/account`);
      await page.getByLabel('Name of the new passkey').fill(name);
      await page.getByLabel('Code from your authenticator app').last().fill(code(key));
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText(`The passkey ${name} was added`).waitFor();
    }

    it('registers a passkey, signs in with it after the password and without one, removes it', async () => {
      const { page, cdp, authenticatorId } = await withAuthenticator();
      await page.goto(`${base}/login`);
      const key = await enrolledUser(t, base, page, 'pk-browser@example.com');
      await page.goto(`${base}/console/account`);
      await assertAccessible(page, 'the account page with the passkey form');
      await addPasskey(page, key, 'This laptop');
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      assert.equal(credentials.length, 1);
      assert.equal(credentials[0]!.isResidentCredential, true, 'a discoverable credential');
      assert.equal(credentials[0]!.rpId, 'localhost');
      await assertAccessible(page, 'the account page listing a passkey');
      await shot(page, 'account');

      // the password, then the passkey in place of the code
      await signOut(page);
      await page.getByLabel('E-mail address').fill('pk-browser@example.com');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'Enter your code' }).waitFor();
      await assertAccessible(page, 'the code step with its passkey button');
      await shot(page, 'code-step');
      await page.getByRole('button', { name: 'Use your passkey instead' }).click();
      await page.getByText('Signed in as').first().waitFor();

      // no password at all
      await signOut(page);
      await assertAccessible(page, 'the sign-in page with its passkey button');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByText('Signed in as').first().waitFor();
      const used = (await events('user.signed_in')).filter((e) => (e.details as Record<string, unknown>).factor === 'passkey');
      assert.equal(used.length, 2);

      // removed after a confirmation; then the passkey the browser still holds is refused
      await page.goto(`${base}/console/account`);
      await page.getByRole('link', { name: 'Remove This laptop' }).click();
      await page.getByRole('heading', { name: 'Remove the passkey This laptop?' }).waitFor();
      await assertAccessible(page, 'the removal confirmation');
      await page.getByRole('button', { name: 'Remove passkey' }).click();
      await page.getByText('The passkey This laptop was removed').waitFor();
      await signOut(page);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByText('This passkey is not registered here: it was removed').waitFor();
      assert.deepEqual(problems, [], 'no CSP violation or script error');
    });

    it('refuses an assertion made on another origin, a replayed answer, a counter going backwards', async () => {
      const { page } = await withAuthenticator();
      await page.goto(`${base}/login`);
      const key = await enrolledUser(t, base, page, 'pk-attacks@example.com');
      await addPasskey(page, key, 'Phone');
      await signOut(page);

      // the service's own page relayed through another origin: the browser signs for that origin
      const elsewhere = `http://localhost:${proxy.port}`;
      await page.goto(`${elsewhere}/login`);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByText('not valid for this site').waitFor();
      assert.match(page.url(), /\/login\/passkey$/);

      // the same signed answer posted again, in a new sign-in: refused
      await page.goto(`${base}/login`);
      const posted = page.waitForRequest((r) => r.url().endsWith('/login/passkey') && r.method() === 'POST');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      const answer = new URLSearchParams((await posted).postData() ?? '').get('response');
      assert.ok(answer, 'the form carried the answer');
      await page.getByText('Signed in as').first().waitFor();
      await signOut(page);
      await page.evaluate(`(() => {
        const form = document.querySelector('form[data-passkey]');
        form.querySelector('input[name="response"]').value = ${JSON.stringify(answer)};
        form.submit();
      })()`);
      await page.getByText('not valid for this site').waitFor();

      // the stored counter ahead of the authenticator's, as after a clone signed in first
      await t.db.kysely.updateTable('passkeys').set({ counter: '1000' }).where('name', '=', 'Phone').execute();
      await page.goto(`${base}/login`);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByText('its signature counter went backwards').waitFor();
      assert.equal((await events('passkey.clone_suspected')).length, 1);
      assert.deepEqual(problems, [], 'no CSP violation or script error');
    });

    it('refuses a passkey whose authenticator did not verify the user', async () => {
      const { page, cdp, authenticatorId } = await withAuthenticator();
      await page.goto(`${base}/login`);
      const key = await enrolledUser(t, base, page, 'pk-uv@example.com');
      await addPasskey(page, key, 'Key');
      await signOut(page);
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      // the browser itself refuses: the options require user verification
      await page.getByText('No passkey was used').waitFor();
      assert.equal(await page.getByText('Signed in as').count(), 0);
      await shot(page, 'unverified');
      // options altered on their way to ask for none: the browser signs without it, and the service refuses
      await page.route(`${base}/login`, async (route) => {
        const answer = await route.fetch();
        const body = (await answer.text()).replace(
          '&quot;userVerification&quot;:&quot;required&quot;',
          '&quot;userVerification&quot;:&quot;discouraged&quot;',
        );
        await route.fulfill({ response: answer, body });
      });
      await page.goto(`${base}/login`);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByText('Your passkey did not verify you').waitFor();
      await page.unroute(`${base}/login`);
      assert.deepEqual(problems, [], 'no CSP violation or script error');
    });
  });
}
