// The kinds of value a setting takes (src/config/settings.ts): each parses the text of an
// environment variable and says, in words, what it accepts. The words serve twice: in the
// problem an invalid value gets ("must be …") and in the help and the README ("accepts …").
import { isIP } from 'node:net';
import { TEXT_LIMITS } from '../text.js';

export type Parsed<T> = { value: T } | { problem: string };

export interface Kind<T> {
  /** the accepted values, for `gatehouse serve --help` and the README (backticks mark literals) */
  accepts: string;
  /** the value, or what is wrong with the text (completing "VARIABLE: …"); `raw` is never empty */
  parse(raw: string): Parsed<T>;
}

/** A whole number from `min` to `max`, in decimal digits only (no sign, no spaces, no unit). */
export function integer(min: number, max: number): Kind<number> {
  return {
    accepts: `a whole number from ${min} to ${max}`,
    parse: (raw) =>
      /^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max
        ? { value: Number(raw) }
        : { problem: `must be a whole number from ${min} to ${max}` },
  };
}

/** true/1/yes or false/0/no, in any case. */
export const boolean: Kind<boolean> = {
  accepts: '`true` or `false` (also `1`/`0`, `yes`/`no`)',
  parse: (raw) =>
    /^(true|1|yes)$/i.test(raw) ? { value: true } : /^(false|0|no)$/i.test(raw) ? { value: false } : { problem: 'must be true or false' },
};

/** One of a fixed list, exactly as written. */
export function oneOf<const V extends string>(values: readonly V[]): Kind<V> {
  return {
    accepts: values.map((v) => `\`${v}\``).join(' '),
    parse: (raw) => ((values as readonly string[]).includes(raw) ? { value: raw as V } : { problem: `must be one of ${values.join(' ')}` }),
  };
}

/** Any text; `check` adds a rule (it returns what is wrong, or undefined). */
export function text(accepts: string, check: (raw: string) => string | undefined = () => undefined): Kind<string> {
  return {
    accepts,
    parse: (raw) => {
      const problem = check(raw);
      return problem === undefined ? { value: raw } : { problem };
    },
  };
}

/** An http(s) URL without query or fragment, within the interfaces' URL limit; a trailing slash is dropped. */
export const httpUrl: Kind<string> = {
  accepts: `an http(s) URL without query or fragment, at most ${TEXT_LIMITS.url} characters`,
  parse: (raw) => {
    const problem = { problem: `must be an http(s) URL of at most ${TEXT_LIMITS.url} characters without query or fragment` };
    if (raw.length > TEXT_LIMITS.url || !URL.canParse(raw)) return problem;
    const u = new URL(raw);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash) return problem;
    return { value: raw.replace(/\/+$/, '') };
  },
};

/** A PostgreSQL connection string (postgres:// or postgresql://). */
export const postgresUrl: Kind<string> = {
  accepts: 'a `postgres://` or `postgresql://` connection string',
  parse: (raw) => (/^postgres(ql)?:\/\//.test(raw) ? { value: raw } : { problem: 'must start with postgres:// or postgresql://' }),
};

/** How to make an encryption key, named wherever one is missing or wrong. */
export const MAKE_KEY = 'openssl rand -hex 32';

/** One 32-byte key (64 hex digits or base64), or a comma-separated list of them: the first seals, all unseal. */
export const encryptionKeys: Kind<Buffer[]> = {
  accepts: `32 bytes as 64 hex digits or base64 (make one with \`${MAKE_KEY}\`), or a comma-separated list of such keys`,
  parse: (raw) => {
    const entries = raw.split(',').map((e) => e.trim());
    const keys: { key: Buffer; position: number }[] = [];
    const issues: string[] = [];
    // a problem names a key by its position only: the value is a secret
    const which = (i: number) => (entries.length === 1 ? 'the key' : `key ${i + 1} of ${entries.length}`);
    for (const [i, entry] of entries.entries()) {
      const decoded = /^[0-9a-f]{64}$/i.test(entry)
        ? Buffer.from(entry, 'hex')
        : /^[A-Za-z0-9+/_-]+={0,2}$/.test(entry)
          ? Buffer.from(entry, 'base64')
          : Buffer.alloc(0);
      const same = keys.find((k) => k.key.equals(decoded));
      if (entry === '') issues.push(`${which(i)} is empty`);
      else if (decoded.length !== 32) issues.push(`${which(i)} is not 32 bytes as 64 hex digits or base64`);
      else if (same) issues.push(`${which(i)} repeats key ${same.position + 1}`);
      else keys.push({ key: decoded, position: i });
    }
    if (issues.length > 0) return { problem: `${issues.join('; ')} (make a key with: ${MAKE_KEY})` };
    return { value: keys.map((k) => k.key) };
  },
};

/** Fastify's trustProxy: false | true | a hop count | a comma list of proxy addresses or CIDRs. */
export const trustProxy: Kind<boolean | number | string[]> = {
  accepts: '`false`, `true` (any), a hop count, or a comma list of proxy addresses/CIDRs',
  parse: (raw) => {
    if (/^(true|false)$/i.test(raw)) return { value: /^true$/i.test(raw) };
    if (/^\d{1,2}$/.test(raw)) return { value: Number(raw) };
    const list = raw.replace(/\s/g, '');
    if (/^[0-9a-f.:/]+(,[0-9a-f.:/]+)*$/i.test(list)) return { value: list.split(',') };
    return { problem: 'must be true, false, a hop count, or a comma list of proxy addresses' };
  },
};

/** A comma list of DNS servers: IPv4 or IPv6 addresses (an IPv6 one in brackets when a port follows), each with an optional port. */
export const dnsServers: Kind<string[]> = {
  accepts: 'a comma list of DNS server addresses, each `IP` or `IP:PORT` (IPv6 as `[IP]:PORT`)',
  parse: (raw) => {
    const servers = raw.split(',').map((s) => s.trim());
    const bad = servers.filter((s) => {
      const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(s) ?? /^([0-9a-f:]+)()$/i.exec(s);
      if (!m) return true;
      const port = m[2] ? Number(m[2]) : 53;
      return isIP(m[1]!) === 0 || port < 1 || port > 65535;
    });
    if (bad.length > 0)
      return { problem: `must be IP addresses, each with an optional port (IPv6 as [IP]:PORT); not ${bad.map((b) => JSON.stringify(b)).join(', ')}` };
    return { value: servers };
  },
};
