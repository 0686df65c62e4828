// Debian's chromium for the browser tests (driven by playwright-core): where it is, how it is
// launched, and whether a test may be skipped without it. CI (.ci/run) installs chromium and sets
// CI_REQUIRE_BROWSER=1, so there a browser test cannot be skipped; elsewhere it is skipped, saying
// why, when /usr/bin/chromium is missing. Screenshots go to test-artifacts/ for a person to see.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { root } from './cli.js';

export const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];
export const ARTIFACTS = join(root, 'test-artifacts');

const missing = !existsSync(CHROMIUM);
if (missing && process.env.CI_REQUIRE_BROWSER === '1')
  throw new Error(`${CHROMIUM} is missing and CI_REQUIRE_BROWSER=1: install the chromium package`);
/** `skip` for describe(): false, or why the browser tests cannot run here. */
export const skipWithoutChromium: string | false = missing ? `${CHROMIUM} is missing (apt-get install chromium)` : false;

/** The process's one Chromium: a test process that runs several browser files (scripts/test.mjs
 *  bundles files per lane) starts it once; it is closed when the process's tests are done. */
let shared: Promise<Browser> | undefined;
after(async () => {
  const browser = await shared?.catch(() => undefined);
  shared = undefined;
  await browser?.close();
});

/**
 * A browser for one test file: the process's shared Chromium, seen through a view whose
 * `newContext` remembers what it opened and whose `close` closes those contexts only (each file
 * gets fresh contexts, so nothing of one file's cookies or pages reaches another).
 */
export async function launchChromium(): Promise<Browser> {
  shared ??= chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  const browser = await shared;
  const opened: BrowserContext[] = [];
  return new Proxy(browser, {
    get(target, prop) {
      if (prop === 'newContext') {
        return async (...args: Parameters<Browser['newContext']>) => {
          const context = await target.newContext(...args);
          opened.push(context);
          return context;
        };
      }
      if (prop === 'newPage') {
        return async (...args: Parameters<Browser['newPage']>) => {
          const context = await target.newContext(...args);
          opened.push(context);
          return context.newPage();
        };
      }
      // `close` (and `await using`) closes what this file opened, never the shared browser
      if (prop === 'close' || prop === Symbol.asyncDispose)
        return async () => void (await Promise.all(opened.splice(0).map((c) => c.close().catch(() => undefined))));
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
