import type { AuditEvent, AuditFilter, AuditPosition, StoredAuditEvent } from './model.js';

export interface AuditStore {
  insertEvent(event: AuditEvent): Promise<void>;
  /**
   * Events of the tenants in the subtree of `subtreeOf` (itself included) (or of one tenant when `tenantId` is given),
   * newest first, after a position, at most `limit`.
   */
  listEvents(
    scope: { subtreeOf: string; tenantId?: string | null },
    filter: AuditFilter,
    after: AuditPosition | null,
    limit: number,
  ): Promise<StoredAuditEvent[]>;
  /** Events since a time, oldest first, optionally of one tenant and its subtree: the export. */
  exportEvents(since: Date, tenantId: string | null, after: AuditPosition | null, limit: number): Promise<StoredAuditEvent[]>;
  /** Deletes events older than a time (retention); returns how many. */
  deleteEventsBefore(before: Date): Promise<number>;
}
