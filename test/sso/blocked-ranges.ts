// The ranges the metadata fetch must refuse, with sample addresses: read by the classifier's
// tests and by the fetch's (each sample as a URL literal).

/** Each blocked range with addresses inside it (first, an inside one, last) and just outside it. */
export const BLOCKED_RANGES: { range: string; inside: string[]; outside: string[] }[] = [
  { range: '0.0.0.0/8', inside: ['0.0.0.0', '0.1.2.3', '0.255.255.255'], outside: ['1.0.0.0'] },
  { range: '10.0.0.0/8', inside: ['10.0.0.0', '10.1.2.3', '10.255.255.255'], outside: ['9.255.255.255', '11.0.0.0'] },
  { range: '100.64.0.0/10', inside: ['100.64.0.0', '100.100.100.100', '100.127.255.255'], outside: ['100.63.255.255', '100.128.0.0'] },
  { range: '127.0.0.0/8', inside: ['127.0.0.0', '127.0.0.1', '127.255.255.255'], outside: ['126.255.255.255', '128.0.0.0'] },
  { range: '169.254.0.0/16', inside: ['169.254.0.0', '169.254.169.254', '169.254.255.255'], outside: ['169.253.255.255', '169.255.0.0'] },
  { range: '172.16.0.0/12', inside: ['172.16.0.0', '172.20.1.1', '172.31.255.255'], outside: ['172.15.255.255', '172.32.0.0'] },
  { range: '192.0.0.0/24', inside: ['192.0.0.0', '192.0.0.8', '192.0.0.255'], outside: ['192.0.1.0'] },
  { range: '192.0.2.0/24', inside: ['192.0.2.0', '192.0.2.1', '192.0.2.255'], outside: ['192.0.3.0'] },
  { range: '192.168.0.0/16', inside: ['192.168.0.0', '192.168.1.1', '192.168.255.255'], outside: ['192.167.255.255', '192.169.0.0'] },
  { range: '198.18.0.0/15', inside: ['198.18.0.0', '198.19.1.1', '198.19.255.255'], outside: ['198.17.255.255', '198.20.0.0'] },
  { range: '198.51.100.0/24', inside: ['198.51.100.0', '198.51.100.7', '198.51.100.255'], outside: ['198.51.99.255', '198.51.101.0'] },
  { range: '203.0.113.0/24', inside: ['203.0.113.0', '203.0.113.9', '203.0.113.255'], outside: ['203.0.112.255', '203.0.114.0'] },
  { range: '224.0.0.0/4', inside: ['224.0.0.0', '239.1.2.3', '239.255.255.255'], outside: ['223.255.255.255'] },
  { range: '240.0.0.0/4', inside: ['240.0.0.0', '250.1.2.3', '255.255.255.254'], outside: [] },
  { range: '255.255.255.255/32', inside: ['255.255.255.255'], outside: [] },
  { range: '::/128', inside: ['::', '0:0:0:0:0:0:0:0'], outside: [] },
  { range: '::1/128', inside: ['::1', '0:0:0:0:0:0:0:1'], outside: [] },
  {
    range: '::ffff:0:0/96 (IPv4-mapped, blocked v4 inside)',
    inside: ['::ffff:127.0.0.1', '::ffff:7f00:1', '::FFFF:10.0.0.1', '::ffff:169.254.169.254'],
    outside: ['::ffff:8.8.8.8'],
  },
  {
    range: '64:ff9b::/96 (NAT64, blocked v4 inside)',
    inside: ['64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b::c0a8:101'],
    outside: ['64:ff9b::8.8.8.8', '64:ff9b::808:808'],
  },
  { range: '100::/64', inside: ['100::', '100::1', '100::ffff:ffff:ffff:ffff'], outside: ['100:0:0:1::'] },
  { range: '2001:db8::/32', inside: ['2001:db8::', '2001:db8:1::1', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'], outside: ['2001:db9::1'] },
  {
    range: 'fc00::/7',
    inside: ['fc00::', 'fd12:3456:789a::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
    outside: ['fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  },
  { range: 'fe80::/10', inside: ['fe80::', 'fe80::1', 'fe80::1%eth0', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], outside: [] },
  { range: 'ff00::/8', inside: ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'], outside: [] },
  { range: '2002::/16 (6to4, blocked v4 inside)', inside: ['2002:7f00:1::', '2002:a9fe:a9fe::1', '2002:0a00:0001::'], outside: ['2002:808:808::1'] },
];
