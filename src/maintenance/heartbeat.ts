// Each serve process says it is alive: its row in process_heartbeats, written at start and every
// HEARTBEAT_SECONDS by the jobs table (compose.ts); `gatehouse status` lists the processes seen
// in the last STALE_SECONDS.
import type { Clock } from '../clock.js';

export const HEARTBEAT_SECONDS = 30;
/** a process not seen for this long is listed as gone (missed four beats) */
export const STALE_SECONDS = 120;
/** rows of processes gone this long are purged */
export const HEARTBEAT_KEPT_DAYS = 7;

export interface ProcessBeat {
  processId: string;
  host: string;
  pid: number;
  version: string;
  startedAt: Date;
  lastSeenAt: Date;
}

export interface HeartbeatStore {
  beat(row: ProcessBeat): Promise<void>;
  /** processes seen since a time, most recent first */
  seenSince(since: Date): Promise<ProcessBeat[]>;
  deleteSeenBefore(before: Date): Promise<number>;
}

export function heartbeat(store: HeartbeatStore, clock: Clock, me: Omit<ProcessBeat, 'lastSeenAt'>): () => Promise<void> {
  return () => store.beat({ ...me, lastSeenAt: clock.now() });
}
