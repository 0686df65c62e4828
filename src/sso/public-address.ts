// Which IP addresses a server-side fetch of a tenant-supplied URL may dial: public unicast only.
// Everything else reaches this host, its network or its cloud (loopback, private ranges, link-local
// with the metadata service at 169.254.169.254, carrier-grade NAT), or is not a real unicast
// destination (documentation, benchmarking, multicast, reserved). Classified with node:net's
// BlockList on canonical addresses, never with string prefixes or the `ip` package, which
// misread exactly the odd spellings attackers use (CVE-2023-42282, CVE-2024-29415).
// Sources: the IANA special-purpose registries (IPv4, IPv6); OWASP SSRF Prevention Cheat Sheet;
// security-tests.md items 87-88.
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 dials the local host on Linux
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT (shared address space)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, with cloud metadata services at 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved; holds the broadcast address 255.255.255.255 too
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
blocked.addAddress('255.255.255.255', 'ipv4'); // named on its own so that the list reads as the registry does

for (const [network, prefix] of [
  // The unspecified address ::, loopback ::1, and the deprecated IPv4-compatible ::a.b.c.d
  // (RFC 4291 2.5.5.1): nothing public lives in ::/96.
  ['::', 96],
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT), local to a translator
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: tunnels to an obfuscated IPv4 address
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/**
 * Whether a fetch must not dial `address` (an IPv4 or IPv6 address as a resolver returns it, a
 * zone index allowed). Anything that is not an IP address is blocked: a classifier that fails
 * open would let an unexpected spelling through.
 */
export function isBlockedAddress(address: string): boolean {
  const ip = address.split('%')[0]!;
  if (isIPv4(ip)) return blocked.check(ip, 'ipv4');
  if (!isIPv6(ip)) return true;
  if (blocked.check(ip, 'ipv6')) return true;
  const embedded = embeddedIpv4(ip);
  return embedded !== undefined && blocked.check(embedded, 'ipv4');
}

/**
 * The IPv4 address an IPv6 address stands for, where dialing it reaches that IPv4 address:
 * IPv4-mapped ::ffff:a.b.c.d (a dual-stack socket dials a.b.c.d), NAT64 64:ff9b::a.b.c.d
 * (RFC 6052: the network's translator dials it), 6to4 2002:aabb:ccdd:: (RFC 3056: a relay
 * tunnels to it). Such an address is exactly as public as the IPv4 address inside.
 */
function embeddedIpv4(ip: string): string | undefined {
  const g = ipv6Groups(ip);
  const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dotted(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!);
  return undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (checked by isIPv6 first), '::' and a dotted tail expanded. */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const hex = (part: string) => (part === '' ? [] : part.split(':').map((h) => Number.parseInt(h, 16)));
  const [head, rest] = text.split('::') as [string, string | undefined];
  if (rest === undefined) return hex(head);
  const before = hex(head);
  const after = hex(rest);
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}
