// gatehouse audit export --since <ISO time | duration> [--tenant ID]: the audit trail as JSON
// lines on standard output, oldest first, for a SIEM (docs/operations.md "Audit trail"). Reads the
// database directly, like `gatehouse users`: whoever runs it holds the database.
import { parseArgs } from 'node:util';
import type { StoredAuditEvent } from '../../audit/model.js';
import type { AuditStore } from '../../audit/store.js';
import { systemClock } from '../../clock.js';
import type { Config } from '../../config.js';
import { TENANT_ID_PATTERN } from '../../ids.js';
import { DataDirLockedError } from '../../store/data-dir-lock.js';
import { createStore } from '../../store/index.js';
import { StartFailure } from '../failure-line.js';
import { UsageError } from '../usage-error.js';
import { openConfiguredDb, requireCurrentSchema } from './open-db.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: an ISO 8601 time (`2026-11-01T00:00:00Z`) or a duration back from now (`90m`, `24h`, `7d`). */
export function parseSince(value: string, now: Date): Date {
  const duration = /^(\d{1,6})([smhd])$/.exec(value);
  if (duration) return new Date(now.getTime() - Number(duration[1]) * UNITS[duration[2]!]!);
  if (/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) {
    const at = new Date(/T/.test(value) && !/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? `${value}Z` : value);
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw new UsageError(`--since ${JSON.stringify(value)} is neither an ISO time (2026-11-01T00:00:00Z) nor a duration back from now (90m, 24h, 7d)`);
}

export interface AuditCommandLine {
  action: 'export';
  since: string;
  tenant: string | null;
}

export function auditCommandLine(args: string[]): AuditCommandLine {
  let parsed: ReturnType<typeof parse>;
  const parse = () => parseArgs({ args, allowPositionals: true, strict: true, options: { since: { type: 'string' }, tenant: { type: 'string' } } });
  try {
    parsed = parse();
  } catch (err) {
    throw new UsageError(`${(err as Error).message}; see gatehouse audit --help`);
  }
  const [action, ...extra] = parsed.positionals;
  if (action !== 'export')
    throw new UsageError(
      `${action === undefined ? 'no action given' : `unknown action ${JSON.stringify(action)}`}: use gatehouse audit export --since TIME`,
    );
  if (extra.length > 0) throw new UsageError(`unexpected ${JSON.stringify(extra[0])}: see gatehouse audit --help`);
  if (parsed.values.since === undefined)
    throw new UsageError('--since is required: an ISO time (2026-11-01T00:00:00Z) or a duration back from now (24h, 7d)');
  const tenant = parsed.values.tenant ?? null;
  if (tenant !== null && !TENANT_ID_PATTERN.test(tenant))
    throw new UsageError(`--tenant ${JSON.stringify(tenant)} is not a tenant id (a decimal number such as 1042)`);
  return { action, since: parsed.values.since, tenant };
}

/** One event as a JSON line: flat fields a SIEM maps without knowing this service. */
export function eventLine(e: StoredAuditEvent): string {
  return JSON.stringify({
    id: e.id,
    occurred_at: e.occurredAt.toISOString(),
    tenant_id: e.tenantId,
    actor_kind: e.actor.kind,
    actor_id: e.actor.id,
    actor_tenant_id: e.actor.tenantId ?? null,
    action: e.action,
    outcome: e.outcome,
    target_kind: e.target.kind,
    target_id: e.target.id,
    request_id: e.requestId,
    address: e.address,
    details: e.details,
  });
}

const BATCH = 1000;

/** Writes the events since a time (of a tenant and those below it), oldest first, in batches; returns how many. */
export async function exportAuditEvents(
  store: Pick<AuditStore, 'exportEvents'>,
  since: Date,
  tenantId: string | null,
  write: (line: string) => void,
): Promise<number> {
  let after: StoredAuditEvent | null = null;
  let n = 0;
  for (;;) {
    const batch = await store.exportEvents(since, tenantId, after, BATCH);
    for (const e of batch) write(`${eventLine(e)}\n`);
    n += batch.length;
    if (batch.length < BATCH) return n;
    after = batch.at(-1)!;
  }
}

export async function auditCommand(config: Config, args: string[]): Promise<number> {
  const line = auditCommandLine(args);
  const since = parseSince(line.since, systemClock.now());
  let db: Awaited<ReturnType<typeof openConfiguredDb>>;
  try {
    db = await openConfiguredDb(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      throw new StartFailure(
        `the embedded database folder ${config.dataDir} is in use${err.holder ? ` by ${err.holder}` : ''}: stop the server and run this again (the embedded database has one owner at a time), or use PostgreSQL`,
        { cause: err },
      );
    }
    throw err;
  }
  try {
    await requireCurrentSchema(db, 'this database is empty: start `gatehouse serve` once first');
    const store = createStore(db.kysely, systemClock);
    await exportAuditEvents(store.audit, since, line.tenant, (text) => process.stdout.write(text));
    return 0;
  } finally {
    await db.close();
  }
}
