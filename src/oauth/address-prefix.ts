// The part of a client address that the guessing throttle counts by. An IPv4 address counts on
// its own; an IPv6 address by its /64, because one host is routinely given a whole /64 and could
// otherwise start afresh with every address in it.
import { isIPv4, isIPv6 } from 'node:net';

/** The eight 16-bit groups of a valid IPv6 address without a zone id. */
function ipv6Groups(address: string): number[] {
  // an IPv4 tail (::ffff:192.0.2.1) stands for the last two groups
  const text = address.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_m, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`,
  );
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const [head, tail] = text.split('::') as [string, string | undefined];
  if (tail === undefined) return parse(head);
  const before = parse(head);
  const after = parse(tail);
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

export function addressPrefix(ip: string): string {
  if (isIPv4(ip)) return ip;
  const bare = ip.replace(/%.*$/, '');
  if (isIPv6(bare)) {
    const g = ipv6Groups(bare);
    // an IPv4-mapped address (::ffff:a.b.c.d, as a dual-stack socket reports IPv4 callers) is that IPv4 address
    if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.${g[7]! & 0xff}`;
    return `${g
      .slice(0, 4)
      .map((x) => x.toString(16))
      .join(':')}::/64`;
  }
  // not an address (a trusted proxy forwarded something else): bounded, so it cannot grow the tables' keys
  return `?${ip.slice(0, 64)}`;
}
