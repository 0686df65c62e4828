// A PostgreSQL instance of the test's own (docs/operations.md, "PostgreSQL outages and
// failover"): initdb into a temporary folder, its own port on 127.0.0.1, its socket in that
// folder; the machine's cluster is never touched. initdb refuses to run as root, so as root the
// instance runs as the `postgres` user (runuser), in a folder it owns. Tests skip (saying why)
// where the binaries are missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './cli.js';

const BIN = process.env.GATEHOUSE_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why the instance cannot run here, or undefined when it can. */
export function pgInstanceUnavailable(): string | undefined {
  if (!existsSync(join(BIN, 'initdb'))) return `needs PostgreSQL's server binaries in ${BIN} (GATEHOUSE_TEST_PG_BIN)`;
  if (process.getuid?.() === 0 && spawnSync('id', ['postgres']).status !== 0)
    return 'runs as root and there is no postgres user to run the instance as';
  return undefined;
}

function owner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

/** Runs one of PostgreSQL's programs, as postgres when we are root. */
function run(program: string, args: string[]): string {
  const full = join(BIN, program);
  const [cmd, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${program} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

export interface PgInstance {
  port: number;
  dir: string;
  /** postgres://postgres@127.0.0.1:port/postgres, or another database */
  url(database?: string): string;
  start(): void;
  /** pg_ctl stop: 'fast' (clients disconnected, a clean checkpoint) or 'immediate' (as a crash: recovery at the next start) */
  stop(mode?: 'fast' | 'immediate'): void;
  promote(): void;
  running(): boolean;
  /** stops it if running and deletes its folder */
  remove(): void;
}

function instance(root: string, dir: string, port: number): PgInstance {
  const log = join(root, `${port}.log`);
  const self: PgInstance = {
    port,
    dir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start() {
      run('pg_ctl', ['-D', dir, '-l', log, '-w', '-t', '60', '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1`, 'start']);
    },
    stop(mode = 'fast') {
      run('pg_ctl', ['-D', dir, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    promote() {
      run('pg_ctl', ['-D', dir, '-w', '-t', '60', 'promote']);
    },
    running() {
      return spawnSync(join(BIN, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-t', '1']).status === 0;
    },
    remove() {
      if (existsSync(join(dir, 'postmaster.pid'))) {
        try {
          self.stop('immediate');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return self;
}

/** A temporary folder the instance's user owns (its sockets and logs go there too). */
export function pgRoot(): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  chmodSync(root, 0o755);
  const o = owner();
  if (o) chownSync(root, o.uid, o.gid);
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A fresh primary: initdb (trust on loopback), started on a free port. `synchronousStandby`
 *  names a standby whose confirmation every commit waits for (synchronous_commit = on). */
export async function startPrimary(root: string, opts: { synchronousStandby?: string } = {}): Promise<PgInstance> {
  const port = await freePort();
  const dir = join(root, `primary-${port}`);
  run('initdb', ['-D', dir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const conf = [
    'fsync = on',
    'wal_level = replica',
    'max_wal_senders = 5',
    'wal_keep_size = 64MB',
    'max_connections = 60',
    // a promoted standby must be able to take the old primary's place
    'hot_standby = on',
  ];
  if (opts.synchronousStandby) conf.push(`synchronous_standby_names = '${opts.synchronousStandby}'`, 'synchronous_commit = on');
  appendFileSync(join(dir, 'postgresql.conf'), `${conf.join('\n')}\n`);
  appendFileSync(join(dir, 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
  const pg = instance(root, dir, port);
  pg.start();
  return pg;
}

/** A streaming standby of `primary` (pg_basebackup -R), started on its own port, named `name`
 *  (its application_name, which synchronous_standby_names refers to). */
export async function startStandby(root: string, primary: PgInstance, name: string): Promise<PgInstance> {
  const port = await freePort();
  const dir = join(root, `standby-${port}`);
  run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dir, '-R', '-X', 'stream', '--no-sync']);
  // the primary's postgresql.conf came with the backup, synchronous_standby_names included: once
  // promoted, this server would wait at every commit for a standby it does not have (for ever:
  // statement_timeout does not end a commit's wait). Alone after a failover, it has none.
  appendFileSync(
    join(dir, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=${name}'\nsynchronous_standby_names = ''\n`,
  );
  writeFileSync(join(dir, 'standby.signal'), '');
  const o = owner();
  if (o) {
    for (const f of ['postgresql.auto.conf', 'standby.signal']) chownSync(join(dir, f), o.uid, o.gid);
  }
  const pg = instance(root, dir, port);
  pg.start();
  return pg;
}
