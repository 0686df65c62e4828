// `gatehouse status` (src/cli/commands/status.ts, store/deployment-state.ts), on both engines: the
// migrations applied and none pending, the signing keys as stored, the processes seen in the last
// two minutes (not one gone quiet); heartbeat rows of processes gone a week are purged.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { statusText } from '../../src/cli/commands/status.js';
import { purgeExpired } from '../../src/maintenance/purge.js';
import { deploymentState } from '../../src/store/deployment-state.js';
import { migrations } from '../../src/store/migrations/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';

for (const engine of engines()) {
  describe(`gatehouse status (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    it('shows migrations, keys and the processes that beat lately', async () => {
      const now = t.clock.now();
      const beat = (id: string, host: string, seenMsAgo: number) =>
        t.service.store.heartbeats.beat({
          processId: id,
          host,
          pid: 4242,
          version: '9.9.9',
          startedAt: new Date(now.getTime() - 3_600_000),
          lastSeenAt: new Date(now.getTime() - seenMsAgo),
        });
      await beat('a', 'web-1', 10_000);
      await beat('a', 'web-1', 5_000);
      await beat('b', 'web-2', 10 * 60_000);
      const state = await deploymentState(t.db.kysely, now);
      assert.deepEqual(state.migrations.pending, []);
      assert.deepEqual(state.migrations.applied, Object.keys(migrations));
      assert.ok(state.keys.length >= 1 && state.keys.some((k) => k.retiredAt === null), 'a signing key in use');
      assert.deepEqual(
        state.processes.map((p) => [p.host, p.pid, p.version]),
        [['web-1', 4242, '9.9.9']],
        'one row per process; the quiet one is not listed',
      );
      const text = statusText(state, now);
      assert.match(text, new RegExp(`migrations: ${Object.keys(migrations).length} applied, 0 pending`));
      assert.match(text, /signing keys: \d+ in use/);
      assert.match(text, /web-1 {2}pid 4242 {2}version 9\.9\.9 .* last seen 5 s ago/);
      assert.ok(!JSON.stringify(state).includes('private'), 'no private key material');
      // a week on, the purge takes the rows of processes gone
      t.clock.advance(8 * 86_400_000);
      const purged = await purgeExpired(t.service.store, t.clock, { sessionIdleSeconds: 3600, auditRetentionDays: 365 });
      assert.equal(purged.processes, 2);
    });
  });
}
