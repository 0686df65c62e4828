// gatehouse status: the deployment's state, read from its database without changing it (no
// migration is applied): migrations applied and pending, signing keys as stored, processes seen in
// the last two minutes (each serve process beats every 30 s).
import { parseArgs } from 'node:util';
import { systemClock } from '../../clock.js';
import type { Config } from '../../config.js';
import { DataDirLockedError } from '../../store/data-dir-lock.js';
import { type DeploymentState, deploymentState } from '../../store/deployment-state.js';
import { StartFailure } from '../failure-line.js';
import { UsageError } from '../usage-error.js';
import { openConfiguredDb } from './open-db.js';

export function statusText(s: DeploymentState, now: Date): string {
  const lines: string[] = [];
  lines.push(`migrations: ${s.migrations.applied.length} applied, ${s.migrations.pending.length} pending`);
  for (const m of s.migrations.pending) lines.push(`  pending ${m} (gatehouse migrate, or serve, applies it)`);
  const live = s.keys.filter((k) => k.retiredAt === null);
  lines.push(`signing keys: ${live.length} in use, ${s.keys.length - live.length} retired`);
  for (const k of s.keys) {
    lines.push(`  ${k.kid}  ${k.alg}  created ${k.createdAt.toISOString()}${k.retiredAt ? `  retired ${k.retiredAt.toISOString()}` : ''}`);
  }
  lines.push(`processes seen in the last 2 minutes: ${s.processes.length}`);
  for (const p of s.processes) {
    const ago = Math.max(0, Math.round((now.getTime() - p.lastSeenAt.getTime()) / 1000));
    lines.push(`  ${p.host}  pid ${p.pid}  version ${p.version}  started ${p.startedAt.toISOString()}  last seen ${ago} s ago`);
  }
  return `${lines.join('\n')}\n`;
}

export async function statusCommand(config: Config, args: string[]): Promise<number> {
  const { values } = (() => {
    try {
      return parseArgs({ args, strict: true, allowPositionals: false, options: { json: { type: 'boolean' } } });
    } catch (err) {
      throw new UsageError(`${(err as Error).message}; see gatehouse status --help`);
    }
  })();
  let db: Awaited<ReturnType<typeof openConfiguredDb>>;
  try {
    db = await openConfiguredDb(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      throw new StartFailure(
        `the embedded database folder ${config.dataDir} is in use${err.holder ? ` by ${err.holder}` : ''}: a server runs on it (the embedded database has one owner at a time); its /readyz and /version answer while it runs`,
        { cause: err },
      );
    }
    throw err;
  }
  try {
    const now = systemClock.now();
    const state = await deploymentState(db.kysely, now);
    process.stdout.write(values.json ? `${JSON.stringify(state)}\n` : statusText(state, now));
    return 0;
  } finally {
    await db.close();
  }
}
