// The address classifier behind the metadata fetch (security-tests.md items 87-88): every
// special-purpose range is refused, at its edges too, IPv6 forms that reach an IPv4 address are
// judged by that address, and anything that is not an IP address fails closed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBlockedAddress } from '../../src/sso/safe-fetch.js';
import { BLOCKED_RANGES } from './blocked-ranges.js';

describe('isBlockedAddress', () => {
  for (const { range, inside, outside } of BLOCKED_RANGES) {
    it(`blocks ${range}`, () => {
      for (const address of inside) assert.equal(isBlockedAddress(address), true, `${address} is in ${range}`);
      for (const address of outside) assert.equal(isBlockedAddress(address), false, `${address} is outside ${range}`);
    });
  }

  it('lets public unicast addresses through, IPv4 and IPv6', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.215.14',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2a00:1450:4001:82b::200e',
      '2001:4860::8888',
    ]) {
      assert.equal(isBlockedAddress(address), false, address);
    }
  });

  it('blocks the further special-purpose ranges: IPv4-compatible, local NAT64, Teredo, site-local, documentation 3fff::/20', () => {
    for (const address of ['::127.0.0.1', '::8.8.8.8', '::ffff:0:a00:1', '64:ff9b:1::1', '2001::1', '2001:2::1', 'fec0::1', '3fff::1']) {
      assert.equal(isBlockedAddress(address), true, address);
    }
  });

  it('fails closed on whatever is not an IP address: names, odd spellings a resolver would never return, empty', () => {
    for (const text of [
      '',
      'localhost',
      'example.com',
      '0177.0.0.1',
      '0x7f.0.0.1',
      '127.1',
      '2130706433',
      '1.2.3.4.5',
      '[::1]',
      '::1::',
      'fe80::1%',
    ]) {
      assert.equal(isBlockedAddress(text), true, JSON.stringify(text));
    }
  });
});
