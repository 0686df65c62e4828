// Device login with the real command line and the Python example as child processes, approved in
// a real browser (Debian's chromium through playwright-core), on both engines: the code the CLI
// prints is the code the page shows; approve, and the CLI keeps a working token (mode 0600) that
// `token`, `whoami` and `logout` use; deny; the wrong account signing in approves nothing, and the
// code then expires; examples/python/device_login.py signs in and calls /assets/version.
//
// The service runs on a clock that follows real time (the processes poll by real time) and that the
// test moves on where a person would wait (a new TOTP step, a code's ten minutes).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { confirmDeviceCode, enrolledUser, freshPage, RunningClock, signInOnPage } from '../helpers/browser.js';
import { ARTIFACTS, launchChromium, skipWithoutChromium } from '../helpers/chromium.js';
import { deviceLoginShown, ensureBuilt, exitOf, freePort, gatehouse, killAll, spawned } from '../helpers/cli.js';
import { transportEngines } from '../helpers/engines.js';
import { listen } from '../helpers/listen.js';

ensureBuilt();

const WAIT_MS = 60_000;

for (const engine of transportEngines()) {
  describe(`device login from the CLI and Python, approved in a browser (${engine})`, { skip: skipWithoutChromium }, () => {
    let t: TestApp;
    let base: string;
    let browser: Browser;
    let key = '';
    let otherKey = '';
    const cspViolations: string[] = [];
    const configs: string[] = [];

    before(async () => {
      // the service must name its own address (metadata, verification link): the port is chosen first
      const port = await freePort();
      // the CLI and the Python example poll every second rather than every 5: the interval is the
      // server's to give (GATEHOUSE_DEVICE_POLL_INTERVAL_SECONDS), and waiting is not what is tested
      t = await startTestApp({
        engine,
        clock: new RunningClock(),
        env: { GATEHOUSE_BASE_URL: `http://127.0.0.1:${port}`, GATEHOUSE_DEVICE_POLL_INTERVAL_SECONDS: '1' },
      });
      base = await listen(t, port);
      browser = await launchChromium();
      mkdirSync(ARTIFACTS, { recursive: true });
      const first = await freshPage(browser, cspViolations);
      key = await enrolledUser(t, base, first, 'cli@example.com');
      await first.context().close();
      const second = await freshPage(browser, cspViolations);
      otherKey = await enrolledUser(t, base, second, 'other@example.com');
      await second.context().close();
    });
    after(async () => {
      await killAll();
      await browser?.close();
      await t?.close();
      for (const dir of configs) rmSync(dir, { recursive: true, force: true });
    });

    /** A fresh configuration folder, as on another person's machine. */
    function configDir(): string {
      const dir = join(mkdtempSync(join(tmpdir(), 'gatehouse-cli-config-')), 'gatehouse');
      configs.push(dir);
      return dir;
    }

    async function openAndSignIn(link: string, code: string, email: string, totpKey: string): Promise<Page> {
      const page = await freshPage(browser, cspViolations);
      await confirmDeviceCode(t, page, base, link, code, email, totpKey);
      return page;
    }

    it('gatehouse login: the same code in the terminal and the page; approve; token, whoami, logout', async () => {
      const dir = configDir();
      const env = { GATEHOUSE_CONFIG_DIR: dir };
      const login = gatehouse(['login', '--url', base, '--username', 'cli@example.com'], env);
      const { code, link } = await deviceLoginShown(login, WAIT_MS);
      assert.ok(link.endsWith(`user_code=${code}`), 'the link carries the code');
      const page = await openAndSignIn(link, code, 'cli@example.com', key);
      await page.getByRole('heading', { name: 'Approve this device?' }).waitFor();
      await page.screenshot({ path: join(ARTIFACTS, `${engine}-cli-approve.png`), fullPage: true });
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Device approved' }).waitFor();
      await page.context().close();

      const done = await exitOf(login, WAIT_MS);
      assert.equal(done.code, 0, login.stderr());
      assert.match(login.stdout(), /Signed in to .* as cli@example\.com/);
      assert.match(login.stdout(), /Waiting for approval/);
      const file = join(dir, 'credentials.json');
      assert.equal(statSync(file).mode & 0o777, 0o600, "the token file is the owner's only");
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.doesNotMatch(login.stdout() + login.stderr(), /eyJ/, 'the token itself is never printed by login');

      const token = gatehouse(['token'], env);
      assert.equal((await exitOf(token, WAIT_MS)).code, 0, token.stderr());
      const accessToken = token.stdout().trim();
      assert.equal(JSON.parse(readFileSync(file, 'utf8')).logins[base].access_token, accessToken);
      const version = await fetch(`${base}/assets/version`, { headers: { authorization: `Bearer ${accessToken}` } });
      assert.equal(version.status, 200, 'the token works on the APIs');

      const whoami = gatehouse(['whoami'], env);
      assert.equal((await exitOf(whoami, WAIT_MS)).code, 0, whoami.stderr());
      assert.match(whoami.stdout(), /Account\s+cli@example\.com/);
      assert.match(whoami.stdout(), /Tenant\s+1\b/);
      assert.match(whoami.stdout(), /Roles\s+Analyst\b/);

      const logout = gatehouse(['logout'], env);
      assert.equal((await exitOf(logout, WAIT_MS)).code, 0);
      assert.match(logout.stdout(), /Logged out of/);
      assert.equal(existsSync(file), false, 'nothing is kept');
      const after = gatehouse(['whoami'], env);
      assert.equal((await exitOf(after, WAIT_MS)).code, 1);
      assert.match(after.stderr(), /not logged in; run: gatehouse login/);
    });

    it('gatehouse login: denied in the browser, the CLI says so and stores nothing', async () => {
      const dir = configDir();
      const login = gatehouse(['login', '--url', base, '--username', 'cli@example.com'], { GATEHOUSE_CONFIG_DIR: dir });
      const { code, link } = await deviceLoginShown(login, WAIT_MS);
      const page = await openAndSignIn(link, code, 'cli@example.com', key);
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.getByRole('heading', { name: 'Device denied' }).waitFor();
      await page.context().close();
      const done = await exitOf(login, WAIT_MS);
      assert.equal(done.code, 1);
      assert.match(login.stderr(), /the login was denied in the browser; nothing was stored/);
      assert.equal(existsSync(join(dir, 'credentials.json')), false);
    });

    it('gatehouse login: another account signing in approves nothing; the code then expires', async () => {
      const dir = configDir();
      const login = gatehouse(['login', '--url', base, '--username', 'cli@example.com'], { GATEHOUSE_CONFIG_DIR: dir });
      const { code, link } = await deviceLoginShown(login, WAIT_MS);
      // a browser already signed in as another account opens the link
      const page = await freshPage(browser, cspViolations);
      await page.goto(`${base}/login`);
      await signInOnPage(t, page, 'other@example.com', otherKey);
      await page.getByText('Signed in as').waitFor();
      await page.goto(link);
      assert.equal(await page.locator('.usercode strong').innerText(), code);
      await page.getByRole('button', { name: 'Yes, it matches' }).click();
      await page.getByRole('heading', { name: 'Another account' }).waitFor();
      await page.context().close();
      assert.ok(login.running(), 'the CLI is still waiting');
      // ten minutes pass on the service's clock
      t.clock.advance(601_000);
      const done = await exitOf(login, WAIT_MS);
      assert.equal(done.code, 1);
      assert.match(login.stderr(), /the code expired before it was approved; run gatehouse login again/);
      assert.equal(existsSync(join(dir, 'credentials.json')), false);
    });

    it('examples/python/device_login.py: device login, then /assets/version with the token', async () => {
      const python = spawned('python3', ['examples/python/device_login.py', '--url', base, '--username', 'cli@example.com'], {});
      const { code, link } = await deviceLoginShown(python, WAIT_MS);
      const page = await openAndSignIn(link, code, 'cli@example.com', key);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByRole('heading', { name: 'Device approved' }).waitFor();
      await page.context().close();
      const done = await exitOf(python, WAIT_MS);
      assert.equal(done.code, 0, python.stderr());
      const version = JSON.parse(/\/assets\/version: (\{.*\})/.exec(python.stdout())![1]!);
      assert.deepEqual(Object.keys(version).sort(), ['revision', 'tag', 'timestamp']);
    });

    it('no page broke its Content-Security-Policy', () => {
      assert.deepEqual(cspViolations, []);
    });
  });
}
