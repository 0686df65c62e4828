// Failover, in the default suite (about 30 s on 2 cores) and again under `npm run test:ops` (docs/operations.md, "PostgreSQL outages and failover"). A primary
// with a synchronous streaming standby (pg_basebackup -R; synchronous_standby_names, so that a
// commit is acknowledged only once the standby has it), both of the test's own; Gatehouse reaches
// them through a TCP proxy, as it would through a managed service's endpoint, a virtual IP or
// HAProxy under Patroni (node-postgres takes one host). Under load the primary dies (pg_ctl -m
// immediate), the standby is promoted and the proxy switched to it; the writes resume after a
// gap that is measured and bounded, and every acknowledged write is on the promoted server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, killAll, stop } from '../helpers/cli.js';
import { pgInstanceUnavailable, pgRoot, type PgInstance, startPrimary, startStandby } from '../helpers/pg-instance.js';
import { assertNoCrash, assertUnavailable, clientNames, join, load, serve, sleep, tcpProxy, token, waitReady } from './scenario.js';

ensureBuilt();

const skip = pgInstanceUnavailable() ?? false;
/** from the switch of the proxy to the first acknowledged write on the promoted server, at most */
const GAP_BOUND_MS = 10_000;

describe('failover to a promoted synchronous standby', { skip }, () => {
  let root: ReturnType<typeof pgRoot>;
  let primary: PgInstance;
  let standby: PgInstance;
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  let server: Awaited<ReturnType<typeof serve>>;

  before(async () => {
    root = pgRoot();
    primary = await startPrimary(root.root, { synchronousStandby: 'standby1' });
    standby = await startStandby(root.root, primary, 'standby1');
    proxy = await tcpProxy(primary.port);
    server = await serve(`postgres://postgres@127.0.0.1:${proxy.port}/postgres`, join(root.root, 'data'));
  });
  after(async () => {
    if (server?.p.running()) await stop(server.p);
    await killAll();
    await proxy?.close();
    primary?.remove();
    standby?.remove();
    root?.remove();
  });

  it('goes on after a bounded gap with nothing acknowledged lost', async () => {
    const { port } = server;
    const t = await token(port);
    assert.equal(t.status, 200);
    const writers = load(port, t.token!, 6, 'failover');
    await sleep(1_500);
    assert.ok(writers.acknowledged.length > 0);

    const killedAt = Date.now();
    primary.stop('immediate');
    standby.promote();
    const promotedAt = Date.now();
    proxy.switchTo(standby.port);
    const switchedAt = Date.now();
    await waitReady(port);
    const ackedAtSwitch = writers.ackTimes.filter((at) => at <= switchedAt).length;
    await sleep(1_500);
    await writers.stop();
    const firstAfter = writers.ackTimes.find((at) => at > switchedAt);
    assert.ok(firstAfter !== undefined, 'writes go through on the promoted server');
    const lastBefore = Math.max(...writers.ackTimes.filter((at) => at <= killedAt));
    const gap = firstAfter - lastBefore;
    assert.ok(firstAfter - switchedAt < GAP_BOUND_MS, `writes resumed ${firstAfter - switchedAt} ms after the switch`);
    assert.ok(writers.acknowledged.length > ackedAtSwitch);

    for (const f of writers.failures) assertUnavailable(f);
    const present = await clientNames(standby.url());
    assert.deepEqual(
      writers.acknowledged.filter((n) => !present.has(n)),
      [],
      'acknowledged writes missing on the promoted standby',
    );
    assertNoCrash(server.p);
    process.stderr.write(
      `# failover: promote took ${promotedAt - killedAt} ms; writes resumed ${firstAfter - switchedAt} ms after the switch; ` +
        `gap between the last write acknowledged by the old primary and the first by the new one ${gap} ms; ` +
        `${writers.acknowledged.length} acknowledged, ${writers.failures.length} refused\n`,
    );
  });
});
