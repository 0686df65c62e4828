// "Last used" per secret without a database write per token request: uses are kept in memory
// (latest time per secret) and written in one batch every few seconds and at shutdown. Several
// processes may write the same secret; the store keeps the greatest time.
import type { CredentialStore } from './store.js';

export interface LastUsedRecorder {
  record(secretId: string, at: Date): void;
}

export class LastUsedBuffer implements LastUsedRecorder {
  private pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<CredentialStore, 'recordSecretUse'>,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  record(secretId: string, at: Date): void {
    const seen = this.pending.get(secretId);
    if (!seen || seen < at) this.pending.set(secretId, at);
  }

  /** Writes what is buffered. Uses recorded meanwhile wait for the next flush. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.store.recordSecretUse([...batch].map(([secretId, at]) => ({ secretId, at })));
      } catch (err) {
        // keep the times for the next attempt, unless newer ones arrived
        for (const [id, at] of batch) this.record(id, at);
        this.onError(err);
      }
    });
    return this.flushing;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
