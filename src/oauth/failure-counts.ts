// Failures per key in a fixed window that starts with the key's first failure. Two bounded
// tables: keys still under their limit, and keys that reached it. A flood of new keys (junk
// client ids, many addresses) can only push out keys of the first table; pushing a throttled key
// out of the second takes as many keys that each failed `limit` times. Not a precise count
// across restarts or processes: a bound on guessing speed.
import { LRUCache } from 'lru-cache';

interface Entry {
  count: number;
  since: number;
}

export class FailureCounts {
  private readonly counting: LRUCache<string, Entry>;
  private readonly reached: LRUCache<string, Entry>;

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
    maxKeys: number,
  ) {
    this.counting = new LRUCache({ max: maxKeys });
    this.reached = new LRUCache({ max: maxKeys });
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.reached.get(key) ?? this.counting.get(key);
    if (entry && now - entry.since >= this.windowMs) {
      this.clear(key);
      return undefined;
    }
    return entry;
  }

  /** Failures of the key in its current window (0 when it has none). */
  count(key: string, now: number): number {
    return this.live(key, now)?.count ?? 0;
  }

  /** Seconds until the key's window ends, when it has reached the limit; else 0. */
  retryAfter(key: string, now: number): number {
    const entry = this.live(key, now);
    return entry && entry.count >= this.limit ? Math.max(1, Math.ceil((entry.since + this.windowMs - now) / 1000)) : 0;
  }

  /** Counts one failure; returns the key's count after it. */
  add(key: string, now: number): number {
    const entry = this.live(key, now);
    if (!entry) {
      this.counting.set(key, { count: 1, since: now });
      if (this.limit <= 1) this.promote(key);
      return 1;
    }
    entry.count++;
    if (entry.count >= this.limit && !this.reached.has(key)) this.promote(key);
    return entry.count;
  }

  clear(key: string): void {
    this.counting.delete(key);
    this.reached.delete(key);
  }

  /** Keys held in both tables. */
  get size(): number {
    return this.counting.size + this.reached.size;
  }

  private promote(key: string): void {
    const entry = this.counting.get(key);
    if (!entry) return;
    this.counting.delete(key);
    this.reached.set(key, entry);
  }
}
