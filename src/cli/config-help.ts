// The configuration section of `gatehouse serve --help` (not of `gatehouse --help`, whose client
// commands read none of it), generated from the table of settings (src/config/settings.ts) and
// wrapped for an 80-column terminal: each variable with its default in brackets, then what it is
// for, the values it accepts, and the rules it takes part in. The README's table comes from the same rows (scripts/gen-config-docs.ts).
import { SETTING_ROWS, type SettingRow, type Variable } from '../config.js';

export const HELP_WIDTH = 80;
const INDENT = '      ';

/** The table's light Markdown as plain text: no backticks, no bold, a link as its text. */
export function plain(markdown: string): string {
  return markdown
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\*\*([^*]+)\*\*/g, '$1')
    .replace(/`([^`]*)`/g, '$1');
}

/**
 * `text` in lines of at most `width` characters (a longer word stands alone): the first line
 * starts with `indent`, the others with `hanging` (by default the same).
 */
export function wrap(text: string, width: number, indent = '', hanging = indent): string[] {
  const lines: string[] = [];
  let line = '';
  const prefix = () => (lines.length === 0 ? indent : hanging);
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && prefix().length + line.length + 1 + word.length > width) {
      lines.push(prefix() + line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(prefix() + line);
  return lines;
}

/** One setting: `  NAME [default]`, then what it is for, the values it accepts and its rules, indented. */
export function settingHelp(row: SettingRow, width = HELP_WIDTH): string[] {
  const { variable, description, accepts, shownDefault } = row.setting;
  return [
    ...wrap(`${variable} [${plain(shownDefault)}]`, width, '  ', INDENT),
    ...[description, `values: ${accepts}`, ...row.rules].flatMap((paragraph) => wrap(plain(paragraph), width, INDENT)),
  ];
}

const INTRO =
  'Configuration is read from the environment (an empty variable counts as unset); a flag of the same name ' +
  'overrides it, e.g. --port 9000 (PORT), --database-url URL (DATABASE_URL), --data-dir DIR (GATEHOUSE_DATA_DIR). ' +
  'Defaults are in brackets. Every setting is described in the README (Configuration).';

/** The help of the named settings, in table order. */
export function settingsHelp(variables: readonly Variable[], width = HELP_WIDTH): string {
  const rows = SETTING_ROWS.filter((row) => variables.includes(row.setting.variable as Variable));
  return `${rows.flatMap((row) => settingHelp(row, width)).join('\n')}\n`;
}

/** The configuration section: how settings are given, then every setting of the table. */
export function configurationHelp(width = HELP_WIDTH): string {
  return `${[...wrap(INTRO, width), '', ...SETTING_ROWS.flatMap((row) => settingHelp(row, width))].join('\n')}\n`;
}
