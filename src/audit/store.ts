import type { AuditEvent } from './model.js';

export interface AuditStore {
  insertEvent(event: AuditEvent): Promise<void>;
}
