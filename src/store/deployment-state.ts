// What `gatehouse status` shows of a deployment, read from its database: the migrations applied
// and pending, the signing keys as stored (never their private halves), the processes seen lately.
import { sql, type Kysely } from 'kysely';
import { STALE_SECONDS, type ProcessBeat } from '../maintenance/heartbeat.js';
import { heartbeatStore } from './heartbeats.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export interface DeploymentState {
  migrations: { applied: string[]; pending: string[] };
  keys: { kid: string; alg: string; createdAt: Date; retiredAt: Date | null }[];
  /** seen in the last STALE_SECONDS */
  processes: ProcessBeat[];
}

export async function deploymentState(db: Kysely<Database>, now: Date): Promise<DeploymentState> {
  const known = Object.keys(migrations);
  let applied: string[] = [];
  try {
    applied = (await sql<{ name: string }>`select name from gatehouse_migrations order by name`.execute(db)).rows.map((r) => r.name);
  } catch {
    // a database never migrated: everything is pending
  }
  const pending = known.filter((m) => !applied.includes(m));
  const hasKeys = applied.length > 0;
  const keys = hasKeys
    ? (await db.selectFrom('signing_keys').select(['kid', 'alg', 'created_at', 'retired_at']).orderBy('created_at').execute()).map((k) => ({
        kid: k.kid,
        alg: k.alg,
        createdAt: new Date(k.created_at),
        retiredAt: k.retired_at === null ? null : new Date(k.retired_at),
      }))
    : [];
  const processes = pending.includes('20261130T1210-process-heartbeats')
    ? []
    : await heartbeatStore(db).seenSince(new Date(now.getTime() - STALE_SECONDS * 1000));
  return { migrations: { applied, pending }, keys, processes };
}
