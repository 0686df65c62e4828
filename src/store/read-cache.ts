// A read-through cache of one store read, kept only while nothing it depends on has changed
// (auth-changes.ts). An entry is used while the change signal's generation is the one it was
// read at and it is younger than its lifetime (the backstop for a change no one heard); a read
// that overlapped a change is returned but not kept; misses (undefined) are kept only by a cache
// made with `misses`, under the same rules; and while changes of other processes could go unheard
// nothing is kept at all. Concurrent misses of one key share one read.
import { LRUCache } from 'lru-cache';
import type { ChangeSignal } from './auth-changes.js';

export interface ReadCacheOptions<V> {
  /** entries at most */
  max: number;
  /** the backstop: an entry is read again after this long whatever the signal says */
  lifetimeMs: number;
  /** bounds the entries by their total size as well, each entry's size given by `size` */
  maxSize?: { total: number; size: (value: V) => number };
  /**
   * keeps misses too, this many at most, apart from the values (a flood of names of nothing
   * cannot push out the values): for a read whose "none" must cost the same work as a value, and
   * only where every write that could turn a miss into a value is a change (auth-changes.ts)
   */
  misses?: number;
}

interface Entry<V> {
  generation: number;
  value: V;
}

export class ReadCache<V extends object> {
  private readonly entries: LRUCache<string, Entry<V>>;
  /** key → the generation it was found missing at */
  private readonly missed: LRUCache<string, number> | undefined;
  private readonly inFlight = new Map<string, { generation: number; promise: Promise<V | undefined> }>();

  constructor(
    private readonly signal: ChangeSignal,
    options: ReadCacheOptions<V>,
  ) {
    const bySize = options.maxSize;
    this.entries = new LRUCache({
      max: options.max,
      ttl: options.lifetimeMs,
      ttlAutopurge: false,
      ...(bySize ? { maxSize: bySize.total, sizeCalculation: (entry: Entry<V>) => Math.max(1, bySize.size(entry.value)) } : {}),
    });
    this.missed = options.misses ? new LRUCache({ max: options.misses, ttl: options.lifetimeMs, ttlAutopurge: false }) : undefined;
  }

  async get(key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.signal.generation;
    if (!this.signal.reliable) return read();
    const hit = this.entries.get(key);
    if (hit && hit.generation === generation) return hit.value;
    if (this.missed?.get(key) === generation) return undefined;
    const running = this.inFlight.get(key);
    if (running && running.generation === generation) return running.promise;
    const promise = read().then((value) => {
      // kept only when no change began or ended while it was read
      if (this.signal.generation === generation && this.signal.reliable) {
        if (value !== undefined) {
          this.entries.set(key, { generation, value: deepFreeze(value) });
          this.missed?.delete(key);
        } else if (this.missed) {
          this.missed.set(key, generation);
          this.entries.delete(key);
        }
      }
      return value;
    });
    this.inFlight.set(key, { generation, promise });
    try {
      return await promise;
    } finally {
      if (this.inFlight.get(key)?.promise === promise) this.inFlight.delete(key);
    }
  }
}

/** Cached values are shared by every request: a caller that changed one would change them all. */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}
