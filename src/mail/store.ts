// What the mail outbox needs from storage.
import type { ClaimedMail, NewMail, OutboxMail } from './model.js';

export type { NewMail };

export interface MailOutboxStore {
  /** Queues a message, due at once. */
  insertMail(mail: NewMail): Promise<void>;
  /**
   * Claims up to `limit` messages due at `now` (queued and due, or claimed by a process whose
   * lease ran out), counting an attempt and leasing them until `leaseUntil`. Rows another process
   * is claiming are skipped, not waited for: of several processes, each message goes to one.
   */
  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedMail[]>;
  /** Sent: the body is dropped. */
  markSent(id: string, at: Date): Promise<void>;
  /** Failed this attempt: tried again at `nextAttemptAt`. */
  markRetry(id: string, nextAttemptAt: Date, error: string): Promise<void>;
  /** Failed for good (every attempt): kept, sealed, for the operator to see. */
  markFailed(id: string, error: string): Promise<void>;
  /** The newest messages first, without bodies. */
  listMail(limit: number, status?: OutboxMail['status']): Promise<OutboxMail[]>;
  /** Deletes the messages in `status` created before `cutoff`; how many. */
  deleteMailBefore(status: 'sent' | 'failed', cutoff: Date): Promise<number>;
  /** One message, with its sealed body if still kept. */
  findMail(id: string): Promise<(OutboxMail & { bodySealed: string | null }) | undefined>;
}
