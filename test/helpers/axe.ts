// Accessibility checks of a page as the browser drew it: axe-core (the npm package) run inside
// the page by Chromium's own evaluation (the page's CSP, which allows no inline script, does not
// apply to it, so the page is checked exactly as served). A serious or critical violation fails
// the test, each named with its rule, its help and the elements it found.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core on the page (WCAG 2.1 A and AA, and best practices); fails on a serious or critical violation. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  const violations = (await page.evaluate(
    `(async () => {
      if (!window.axe) { ${AXE_SOURCE}\n }
      const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
    })()`,
  )) as Violation[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `${what}: axe-core found serious or critical accessibility violations`,
  );
}
