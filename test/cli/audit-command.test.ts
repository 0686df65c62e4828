// `gatehouse audit export` (src/cli/commands/audit.ts), on both engines: the events since a time,
// oldest first, as JSON lines with flat fields, of one tenant and those below it with --tenant,
// in batches without losing one; --since as an ISO time or a duration; bad command lines refused
// with what to write instead.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { auditCommand, auditCommandLine, exportAuditEvents, parseSince } from '../../src/cli/commands/audit.js';
import { StartFailure } from '../../src/cli/failure-line.js';
import { loadConfig } from '../../src/config.js';
import { pendingMigrations } from '../../src/store/migrate.js';
import { migrations } from '../../src/store/migrations/index.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { openTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';
import { createTenant } from '../helpers/tenants.js';

describe('gatehouse audit export: the command line', () => {
  const now = new Date('2026-11-30T12:00:00.000Z');
  it('reads --since as an ISO time or a duration back from now', () => {
    assert.equal(parseSince('2026-11-01T00:00:00Z', now).toISOString(), '2026-11-01T00:00:00.000Z');
    assert.equal(parseSince('2026-11-01T00:00:00', now).toISOString(), '2026-11-01T00:00:00.000Z', 'no zone: UTC');
    assert.equal(parseSince('24h', now).toISOString(), '2026-11-29T12:00:00.000Z');
    assert.equal(parseSince('7d', now).toISOString(), '2026-11-23T12:00:00.000Z');
    assert.equal(parseSince('90m', now).toISOString(), '2026-11-30T10:30:00.000Z');
    assert.throws(
      () => parseSince('yesterday', now),
      (e: Error) => e instanceof UsageError && /neither an ISO time .* nor a duration/.test(e.message),
    );
  });
  it('refuses a missing --since, an unknown action, a bad --tenant, naming what to write', () => {
    assert.deepEqual(auditCommandLine(['export', '--since', '1d', '--tenant', '42']), { action: 'export', since: '1d', tenant: '42' });
    const cases: [string[], RegExp][] = [
      [['export'], /--since is required/],
      [['import', '--since', '1d'], /unknown action "import": use gatehouse audit export/],
      [[], /no action given/],
      [['export', '--since', '1d', '--tenant', 'acme'], /--tenant "acme" is not a tenant id/],
      [['export', '--since', '1d', '--nope'], /see gatehouse audit --help/],
    ];
    for (const [args, message] of cases)
      assert.throws(
        () => auditCommandLine(args),
        (e: Error) => e instanceof UsageError && message.test(e.message),
        args.join(' '),
      );
  });
});

for (const engine of engines()) {
  describe(`gatehouse audit export (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    const exported = async (since: Date, tenant: string | null) => {
      const lines: string[] = [];
      const n = await exportAuditEvents(t.service.store.audit, since, tenant, (l) => lines.push(l));
      assert.equal(n, lines.length);
      for (const l of lines) assert.ok(l.endsWith('\n') && !l.slice(0, -1).includes('\n'), 'one event per line');
      return lines.map((l) => JSON.parse(l));
    };

    it('writes the events since a time, oldest first, flat; --tenant keeps its subtree only', async () => {
      t.clock.advance(60_000);
      const since = t.clock.now();
      const partner = await createTenant(t, '1', { isPartner: true });
      t.clock.advance(1000);
      const child = await createTenant(t, partner);
      t.clock.advance(1000);
      const other = await createTenant(t, '1');
      const all = await exported(since, null);
      assert.deepEqual(
        all.filter((e) => e.action === 'tenant.created').map((e) => e.target_id),
        [partner, child, other],
      );
      const first = all[0];
      for (const key of [
        'id',
        'occurred_at',
        'tenant_id',
        'actor_kind',
        'actor_id',
        'actor_tenant_id',
        'action',
        'outcome',
        'target_kind',
        'target_id',
        'request_id',
        'address',
        'details',
      ]) {
        assert.ok(key in first, `field ${key}`);
      }
      assert.equal(first.outcome, 'success');
      assert.ok(first.request_id, 'made by a request: its id');
      const times = all.map((e) => e.occurred_at);
      assert.deepEqual([...times].sort(), times, 'oldest first');
      const ofPartner = await exported(since, partner);
      assert.ok(ofPartner.length > 0);
      assert.ok(
        ofPartner.every((e) => e.tenant_id === partner || e.tenant_id === child),
        'the partner and its child only',
      );
      assert.ok(!ofPartner.some((e) => e.tenant_id === other));
      assert.deepEqual(await exported(new Date(t.clock.now().getTime() + 1), null), [], 'nothing after now');
    });

    it('goes past a batch (1000) without losing or repeating an event, even at equal times', async () => {
      t.clock.advance(60_000);
      const since = t.clock.now();
      const at = t.clock.now();
      for (let i = 0; i < 1003; i++) {
        await t.service.store.audit.insertEvent({
          occurredAt: at,
          tenantId: '1',
          actor: { kind: 'operator', id: 'test' },
          action: 'test.batch',
          target: { kind: 'tenant', id: String(i) },
        });
      }
      const rows = (await exported(since, null)).filter((e) => e.action === 'test.batch');
      assert.equal(rows.length, 1003);
      assert.equal(new Set(rows.map((e) => e.id)).size, 1003);
    });
  });

  describe(`gatehouse audit export changes nothing in the database (${engine})`, () => {
    it('a database missing a migration of this version is told so, with what to do; nothing is applied', async () => {
      const db = await openTestDb(engine);
      try {
        assert.deepEqual(await pendingMigrations(db.kysely), [], 'a migrated database is current');
        const names = Object.keys(migrations).sort();
        const last = names.at(-1)!;
        await sql`delete from gatehouse_migrations where name = ${last}`.execute(db.kysely);
        assert.deepEqual(await pendingMigrations(db.kysely), [last]);
        if (engine === 'postgres') {
          // the command itself, against that database: refused, and the migration still not applied
          const config = loadConfig({ DATABASE_URL: db.url! });
          await assert.rejects(
            auditCommand(config, ['export', '--since', '1d']),
            (err: Error) =>
              err instanceof StartFailure &&
              new RegExp(`lacks 1 migration of this version of gatehouse \\(the first: ${last}\\).*gatehouse migrate`).test(err.message),
          );
          assert.deepEqual(await pendingMigrations(db.kysely), [last], 'the export applied nothing');
        }
      } finally {
        await db.close();
      }
    });
  });
}
