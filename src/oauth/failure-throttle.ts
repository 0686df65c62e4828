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
// A pair this process has not seen authenticate within the window (a guesser is always such a
// pair) has each attempt counted BEFORE its secret is checked: one conditional upsert per count
// in the database (throttle-store.ts) that counts it only while the count is under its limit, and
// a success gives it back. So however many requests a guesser sends at once, to however many
// processes, at most 10 secrets per pair (and 100 per address) are ever checked; the others are
// answered 429 unchecked. A pair that authenticated here within the window (it held the secret
// from that address) stays off the database: its secret is checked first and a failure counted
// after, as its own count still applies to it. Each process keeps what it learnt (keys that
// reached their limit, pairs that authenticated) and checks that before anything else. Writes on
// the successful path: the first success of a pair in a process and window (its attempt given
// back, the pair trusted), then a success recorded per pair and process every half window.
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

/** An authentication under way (FailureThrottle.begin). */
export interface TokenAttempt {
  readonly caller: Caller;
  /** what was counted before the secret was checked: nothing (a trusted pair), the pair's count
   *  only (a trusted pair that has failed here since it last authenticated), or the pair's and the
   *  address's (a pair not trusted here) */
  readonly counted: 'nothing' | 'pair' | 'both';
  /** ends the attempt's lead of its pair's first attempts in this process, if it leads them */
  readonly settle?: () => void;
}

interface Tables {
  blocked: LRUCache<string, number>;
  trusted: LRUCache<string, number>;
  recorded: LRUCache<string, number>;
  failedHere: LRUCache<string, true>;
}

export class FailureThrottle {
  private readonly pairLimit: number;
  private readonly addressLimit: number;
  private readonly windowMs: number;
  /** the four tables below, made at the first attempt: an LRUCache allocates its whole size at
   *  once (about 20 ms for these four), which every start of the service would pay otherwise */
  private made: Tables | undefined;
  private readonly tableSize: number;
  /** keys known to have reached their limit, and when their window ends (ms) */
  private get blocked(): LRUCache<string, number> {
    return this.tables().blocked;
  }
  /** pairs known to have authenticated within the window, and when last (ms) */
  private get trusted(): LRUCache<string, number> {
    return this.tables().trusted;
  }
  /** when this process last recorded a pair's success in the database (ms) */
  private get recorded(): LRUCache<string, number> {
    return this.tables().recorded;
  }
  /** pairs this process saw fail since their last success here: a success clears their count */
  private get failedHere(): LRUCache<string, true> {
    return this.tables().failedHere;
  }
  /** the first attempt under way of each pair not yet trusted here: the pair's others wait for it */
  private readonly firstAttempts = new Map<string, Promise<void>>();

  constructor(
    private readonly store: TokenThrottleStore,
    private readonly clock: Clock,
    options: ThrottleOptions = {},
  ) {
    this.pairLimit = options.pairLimit ?? PAIR_LIMIT;
    this.addressLimit = options.addressLimit ?? ADDRESS_LIMIT;
    this.windowMs = options.windowMs ?? WINDOW_MS;
    this.tableSize = options.tableSize ?? TABLE_SIZE;
  }

  private tables(): Tables {
    const max = this.tableSize;
    this.made ??= {
      blocked: new LRUCache({ max }),
      trusted: new LRUCache({ max }),
      recorded: new LRUCache({ max }),
      failedHere: new LRUCache({ max }),
    };
    return this.made;
  }

  /** Seconds to wait before authenticating, from what this process learnt; 0 when it may try. Never reads the database. */
  retryAfter(clientId: string, ip: string): number {
    return this.localWait(this.caller(clientId, ip), this.clock.now().getTime());
  }

  /**
   * Before authenticating. Either seconds to wait (the secret is not to be checked), or the
   * attempt to report back with `fail` or `succeed`. A pair not trusted here has its attempt
   * counted now, under the pair's and the address's limits.
   */
  async begin(clientId: string, ip: string): Promise<number | TokenAttempt> {
    const c = this.caller(clientId, ip);
    const now = this.clock.now();
    const wait = this.localWait(c, now.getTime());
    if (wait > 0) return wait;
    if (this.isTrusted(c.pair, now.getTime())) return this.trustedAttempt(c, now);
    // A pair not seen here yet: its first attempt goes alone, the others wait for its verdict. A
    // client starting with a burst of requests then has one counted and checked, and the rest go
    // on as trusted, instead of filling the pair's allowance with attempts that would all succeed.
    // Once the pair has failed here, its attempts are counted without waiting for each other.
    let settle: (() => void) | undefined;
    if (!this.failedHere.has(c.pair)) {
      const first = this.firstAttempts.get(c.pair);
      if (first) {
        await first;
        return this.begin(clientId, ip);
      }
      let resolve!: () => void;
      const lead = new Promise<void>((r) => {
        resolve = r;
      });
      this.firstAttempts.set(c.pair, lead);
      settle = () => {
        if (this.firstAttempts.get(c.pair) === lead) this.firstAttempts.delete(c.pair);
        resolve();
      };
    }
    try {
      const counted = await this.count(c, now);
      if (counted === true) return { caller: c, counted: 'both', ...(settle ? { settle } : {}) };
      settle?.();
      return counted === 'trusted' ? this.trustedAttempt(c, now) : counted;
    } catch (err) {
      settle?.();
      throw err;
    }
  }

