// Upgrading a database of the release before SSO domains proven by DNS (migration
// 20261201T1000-sso-domain-proofs): the domains connections claimed were routing people, so they
// are kept proven (no deployment stops signing people in), without a value, with the problem that
// says what to do, due for a check 30 days later; from then on several connections may claim a
// domain, and at most one holds it proven.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrateUpTo, openEmptyTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

const BEFORE = '20261130T1210-process-heartbeats';

for (const engine of engines()) {
  describe(`upgrade to SSO domains proven by DNS (${engine})`, () => {
    let db: Db;
    const first = randomUUID();
    const second = randomUUID();
    const claimedAt = new Date('2026-11-25T10:00:00Z');
    let upgradedAt: Date;

    before(async () => {
      db = await openEmptyTestDb(engine);
      await migrateUpTo(db, BEFORE);
      await sql`insert into tenants (id, name, name_normalized, path, depth, created_at, updated_at)
        values (1, 'Vendor', 'vendor', '1.', 0, now(), now())`.execute(db.kysely);
      const tenantId = '1';
      for (const id of [first, second]) {
        await sql`insert into sso_connections (id, tenant_id, name, type, status, created_by, created_at, updated_at)
          values (${id}, ${tenantId}, 'Okta', 'saml', 'Enabled', 'admin', ${claimedAt}, ${claimedAt})`.execute(db.kysely);
      }
      await sql`insert into sso_connection_domains (domain, connection_id, created_at) values ('acme.example', ${first}, ${claimedAt})`.execute(
        db.kysely,
      );
      upgradedAt = new Date();
      await migrateToLatest(db.kysely);
    });
    after(() => db.close());

    it('keeps an existing claim proven (it routes), without a value, due for a check 30 days after the upgrade', async () => {
      const row = (await sql<any>`select * from sso_connection_domains where domain = 'acme.example'`.execute(db.kysely)).rows[0];
      assert.equal(row.status, 'proven');
      assert.equal(row.challenge_hash, null);
      assert.equal(new Date(row.proven_at).getTime(), claimedAt.getTime());
      assert.match(row.check_error, /claimed before domains were proven by DNS/);
      const due = new Date(row.next_check_at).getTime() - upgradedAt.getTime();
      assert.ok(Math.abs(due - 30 * 86_400_000) < 60_000, `due ${due} ms after the upgrade`);
    });

    it('lets a second connection claim the domain (pending), and refuses a second proven claim', async () => {
      await sql`insert into sso_connection_domains (domain, connection_id, created_at, status, next_check_at)
        values ('acme.example', ${second}, now(), 'pending', now())`.execute(db.kysely);
      await assert.rejects(
        sql`update sso_connection_domains set status = 'proven' where connection_id = ${second}`.execute(db.kysely),
        (err: { code?: string }) => err.code === '23505',
      );
    });
  });
}
