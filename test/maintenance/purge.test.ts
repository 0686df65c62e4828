// The purge of rows that only pile up (src/maintenance/purge.ts), on both engines: sessions past
// their absolute or idle end go, live ones stay; device authorizations go a day after they expired;
// failure counts go after their quiet hour, and a live count stays in force; SAML requests and used
// assertion ids go once past their time; audit events once past their retention.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ATTEMPT_RULES, attemptKey } from '../../src/attempts/model.js';
import { purgeExpired } from '../../src/maintenance/purge.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';

for (const engine of engines()) {
  describe(`purge of expired rows (${engine})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    const purge = () =>
      purgeExpired(t.service.store, t.clock, { sessionIdleSeconds: t.config.sessionIdleSeconds, auditRetentionDays: t.config.auditRetentionDays });
    const count = async (table: string) =>
      Number((await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}`.execute(t.db.kysely)).rows[0]!.n);

    it('deletes sessions past their idle or absolute end, keeps live ones', async () => {
      await purge();
      const sessions = t.service.services.sessions;
      const idle = await sessions.start();
      t.clock.advance((t.config.sessionIdleSeconds - 60) * 1000);
      const live = await sessions.start();
      t.clock.advance(120_000);
      assert.equal((await purge()).sessions, 1, 'the idle one');
      assert.equal(await sessions.find(idle.secret), undefined);
      assert.ok(await sessions.find(live.secret), 'the live one stays');
      assert.equal(await count('sessions'), 1);
    });

    it('deletes device authorizations a day after they expired', async () => {
      await t.service.services.device.start('gatehouse-cli', 'someone@example.com', '192.0.2.5');
      t.clock.advance(601_000);
      assert.equal((await purge()).deviceAuthorizations, 0, 'an expired code still answers expired_token for a day');
      t.clock.advance(24 * 3600_000);
      assert.equal((await purge()).deviceAuthorizations, 1);
      assert.equal(await count('device_authorizations'), 0);
    });

    it('deletes failure counts after their quiet hour; a count in force stays', async () => {
      const signIn = t.service.services.signIn;
      const sessions = t.service.services.sessions;
      const fail = async (address: string) => {
        const { secret } = await sessions.start();
        await signIn.email((await sessions.find(secret))!, 'nobody@example.com');
        await signIn.password((await sessions.find(secret))!, 'wrong password!!', { address });
      };
      await fail('192.0.2.70');
      t.clock.advance(30 * 60_000);
      await fail('192.0.2.71');
      t.clock.advance(31 * 60_000);
      const before = await count('sign_in_failures');
      const purged = await purge();
      // the first address's counts (address, account|address) are past the hour; the account's own
      // count and the second address's are not
      assert.equal(purged.failureCounts, 2);
      assert.equal(await count('sign_in_failures'), before - 2);
    });

    it("keeps the 30-day count of second-factor codes for its 30 days, past the others' hour", async () => {
      const month = { key: attemptKey('secondFactorMonth', 'purged@example.com'), rule: ATTEMPT_RULES.secondFactorMonth };
      await t.service.store.attempts.reserveAttempts([month], t.clock.now());
      t.clock.advance(2 * 3_600_000);
      await purge();
      assert.equal((await t.service.store.attempts.findAttempts([month.key])).size, 1, 'kept past the hour');
      t.clock.advance(30 * 86_400_000);
      assert.ok((await purge()).failureCounts >= 1);
      assert.equal((await t.service.store.attempts.findAttempts([month.key])).size, 0, 'gone after its 30 days');
    });

    it('deletes SAML requests and used-assertion ids once they can no longer be answered or replayed', async () => {
      await purge();
      const id = (await t.db.kysely.selectFrom('tenants').select('id').where('id', '=', '1').executeTakeFirstOrThrow()).id;
      const connection = crypto.randomUUID();
      const now = t.clock.now();
      const later = (ms: number) => new Date(now.getTime() + ms);
      await t.db.kysely
        .insertInto('sso_connections')
        .values({
          id: connection,
          tenant_id: id,
          name: 'purge',
          type: 'saml',
          status: 'Created',
          created_by: 'test',
          created_at: now,
          updated_at: now,
        })
        .execute();
      const sso = t.service.store.sso;
      await sso.insertSamlRequest({
        id: '_old',
        connectionId: connection,
        sessionIdHash: Buffer.alloc(32),
        email: null,
        createdAt: now,
        expiresAt: later(60_000),
      });
      await sso.insertSamlRequest({
        id: '_new',
        connectionId: connection,
        sessionIdHash: Buffer.alloc(32),
        email: null,
        createdAt: now,
        expiresAt: later(600_000),
      });
      assert.equal(await sso.useAssertion(connection, 'a-old', later(60_000)), true);
      assert.equal(await sso.useAssertion(connection, 'a-new', later(600_000)), true);
      t.clock.advance(120_000);
      assert.equal((await purge()).samlRecords, 2, 'the expired request and assertion id');
      assert.equal(await count('saml_requests'), 1);
      assert.equal(await sso.useAssertion(connection, 'a-new', later(600_000)), false, 'a live assertion id still stops a replay');
    });

    it('deletes audit events older than GATEHOUSE_AUDIT_RETENTION_DAYS, keeps younger ones', async () => {
      await purge();
      const days = t.config.auditRetentionDays;
      const now = t.clock.now().getTime();
      const event = (ageMs: number, action: string) =>
        t.service.store.audit.insertEvent({
          occurredAt: new Date(now - ageMs),
          tenantId: '1',
          actor: { kind: 'system', id: 'purge-test' },
          action,
          target: { kind: 'tenant', id: '1' },
        });
      await event(days * 86_400_000 + 1000, 'test.too_old');
      await event(days * 86_400_000 - 60_000, 'test.kept');
      assert.equal((await purge()).auditEvents, 1, 'the one past its retention');
      const left = await t.db.kysely.selectFrom('audit_events').select('action').where('action', 'like', 'test.%').execute();
      assert.deepEqual(
        left.map((r) => r.action),
        ['test.kept'],
      );
      t.clock.advance(120_000);
      assert.equal((await purge()).auditEvents, 1, 'and that one once it is past, too');
    });
  });
}
