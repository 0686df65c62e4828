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
// Addresses are IPv4 addresses or IPv6 /64 prefixes (address-prefix.ts).
//
// Exact across processes: the counts live in the database (throttle-store.ts) and each failure is
// one atomic upsert, so however many processes a guesser spreads over, at most 10 failures per
// pair and 100 per address are answered as wrong secrets; the others are answered 429. The
// successful path stays off the database: each process keeps what it learnt (keys that reached
// their limit, pairs that authenticated) and checks that before authenticating. It learns a limit
// reached elsewhere at the first failure it counts for that key, or at the first success of a
// pair it has not served in the window, which reads the shared counts before confirming the
// secret. Writes on the successful path: a success recorded per pair and process every half
// window, and a count cleared when this process saw that pair fail. A request refused as
// throttled writes nothing.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { possibleClientId } from '../credentials/model.js';
import { addressPrefix } from './address-prefix.js';
import type { FailureWindow, TokenThrottleStore } from './throttle-store.js';

export const PAIR_LIMIT = 10;
export const ADDRESS_LIMIT = 100;
export const WINDOW_MS = 5 * 60_000;
/** entries per table of what this process learnt; the counts themselves are in the database */
export const TABLE_SIZE = 50_000;

export interface ThrottleOptions {
  pairLimit?: number;
  addressLimit?: number;
  windowMs?: number;
  tableSize?: number;
}

interface Caller {
  clientId: string;
  address: string;
  /** `<client id> <address>`: an address never contains a space, so the last space separates them */
  pair: string;
  pairKey: string;
  addressKey: string;
}

export class FailureThrottle {
  private readonly pairLimit: number;
  private readonly addressLimit: number;
  private readonly windowMs: number;
  /** keys known to have reached their limit, and when their window ends (ms) */
  private readonly blocked: LRUCache<string, number>;
  /** pairs known to have authenticated within the window, and when last (ms) */
  private readonly trusted: LRUCache<string, number>;
  /** when this process last recorded a pair's success in the database (ms) */
  private readonly recorded: LRUCache<string, number>;
  /** pairs this process saw fail since their last success here: a success clears their count */
  private readonly failedHere: LRUCache<string, true>;
  /** first successes being checked against the database, one per pair at a time */
  private readonly checking = new Map<string, Promise<number>>();

  constructor(
    private readonly store: TokenThrottleStore,
    private readonly clock: Clock,
    options: ThrottleOptions = {},
  ) {
    this.pairLimit = options.pairLimit ?? PAIR_LIMIT;
    this.addressLimit = options.addressLimit ?? ADDRESS_LIMIT;
    this.windowMs = options.windowMs ?? WINDOW_MS;
    const max = options.tableSize ?? TABLE_SIZE;
    this.blocked = new LRUCache({ max });
    this.trusted = new LRUCache({ max });
    this.recorded = new LRUCache({ max });
    this.failedHere = new LRUCache({ max });
  }

  /** Before authenticating: seconds to wait, or 0 when the caller may try. Never reads the database. */
  retryAfter(clientId: string, ip: string): number {
    return this.localWait(this.caller(clientId, ip), this.clock.now().getTime());
  }

  /**
   * Counts a failed authentication. Returns seconds to wait when this failure went past a limit
   * (requests that passed `retryAfter` together, or in other processes, then failed), so it is
   * answered 429 rather than confirmed as a wrong secret; else 0.
   */
  async fail(clientId: string, ip: string): Promise<number> {
    const c = this.caller(clientId, ip);
    const now = this.clock.now();
    const windowStart = new Date(now.getTime() - this.windowMs);
    const address = await this.store.addTokenFailure(c.addressKey, now, windowStart);
    if (address.failures >= this.addressLimit) await this.learnAddressLimit(c, address);
    // an address past its limit adds no pair counts, so a burst of junk ids cannot add rows either
    if (address.failures > this.addressLimit && !this.isTrusted(c.pair, now.getTime())) return this.waitFor(address, now.getTime());
    const pair = await this.store.addTokenFailure(c.pairKey, now, windowStart);
    this.failedHere.set(c.pair, true);
    if (pair.failures >= this.pairLimit) this.block(c.pairKey, pair);
    return pair.failures > this.pairLimit ? this.waitFor(pair, now.getTime()) : 0;
  }

