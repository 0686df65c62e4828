// `npm run test:ops`: the longer outage test (docs/operations.md, "PostgreSQL outages and
// failover"). Three outages in a row under eight writers, alternately a clean stop (pg_ctl -m
// fast) and a crash (-m immediate: the server restarts through recovery), each long enough for
// the listener's back-off to reach its longest step; after each, /readyz turns 200 without a
// restart, and at the end every acknowledged write is in the database. The default suite's
// pg-outage.test.ts is the bounded version.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, killAll, stop } from '../helpers/cli.js';
import { pgInstanceUnavailable, pgRoot, type PgInstance, startPrimary } from '../helpers/pg-instance.js';
import { assertNoCrash, assertUnavailable, clientNames, join, load, ready, serve, sleep, token, waitReady } from './scenario.js';

ensureBuilt();

const skip = pgInstanceUnavailable() ?? false;
const CYCLES = 3;
const DOWN_MS = 6_000;

describe('PostgreSQL outages, repeated, clean and crash-like', { skip }, () => {
  let root: ReturnType<typeof pgRoot>;
  let primary: PgInstance;
  let server: Awaited<ReturnType<typeof serve>>;

  before(async () => {
    root = pgRoot();
    primary = await startPrimary(root.root);
    server = await serve(primary.url(), join(root.root, 'data'));
  });
  after(async () => {
    if (server?.p.running()) await stop(server.p);
    await killAll();
    primary?.remove();
    root?.remove();
  });

  it(`survives ${CYCLES} outages of ${DOWN_MS / 1000} s under load and loses no acknowledged write`, async () => {
    const { port } = server;
    const t = await token(port);
    assert.equal(t.status, 200);
    const writers = load(port, t.token!, 8, 'ops');
    const recoveries: number[] = [];
    for (let i = 0; i < CYCLES; i++) {
      await sleep(1_000);
      primary.stop(i % 2 === 0 ? 'fast' : 'immediate');
      await sleep(DOWN_MS);
      assert.equal((await ready(port)).status, 503);
      primary.start();
      recoveries.push(await waitReady(port));
      const acked = writers.acknowledged.length;
      await sleep(1_000);
      assert.ok(writers.acknowledged.length > acked, `writes go through after outage ${i + 1}`);
    }
    await writers.stop();
    for (const f of writers.failures) assertUnavailable(f);
    const present = await clientNames(primary.url());
    assert.deepEqual(
      writers.acknowledged.filter((n) => !present.has(n)),
      [],
    );
    assertNoCrash(server.p);
    const slowest = Math.max(...writers.failures.map((f) => f.ms));
    process.stderr.write(
      `# ${CYCLES} outages: ${writers.acknowledged.length} writes acknowledged, ${writers.failures.length} refused (slowest refusal ${slowest} ms); ready again after ${recoveries.join(', ')} ms\n`,
    );
  });
});
