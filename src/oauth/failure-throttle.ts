// Slows down secret guessing at the token endpoint. Only failed client authentications count,
// so a client that authenticates correctly is never throttled by its own requests, however many
// it runs at once. Two counts, each over a 5-minute window from its first failure:
//
// - per (client_id, address): 10 failures, then that pair gets 429. The address is part of the
//   key, so a guesser cannot lock the real client out from elsewhere (no lockout as a denial of
//   service). A success clears this count: the caller held the secret.
// - per address: 100 failures whatever the client ids, then the address gets 429 for every
//   client that has not authenticated from it within the window. This stops junk client ids from
//   one address, and bounds what one address can try in all. A success does not clear it: a
//   guesser could interleave successes of a client of its own. But a client that did succeed
//   from that address in the window keeps being served (only its own pair count applies), so one
//   failing client behind a shared address (a NAT, a CI egress) cannot lock out its neighbours.
//
// Addresses are IPv4 addresses or IPv6 /64 prefixes (address-prefix.ts). A request refused as
// throttled adds nothing to either table. Kept per process: a bound on guessing speed.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { possibleClientId } from '../credentials/model.js';
import { addressPrefix } from './address-prefix.js';
import { FailureCounts } from './failure-counts.js';

export const PAIR_LIMIT = 10;
export const ADDRESS_LIMIT = 100;
export const WINDOW_MS = 5 * 60_000;
/** keys per table; each of the five tables is bounded by it */
export const TABLE_SIZE = 50_000;

export interface ThrottleOptions {
  pairLimit?: number;
  addressLimit?: number;
  windowMs?: number;
  tableSize?: number;
}

export class FailureThrottle {
  private readonly pairs: FailureCounts;
  private readonly addresses: FailureCounts;
  /** pairs that authenticated within the window, and when: the address limit passes them by */
  private readonly trusted: LRUCache<string, number>;
  private readonly windowMs: number;

  constructor(
    private readonly clock: Clock,
    options: ThrottleOptions = {},
  ) {
    const windowMs = options.windowMs ?? WINDOW_MS;
    const tableSize = options.tableSize ?? TABLE_SIZE;
    this.pairs = new FailureCounts(options.pairLimit ?? PAIR_LIMIT, windowMs, tableSize);
    this.addresses = new FailureCounts(options.addressLimit ?? ADDRESS_LIMIT, windowMs, tableSize);
    this.trusted = new LRUCache({ max: tableSize });
    this.windowMs = windowMs;
  }

  private isTrusted(pair: string, now: number): boolean {
    const at = this.trusted.get(pair);
    return at !== undefined && now - at < this.windowMs;
  }

  private keys(clientId: string, ip: string): { pair: string; address: string } {
    const address = addressPrefix(ip);
    // client ids the credential service refuses unseen (empty, too long, NUL) share one key
    const id = possibleClientId(clientId) ? clientId : '\u0000';
    // an address never contains a space, so the last space separates the two parts
    return { pair: `${id} ${address}`, address };
  }

  /** Before authenticating: seconds to wait, or 0 when the caller may try. */
  retryAfter(clientId: string, ip: string): number {
    const { pair, address } = this.keys(clientId, ip);
    const now = this.clock.now().getTime();
    const pairWait = this.pairs.retryAfter(pair, now);
    return this.isTrusted(pair, now) ? pairWait : Math.max(this.addresses.retryAfter(address, now), pairWait);
  }

  /**
   * Counts a failed authentication. Returns seconds to wait when this failure went past a limit
   * (requests that passed `retryAfter` together, then failed), so it is answered 429 rather than
   * confirmed as a wrong secret; else 0.
   */
  fail(clientId: string, ip: string): number {
    const { pair, address } = this.keys(clientId, ip);
    const now = this.clock.now().getTime();
    // an address past its limit adds no pair entries, so a burst cannot fill the pair table either
    const overAddress = this.addresses.add(address, now) > this.addresses.limit;
    if (overAddress && !this.isTrusted(pair, now)) return this.addresses.retryAfter(address, now);
    if (this.pairs.add(pair, now) > this.pairs.limit) return this.pairs.retryAfter(pair, now);
    return 0;
  }

  /**
   * A successful authentication. If failures of others reached a limit while it was checked, it is
   * answered 429 like them (a correct guess inside a burst is not confirmed); else it clears the
   * pair's count and returns 0. The address's count stays.
   */
  succeed(clientId: string, ip: string): number {
    const wait = this.retryAfter(clientId, ip);
    if (wait === 0) {
      const { pair } = this.keys(clientId, ip);
      this.pairs.clear(pair);
      this.trusted.set(pair, this.clock.now().getTime());
    }
    return wait;
  }

  /** Keys held, for tests and diagnostics. */
  get size(): { pairs: number; addresses: number } {
    return { pairs: this.pairs.size, addresses: this.addresses.size };
  }
}
