// Debian's chromium for the browser tests (driven by playwright-core): where it is, how it is
// launched, and whether a test may be skipped without it. CI (.ci/run) installs chromium and sets
// CI_REQUIRE_BROWSER=1, so there a browser test cannot be skipped; elsewhere it is skipped, saying
// why, when /usr/bin/chromium is missing. Screenshots go to test-artifacts/ for a person to see.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
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

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}
