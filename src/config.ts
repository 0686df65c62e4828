// Configuration: read once from the environment (a command-line flag of the same name may
// override), validated in one place, by the table of settings in config/settings.ts. Every
// problem is reported at once, one line per variable, in the order of the table.
import { DERIVED_DEFAULTS, RULES, SETTING_ROWS, type Config, type RuleContext, type Variable } from './config/settings.js';
import { quoted } from './text.js';

export {
  type Config,
  LOG_LEVELS,
  REGIONS,
  type Region,
  RULES,
  SETTING_ROWS,
  SETTINGS,
  type Setting,
  type SettingRow,
  type Variable,
} from './config/settings.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

type Source = Record<string, string | undefined>;

/** Every environment variable of the table, in its order. */
export const KNOWN_VARIABLES: readonly Variable[] = SETTING_ROWS.map((row) => row.setting.variable as Variable);

/** Turns `--port 9000`, `--port=9000` or `--data-dir x` into variables (PORT, GATEHOUSE_DATA_DIR). */
export function flagsToVariables(args: string[], known: readonly string[] = KNOWN_VARIABLES): { vars: Source; rest: string[] } {
  const vars: Source = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/i.exec(arg);
    if (!m) {
      rest.push(arg);
      continue;
    }
    const base = m[1]!.toUpperCase().replace(/-/g, '_');
    const name = known.includes(base) ? base : known.includes(`GATEHOUSE_${base}`) ? `GATEHOUSE_${base}` : undefined;
    if (!name) {
      rest.push(arg);
      continue;
    }
    if (m[2] !== undefined) vars[name] = m[2];
    else if (i + 1 < args.length) vars[name] = args[++i];
    else vars[name] = '';
  }
  return { vars, rest };
}

/** `serving`: validate for `gatehouse serve`, which needs more than `gatehouse migrate`. */
export function loadConfig(env: Source = process.env, overrides: Source = {}, opts: { serving?: boolean } = {}): Config {
  const src: Source = { ...env, ...overrides };
  // an empty variable is an unset one
  const get = (name: string): string | undefined => {
    const v = src[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const problems: { at: number; line: string }[] = [];
  const invalid = new Set<string>();
  const values: Record<string, unknown> = {};
  const put = (path: readonly string[], value: unknown) => {
    let into = values;
    for (const key of path.slice(0, -1)) {
      into[key] ??= {};
      into = into[key] as Record<string, unknown>;
    }
    into[path.at(-1)!] = value;
  };

  // every row: its variable's value, or its default (an invalid value is reported, and the
  // default stands in so that the rows derived from it can still be computed)
  const derived: (typeof SETTING_ROWS)[number][] = [];
  for (const [at, row] of SETTING_ROWS.entries()) {
    const { variable, secret, fallback } = row.setting;
    const raw = get(variable);
    if (raw !== undefined) {
      const parsed = row.setting.parse(raw);
      if ('value' in parsed) {
        put(row.path, parsed.value);
        continue;
      }
      invalid.add(variable);
      problems.push({ at, line: `${variable}: ${parsed.problem}${secret ? '' : `, got ${quoted(raw, 100)}`}` });
    }
    if (fallback === 'derived') {
      derived.push(row);
      put(row.path, undefined); // its place, in table order
    } else put(row.path, Array.isArray(fallback.value) ? [...fallback.value] : fallback.value);
  }
  const defaults = DERIVED_DEFAULTS as Record<string, ((c: Config) => unknown) | undefined>;
  for (const row of derived) {
    const derive = defaults[row.path.join('.')];
    if (!derive) throw new Error(`config: no derived default for ${row.setting.variable}`);
    put(row.path, derive(values as unknown as Config));
  }
  const config = values as unknown as Config;

  const ctx: RuleContext = {
    serving: opts.serving === true,
    isSet: (variable) => get(variable) !== undefined,
    valid: (variable) => !invalid.has(variable),
  };
  for (const rule of RULES) {
    const problem = rule.check(config, ctx);
    if (problem === undefined) continue;
    const at = SETTING_ROWS.findIndex((row) => row.setting.variable === rule.variables[0]);
    problems.push({ at, line: `${rule.variables.join(' and ')}: ${problem}` });
  }

  if (problems.length > 0) throw new ConfigError(problems.sort((a, b) => a.at - b.at).map((p) => p.line));
  return config;
}
