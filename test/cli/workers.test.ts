// `gatehouse serve --workers N` (serve-workers.ts): N processes share the port on one PostgreSQL;
// both serve, /metrics sums them, a worker that dies is replaced, SIGTERM stops them all with
// exit 0. Without DATABASE_URL more than one worker is refused before anything starts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createDatabase,
  ENCRYPTION_KEY,
  ensureBuilt,
  exitOf,
  freePort,
  gatehouse,
  killAll,
  oneLine,
  PATIENCE_MS,
  type Proc,
  requestToken,
  stop,
  waitFor,
} from '../helpers/cli.js';

ensureBuilt();

const ROOT_ID = 'root-admin';
const ROOT_SECRET = 'gatehouse_test_root_secret_0123456789abcdefghij';

/** the workers that said they listen, by worker id: their pids */
function listening(p: Proc): Map<number, number> {
  const seen = new Map<number, number>();
  for (const line of p.stdout().split('\n')) {
    if (!line.includes('"msg":"gatehouse serving"')) continue;
    const entry = JSON.parse(line) as { worker?: number; pid: number };
    if (entry.worker !== undefined) seen.set(entry.worker, entry.pid);
  }
  return seen;
}

async function issued(metricsPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const m = /^gatehouse_tokens_issued_total\{grant_type="client_credentials"\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

describe('gatehouse serve --workers', () => {
  after(killAll);

  it('refuses more than one worker on the embedded database, saying what to do', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-workers-'));
    try {
      const p = gatehouse(['serve', '--workers', '2'], { GATEHOUSE_DATA_DIR: tmp, PORT: String(await freePort()) });
      const r = await exitOf(p, PATIENCE_MS);
      assert.equal(r.code, 2);
      assert.match(oneLine(p), /GATEHOUSE_WORKERS: more than one worker needs DATABASE_URL.*set DATABASE_URL/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  describe('on PostgreSQL', { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL' }, () => {
    let drop: () => Promise<void>;
    let p: Proc;
    let port: number;
    let metricsPort: number;
    const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-workers-pg-'));

    before(async () => {
      const db = await createDatabase('gh_workers');
      drop = db.drop;
      port = await freePort();
      metricsPort = await freePort();
      p = gatehouse(['serve', '--workers', '2'], {
        DATABASE_URL: db.url,
        GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
        GATEHOUSE_BOOTSTRAP_CLIENT_ID: ROOT_ID,
        GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_SECRET,
        GATEHOUSE_METRICS_PORT: String(metricsPort),
        GATEHOUSE_DATA_DIR: tmp,
        PORT: String(port),
      });
      await waitFor('two workers and the primary serving', PATIENCE_MS, () => {
        if (!p.running()) throw new Error(`exited early\n${p.stderr()}`);
        return listening(p).size === 2 && p.stdout().includes('"role":"primary","workers":2') ? true : undefined;
      });
    });
    after(async () => {
      await drop?.();
      rmSync(tmp, { recursive: true, force: true });
    });

    it('prints the first-start notice once, from the worker that bootstrapped', () => {
      assert.equal(p.stdout().split('Gatehouse first start').length - 1, 1);
    });

    it('both workers serve, and /metrics counts the tokens of both', async () => {
      const before = await issued(metricsPort);
      // a new connection each time: the primary hands connections out in turn
      const results = await Promise.all(Array.from({ length: 8 }, () => requestToken(port, ROOT_ID, ROOT_SECRET)));
      assert.ok(results.every((r) => r.status === 200));
      assert.equal((await issued(metricsPort)) - before, 8);
      const served = new Set(
        p
          .stdout()
          .split('\n')
          .filter((l) => l.includes('"path":"/auth/api/v2/auth/token"'))
          .map((l) => (JSON.parse(l) as { worker: number }).worker),
      );
      assert.deepEqual([...served].sort(), [1, 2], 'token requests were served by both workers');
    });

    it('replaces a worker that dies, and keeps serving meanwhile', async () => {
      const pid = listening(p).get(2)!;
      process.kill(pid, 'SIGKILL');
      await waitFor('a replacement worker', PATIENCE_MS, () => (listening(p).size === 3 ? true : undefined));
      assert.match(p.stdout(), /"msg":"a worker exited; starting another"/);
      assert.equal((await requestToken(port, ROOT_ID, ROOT_SECRET)).status, 200);
    });

    it('SIGTERM stops every worker and exits 0', async () => {
      const pids = [...listening(p).values()];
      await stop(p);
      for (const pid of pids) {
        assert.throws(() => process.kill(pid, 0), /ESRCH/, `worker ${pid} is gone`);
      }
    });
  });
});
