// Retries racing each other across two processes (issue 25; items 54 and 122 of docs/security.md):
// two `gatehouse serve` processes on one PostgreSQL database, and a client that sends the same
// createClient with the same Idempotency-Key to both at once, several times over. Exactly one
// client is made per key; every 200 carries its one secret (replays from either process: the
// answer is sealed with the deployment's encryption key); every other answer is 409 "still
// running"; and once the first has finished, a retry at either process hears its answer. PGlite
// is one process's folder (docs/operations.md), so two processes share PostgreSQL only; the
// in-process races and every other rule run on both engines in test/security/idempotency.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  createDatabase,
  ENCRYPTION_KEY,
  ensureBuilt,
  freePort,
  gatehouse,
  killAll,
  type Proc,
  requestToken,
  stop,
  waitHealthy,
} from '../helpers/cli.js';

const ROOT_ID = 'root-admin';
const ROOT_SECRET = 'gatehouse_test_root_secret_0123456789abcdefghij';
const CREATE = 'mutation($n: String!) { createClient(name: $n) { client { id client_id } client_secret } }';
const KEYS = 6;
const PER_PROCESS = 4;

async function post(port: number, token: string, key: string, variables: Record<string, unknown>, query = CREATE) {
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: (await res.json()) as any };
}

describe('Idempotency-Key across two processes on one PostgreSQL', {
  skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL',
}, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-idempotency-'));
  let drop: (() => Promise<void>) | undefined;
  after(async () => {
    await killAll();
    await drop?.();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('retries sent to both at once: one client per key, one secret, the rest "still running", then replays from either', {
    timeout: 180_000,
  }, async () => {
    ensureBuilt();
    const db = await createDatabase('gh_idem');
    drop = db.drop;
    const vars = {
      DATABASE_URL: db.url,
      // one deployment behind one address: a token of either process is good at both
      GATEHOUSE_BASE_URL: 'http://gatehouse.test',
      GATEHOUSE_DATA_DIR: join(tmp, 'data'),
      GATEHOUSE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      GATEHOUSE_BOOTSTRAP_CLIENT_ID: ROOT_ID,
      GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: ROOT_SECRET,
    };
    const start = async (): Promise<{ p: Proc; port: number }> => {
      const port = await freePort();
      const p = gatehouse(['serve'], { ...vars, PORT: String(port) });
      await waitHealthy(p, port);
      return { p, port };
    };
    const one = await start();
    const two = await start();
    try {
      const token = (await requestToken(one.port, ROOT_ID, ROOT_SECRET)).body.access_token as string;
      assert.ok(token);
      for (let k = 0; k < KEYS; k++) {
        const key = randomUUID();
        const variables = { n: `raced ${k}` };
        const answers = await Promise.all(
          Array.from({ length: 2 * PER_PROCESS }, (_, i) => post(i % 2 === 0 ? one.port : two.port, token, key, variables)),
        );
        const made = answers.filter((a) => a.status === 200);
        assert.ok(made.length >= 1, JSON.stringify(answers.map((a) => a.body)));
        for (const a of made) assert.equal(a.body.errors, undefined, JSON.stringify(a.body));
        const secrets = new Set(made.map((a) => a.body.data.createClient.client_secret as string));
        assert.equal(secrets.size, 1, `key ${k}: every 200 carries the one secret`);
        for (const a of answers.filter((a) => a.status !== 200)) {
          assert.equal(a.status, 409, JSON.stringify(a.body));
          assert.equal(a.body.errors[0].extensions.idempotencyKey, 'in_use');
        }
        // once it is done, either process replays it
        for (const port of [one.port, two.port]) {
          const again = await post(port, token, key, variables);
          assert.equal(again.status, 200, JSON.stringify(again.body));
          assert.equal(again.replayed, 'true');
          assert.equal(again.body.data.createClient.client_secret, [...secrets][0]);
        }
      }
      const listed = await post(one.port, token, randomUUID(), {}, '{ clients(perPage: 500) { name } }');
      const names = (listed.body.data.clients as { name: string }[]).map((c) => c.name).filter((n) => n.startsWith('raced '));
      assert.deepEqual(
        names.sort(),
        Array.from({ length: KEYS }, (_, k) => `raced ${k}`),
        'one client per key',
      );
    } finally {
      await stop(one.p);
      await stop(two.p);
    }
  });
});
