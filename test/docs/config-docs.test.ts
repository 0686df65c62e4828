// The README's configuration table is generated from the table of settings
// (src/config/settings.ts, by scripts/gen-config-docs.ts). A setting added, removed or changed
// without `npm run docs` fails here, so CI catches a README that drifted from the code.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { END, README, renderConfigTable, ROOT, START, withConfigTable } from '../../scripts/gen-config-docs.js';
import { configurationHelp, HELP_WIDTH, wrap } from '../../src/cli/config-help.js';
import { KNOWN_VARIABLES, SETTING_ROWS } from '../../src/config.js';

describe('generated configuration table (README.md)', () => {
  const readme = readFileSync(join(ROOT, README), 'utf8');

  it('README.md holds the table between its markers, once', () => {
    assert.equal(readme.split('<!-- config:start').length, 2, 'one start marker');
    assert.equal(readme.split(END).length, 2, 'one end marker');
  });

  it('README.md holds what `npm run docs` generates from src/config/settings.ts', () => {
    const expected = withConfigTable(readme);
    if (expected === readme) return;
    const have = readme.split('\n');
    const want = expected.split('\n');
    const at = want.findIndex((line, i) => have[i] !== line);
    assert.fail(
      `${README}: the configuration table differs from src/config/settings.ts (first at line ${at + 1}: ` +
        `${JSON.stringify(have[at])} instead of ${JSON.stringify(want[at])}): run \`npm run docs\` and commit the result`,
    );
  });

  it('the table has a row for every variable, in the order of the settings', () => {
    const table = renderConfigTable();
    assert.ok(table.startsWith(START) && table.endsWith(END));
    const variables = [...table.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]);
    assert.deepEqual(variables, [...KNOWN_VARIABLES]);
  });

  it('the generator replaces only what lies between the markers', () => {
    const text = `before\n${START}\nstale\n${END}\nafter\n`;
    assert.equal(withConfigTable(text), `before\n${renderConfigTable()}\nafter\n`);
    assert.throws(() => withConfigTable('no markers'), /markers/);
  });

  it('the help lists every variable of the settings, in lines of at most 80 characters', () => {
    const help = configurationHelp();
    assert.deepEqual(
      [...help.matchAll(/^ {2}([A-Z_]+) \[/gm)].map((m) => m[1]),
      SETTING_ROWS.map((row) => row.setting.variable),
    );
    for (const line of help.split('\n')) assert.ok(line.length <= HELP_WIDTH, `too long for the terminal: ${JSON.stringify(line)}`);
    assert.doesNotMatch(help, /`|\*\*|\]\(/, 'plain text: no Markdown');
  });

  it('the help wraps to the width it is given, continuation lines indented', () => {
    for (const line of configurationHelp(60).split('\n')) assert.ok(line.length <= 60, JSON.stringify(line));
    assert.deepEqual(wrap('aaaa bbbb cccc dddd', 12, '  ', '      '), ['  aaaa bbbb', '      cccc', '      dddd']);
  });
});
