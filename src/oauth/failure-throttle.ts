// Slows down secret guessing at the token endpoint: after too many failures for one client_id
// from one address, that pair gets 429 until the window ends. The key includes the address, so
// an attacker cannot lock the real client out from elsewhere (no lockout as denial of service).
// Kept per process: a bound on guessing speed, not an exact count.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';

export const MAX_FAILURES = 10;
export const WINDOW_MS = 5 * 60_000;

export class FailureThrottle {
  private readonly failures = new LRUCache<string, { count: number; since: number }>({ max: 50_000 });

  constructor(private readonly clock: Clock) {}

  /** Seconds to wait, or 0 when the key may try. */
  retryAfter(key: string): number {
    const entry = this.failures.get(key);
    const now = this.clock.now().getTime();
    if (!entry || now - entry.since >= WINDOW_MS) return 0;
    return entry.count >= MAX_FAILURES ? Math.ceil((entry.since + WINDOW_MS - now) / 1000) : 0;
  }

  fail(key: string): void {
    const now = this.clock.now().getTime();
    const entry = this.failures.get(key);
    if (!entry || now - entry.since >= WINDOW_MS) this.failures.set(key, { count: 1, since: now });
    else entry.count++;
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }
}
