// How many SAML responses one address may have this process verify (docs/sso.md, "Limits of the
// ACS"). The ACS takes posts from anyone: each costs parsing and signature checks before it can be
// refused, so without a limit a few addresses posting at once would keep the event loop busy and
// slow every other page. Two limits per address, in this process's memory (the cost is this
// process's CPU, so another process's count would not matter):
//
// - at most MAX_IN_FLIGHT posts being verified at once;
// - at most PER_MINUTE a minute: a bucket of PER_MINUTE that refills one every 60/PER_MINUTE s, so
//   a burst is allowed and a steady stream is held to the rate.
//
// The address is the caller's IPv4 address or IPv6 /64 (oauth/address-prefix.ts), as the sign-in
// and token throttles count. A refused post is told how many seconds to wait.
import { LRUCache } from 'lru-cache';

/** Posts from one address being verified at once. */
export const MAX_IN_FLIGHT = 2;
/** Posts from one address a minute (the bucket's size). */
export const PER_MINUTE = 30;
/** Addresses remembered; the least recently seen is forgotten first. */
const TABLE_SIZE = 50_000;

interface Bucket {
  tokens: number;
  /** when tokens was last brought up to date (ms) */
  at: number;
  inFlight: number;
}

/** A post admitted: release it when its verification is over, whatever the outcome. */
export interface AcsSlot {
  release(): void;
}

export class AcsThrottle {
  private readonly buckets = new LRUCache<string, Bucket>({ max: TABLE_SIZE });
  private readonly msPerToken: number;

  constructor(
    private readonly now: () => number,
    private readonly limits: { inFlight: number; perMinute: number } = { inFlight: MAX_IN_FLIGHT, perMinute: PER_MINUTE },
  ) {
    this.msPerToken = 60_000 / limits.perMinute;
  }

  /** A slot for one post from `address` (an address prefix), or the seconds to wait before another. */
  admit(address: string): AcsSlot | { retryAfter: number } {
    const now = this.now();
    let bucket = this.buckets.get(address);
    if (!bucket) {
      bucket = { tokens: this.limits.perMinute, at: now, inFlight: 0 };
      this.buckets.set(address, bucket);
    }
    // a clock that went back refills nothing
    bucket.tokens = Math.min(this.limits.perMinute, bucket.tokens + Math.max(0, now - bucket.at) / this.msPerToken);
    bucket.at = Math.max(bucket.at, now);
    if (bucket.inFlight >= this.limits.inFlight) return { retryAfter: 1 };
    if (bucket.tokens < 1) return { retryAfter: Math.max(1, Math.ceil(((1 - bucket.tokens) * this.msPerToken) / 1000)) };
    bucket.tokens -= 1;
    bucket.inFlight += 1;
    const admitted = bucket;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        admitted.inFlight -= 1;
      },
    };
  }
}