  /**
   * A trusted pair's attempt: checked first and counted after while it has not failed here; once
   * it has (someone at its address is guessing, or it lost its secret), each attempt is counted
   * under the pair's limit before it is checked, as an untrusted pair's is (the address's limit
   * still does not apply to it), until it authenticates again.
   */
  private async trustedAttempt(c: Caller, now: Date): Promise<number | TokenAttempt> {
    if (!this.failedHere.has(c.pair)) return { caller: c, counted: 'nothing' };
    const pair = await this.store.reserveTokenAttempt(c.pairKey, this.pairLimit, now, new Date(now.getTime() - this.windowMs));
    if (!pair.counted) {
      this.block(c.pairKey, pair.window);
      return this.waitFor(pair.window, now.getTime());
    }
    if (pair.window.failures >= this.pairLimit) this.block(c.pairKey, pair.window);
    return { caller: c, counted: 'pair' };
  }

  /** Counts an attempt under the address's and the pair's limits: true, or seconds to wait if
   *  either is reached, or 'trusted' (nothing counted) for a pair that authenticated from this
   *  address in another process, learnt when the address's limit refused it. */
  private async count(c: Caller, now: Date): Promise<number | true | 'trusted'> {
    const windowStart = new Date(now.getTime() - this.windowMs);
    const address = await this.store.reserveTokenAttempt(c.addressKey, this.addressLimit, now, windowStart);
    if (!address.counted) {
      // past its limit: a client that authenticated from this address (here or elsewhere) still passes
      await this.learnAddressLimit(c, address.window);
      // trusted elsewhere: its attempt is the trusted path's (counted after, if it fails)
      if (this.isTrusted(c.pair, now.getTime())) return 'trusted';
      return this.waitFor(address.window, now.getTime());
    }
    // the attempt that reaches the address's limit: this process learns it (and who still passes)
    if (address.window.failures >= this.addressLimit) await this.learnAddressLimit(c, address.window);
    const pair = await this.store.reserveTokenAttempt(c.pairKey, this.pairLimit, now, windowStart);
    if (!pair.counted) {
      await this.store.releaseTokenAttempt(c.addressKey);
      this.block(c.pairKey, pair.window);
      return this.waitFor(pair.window, now.getTime());
    }
    if (pair.window.failures >= this.pairLimit) this.block(c.pairKey, pair.window);
    return true;
  }

  /**
   * The attempt failed authentication. What was counted before is its failure; the rest is
   * counted now. A trusted pair's first failures (checked together before any was counted) are
   * answered 429 (seconds returned) rather than confirmed as wrong past the pair's limit.
   */
  async fail(attempt: TokenAttempt): Promise<number> {
    const c = attempt.caller;
    this.failedHere.set(c.pair, true);
    attempt.settle?.();
    if (attempt.counted === 'both') return 0;
    const now = this.clock.now();
    const windowStart = new Date(now.getTime() - this.windowMs);
    // a trusted pair's failure counts for its address too, as every failure does
    await this.store.addTokenFailure(c.addressKey, now, windowStart);
    if (attempt.counted === 'pair') return 0;
    const pair = await this.store.addTokenFailure(c.pairKey, now, windowStart);
    if (pair.failures >= this.pairLimit) this.block(c.pairKey, pair);
    return pair.failures > this.pairLimit ? this.waitFor(pair, now.getTime()) : 0;
  }

  /**
   * The attempt authenticated. A counted attempt is given back (the pair's count cleared: the
   * caller held the secret; the address's count less this attempt) and the pair is trusted here
   * and, through the database, in every process. A trusted pair's success touches the database
   * only to clear a count it failed here, or to record the pair again every half window.
   */
  async succeed(attempt: TokenAttempt): Promise<void> {
    const c = attempt.caller;
    const now = this.clock.now().getTime();
    if (attempt.counted === 'both') {
      try {
        await this.store.clearTokenFailures(c.pairKey);
        await this.store.releaseTokenAttempt(c.addressKey);
        this.blocked.delete(c.pairKey);
        this.failedHere.delete(c.pair);
        await this.record(c, now);
      } finally {
        attempt.settle?.();
      }
      return;
    }
    this.trusted.set(c.pair, now);
    if (this.failedHere.has(c.pair)) {
      this.failedHere.delete(c.pair);
      this.blocked.delete(c.pairKey);
      await this.store.clearTokenFailures(c.pairKey);
    }
    // recorded again before other processes would forget it, so an address limit reached
    // elsewhere still lets this client through there
    if (now - (this.recorded.get(c.pair) ?? 0) >= this.windowMs / 2) await this.record(c, now);
  }

  /** The attempt ended without a verdict on the secret (a fault): a counted attempt is given back. */
  async abandon(attempt: TokenAttempt): Promise<void> {
    try {
      if (attempt.counted === 'nothing') return;
      await this.store.releaseTokenAttempt(attempt.caller.pairKey);
      if (attempt.counted === 'both') await this.store.releaseTokenAttempt(attempt.caller.addressKey);
    } finally {
      attempt.settle?.();
    }
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
