// Whether a PostgreSQL server keeps what it acknowledges. A server with `fsync` off, or
// `synchronous_commit` off for Gatehouse's sessions, answers a commit before the change is on
// disk: an operating-system crash or a power loss can then take away a credential, a rotation or
// a revocation the caller was told had happened (a revoked secret that works again). `serve`
// refuses such a server unless the operator says otherwise (GATEHOUSE_ALLOW_NON_DURABLE_DATABASE).
//
// `synchronous_commit = local` or `remote_write` still flush the local write-ahead log; only
// `off` does not. The embedded engine (PGlite) runs with fsync off by design: what it keeps is
// said in docs/operations.md, and it is not checked here.
import { sql } from 'kysely';
import type { Db } from './db.js';

export interface DurabilitySettings {
  fsync: string;
  synchronous_commit: string;
}

export interface DurabilityProblem {
  /** what is wrong, e.g. `fsync is off` */
  problem: string;
  /** how an operator puts it right */
  fix: string;
}

/** What in `settings` may lose an acknowledged write, with its fix; empty when nothing does. */
export function durabilityProblems(settings: DurabilitySettings): DurabilityProblem[] {
  const problems: DurabilityProblem[] = [];
  if (settings.fsync !== 'on') problems.push({ problem: `fsync is ${settings.fsync}`, fix: 'ALTER SYSTEM SET fsync = on' });
  if (settings.synchronous_commit === 'off') {
    problems.push({
      problem: 'synchronous_commit is off',
      fix: "ALTER SYSTEM SET synchronous_commit = on (a role's or a database's own value wins: ALTER ROLE or ALTER DATABASE … RESET synchronous_commit)",
    });
  }
  return problems;
}

/** The server's settings as Gatehouse's sessions see them (a role's or a database's own included). */
export async function readDurabilitySettings(db: Db): Promise<DurabilitySettings> {
  const { rows } = await sql<DurabilitySettings>`
    select current_setting('fsync') as fsync, current_setting('synchronous_commit') as synchronous_commit`.execute(db.kysely);
  return rows[0]!;
}