  /**
   * A successful authentication. If a limit was reached meanwhile (here or, for a pair not served
   * here in the window, anywhere), it is answered 429 like the failures (a correct guess inside a
   * burst is not confirmed); else the pair's count is cleared and 0 returned. The address's count
   * stays.
   */
  async succeed(clientId: string, ip: string): Promise<number> {
    const c = this.caller(clientId, ip);
    const now = this.clock.now().getTime();
    const wait = this.localWait(c, now);
    if (wait > 0) return wait;
    if (this.isTrusted(c.pair, now)) {
      this.trusted.set(c.pair, now);
      if (this.failedHere.has(c.pair)) {
        this.failedHere.delete(c.pair);
        await this.store.clearTokenFailures(c.pairKey);
      }
      // recorded again before other processes would forget it, so an address limit reached
      // elsewhere still lets this client through there
      if (now - (this.recorded.get(c.pair) ?? 0) >= this.windowMs / 2) await this.record(c, now);
      return 0;
    }
    // the pair's first success in this process and window: the shared counts decide
    let check = this.checking.get(c.pair);
    if (!check) {
      check = this.firstSuccess(c).finally(() => this.checking.delete(c.pair));
      this.checking.set(c.pair, check);
    }
    return check;
  }

  private async firstSuccess(c: Caller): Promise<number> {
    const now = this.clock.now();
    const found = await this.store.findTokenFailures([c.pairKey, c.addressKey], new Date(now.getTime() - this.windowMs));
    const pair = found.get(c.pairKey);
    if (pair && pair.failures >= this.pairLimit) {
      this.block(c.pairKey, pair);
      return this.waitFor(pair, now.getTime());
    }
    const address = found.get(c.addressKey);
    if (address && address.failures >= this.addressLimit) {
      await this.learnAddressLimit(c, address);
      if (!this.isTrusted(c.pair, now.getTime())) return this.waitFor(address, now.getTime());
    }
    if (pair) await this.store.clearTokenFailures(c.pairKey);
    this.failedHere.delete(c.pair);
    await this.record(c, now.getTime());
    return 0;
  }

  private async record(c: Caller, now: number): Promise<void> {
    await this.store.trustTokenClient(c.address, c.clientId, new Date(now));
    this.trusted.set(c.pair, now);
    this.recorded.set(c.pair, now);
  }

  /** An address reached its limit: remember it, and which clients authenticated from it (they pass). */
  private async learnAddressLimit(c: Caller, address: FailureWindow): Promise<void> {
    const known = this.blocked.get(c.addressKey);
    if (known !== undefined && known > this.clock.now().getTime()) return;
    this.block(c.addressKey, address);
    for (const t of await this.store.trustedTokenClients(c.address, new Date(this.clock.now().getTime() - this.windowMs))) {
      const pair = `${t.clientId} ${c.address}`;
      this.trusted.set(pair, Math.max(this.trusted.get(pair) ?? 0, t.at.getTime()));
    }
  }

  private localWait(c: Caller, now: number): number {
    const pairWait = this.blockWait(c.pairKey, now);
    return this.isTrusted(c.pair, now) ? pairWait : Math.max(this.blockWait(c.addressKey, now), pairWait);
  }

  private block(key: string, w: FailureWindow): void {
    this.blocked.set(key, w.since.getTime() + this.windowMs);
  }

  private blockWait(key: string, now: number): number {
    const until = this.blocked.get(key);
    if (until === undefined) return 0;
    if (until <= now) {
      this.blocked.delete(key);
      return 0;
    }
    return Math.max(1, Math.ceil((until - now) / 1000));
  }

  private waitFor(w: FailureWindow, now: number): number {
    return Math.max(1, Math.ceil((w.since.getTime() + this.windowMs - now) / 1000));
  }

  private isTrusted(pair: string, now: number): boolean {
    const at = this.trusted.get(pair);
    return at !== undefined && now - at < this.windowMs;
  }

  private caller(clientId: string, ip: string): Caller {
    const address = addressPrefix(ip);
    // client ids the credential service refuses unseen (too long, NUL) share one key, the empty one
    const id = possibleClientId(clientId) ? clientId : '';
    const pair = `${id} ${address}`;
    return { clientId: id, address, pair, pairKey: `pair:${pair}`, addressKey: `address:${address}` };
  }
}
