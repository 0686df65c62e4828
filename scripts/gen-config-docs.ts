// The README's configuration table, built from the table of settings (src/config/settings.ts):
// every variable with its default, the values it accepts and what it is for (with the notes and
// the rules over several settings). `npm run docs` rewrites the part of README.md between the
// markers; test/docs/config-docs.test.ts renders it again in memory and fails when the README
// differs, so the documentation cannot drift from the settings.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTING_ROWS, type SettingRow } from '../src/config.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const README = 'README.md';
export const START = '<!-- config:start: generated from src/config/settings.ts by `npm run docs`; edit the settings there -->';
export const END = '<!-- config:end -->';

/** A table cell: one line, pipes escaped. */
const cell = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');

function rowLine({ setting: s, rules }: SettingRow): string {
  const meaning = [s.description, ...rules, ...(s.note ? [s.note] : []), ...(s.example ? [`e.g. \`${s.example}\``] : [])].join('; ');
  return `| \`${s.variable}\`${s.secret ? ' (secret)' : ''} | ${cell(s.shownDefault)} | ${cell(s.accepts)} | ${cell(meaning)} |`;
}

/** The table, markers included. */
export function renderConfigTable(rows: readonly SettingRow[] = SETTING_ROWS): string {
  return [START, '', '| Variable | Default | Values | Meaning |', '|---|---|---|---|', ...rows.map(rowLine), '', END].join('\n');
}

/** The README with its configuration table (between the markers) rendered afresh. */
export function withConfigTable(readme: string, rows: readonly SettingRow[] = SETTING_ROWS): string {
  const start = readme.indexOf('<!-- config:start');
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${README}: no "<!-- config:start … -->" … "${END}" markers around the configuration table`);
  return readme.slice(0, start) + renderConfigTable(rows) + readme.slice(end + END.length);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const path = join(ROOT, README);
  const before = readFileSync(path, 'utf8');
  const after = withConfigTable(before);
  if (after !== before) writeFileSync(path, after);
  process.stdout.write(`${after === before ? 'unchanged' : 'wrote'} ${README} (configuration table)\n`);
}
