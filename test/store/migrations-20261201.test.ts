// Upgrading a database of the release before mail (migrations 20261201T0900-mail-outbox and
// 20261203T0900-email-proof-corrections): the accounts someone set up or used (a password, an
// authenticator, a passkey, a sign-in) or signed in to through SSO are grandfathered as having
// proven their address (addresses were unique across the service); an invitation nobody used
// proves nothing (it may be a squat). From then on an address is unique within a tenant and among
// proven accounts only.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/store/db.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { migrateUpTo, openEmptyTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';

const BEFORE = '20261130T1210-process-heartbeats';

for (const engine of engines()) {
  describe(`upgrade to the mail outbox and proven addresses (${engine})`, () => {
    let db: Db;
    const created = new Date('2026-11-20T10:00:00Z');
    const user = (tenant: string, email: string, passwordHash: string | null = null, id = randomUUID()) =>
      (db.kysely as any)
        .insertInto('users')
        .values({ id, tenant_id: tenant, email, email_normalized: email, password_hash: passwordHash, created_at: created, updated_at: created })
        .execute();

    before(async () => {
      db = await openEmptyTestDb(engine);
      await migrateUpTo(db, BEFORE);
      const k = db.kysely as any;
      for (const [id, path] of [
        ['1', '1.'],
        ['2', '1.2.'],
      ]) {
        await k
          .insertInto('tenants')
          .values({
            id,
            parent_id: id === '1' ? null : '1',
            path,
            depth: id === '1' ? 0 : 1,
            name: `T${id}`,
            name_normalized: `t${id}`,
            created_at: created,
            updated_at: created,
          })
          .execute();
      }
      await user('1', 'old@example.com', '$argon2id$set-up');
      await user('1', 'invited@example.com');
      // in use for long, caught mid-reset (no password now): it stays proven
      await (db.kysely as any)
        .insertInto('users')
        .values({
          id: randomUUID(),
          tenant_id: '1',
          email: 'mid-reset@example.com',
          email_normalized: 'mid-reset@example.com',
          created_at: created,
          updated_at: created,
          last_sign_in_at: created,
        })
        .execute();
      const ssoUser = randomUUID();
      await user('2', 'sso@example.com', null, ssoUser);
      const connection = randomUUID();
      await k
        .insertInto('sso_connections')
        .values({
          id: connection,
          tenant_id: '2',
          name: 'IdP',
          type: 'saml',
          status: 'Enabled',
          created_by: 'test',
          created_at: created,
          updated_at: created,
        })
        .execute();
      await k
        .insertInto('sso_identities')
        .values({ connection_id: connection, name_id: 'sso@example.com', user_id: ssoUser, created_at: created })
        .execute();
      await migrateToLatest(db.kysely);
    });
    after(() => db.close());

    it('grandfathers accounts set up or signed in to through SSO as proven, not an invitation nobody used; the outbox is empty', async () => {
      const rows = await (db.kysely as any)
        .selectFrom('users')
        .select(['email', 'email_verified_at', 'email_superseded_at', 'setup_link_mailed', 'pending_email_mailed'])
        .orderBy('email')
        .execute();
      assert.deepEqual(
        rows.map((r: any) => [
          r.email,
          r.email_verified_at === null ? null : new Date(r.email_verified_at).getTime(),
          r.email_superseded_at,
          r.setup_link_mailed,
          r.pending_email_mailed,
        ]),
        [
          ['invited@example.com', null, null, false, false],
          ['mid-reset@example.com', created.getTime(), null, false, false],
          ['old@example.com', created.getTime(), null, false, false],
          ['sso@example.com', created.getTime(), null, false, false],
        ],
      );
      assert.equal((await (db.kysely as any).selectFrom('mail_outbox').selectAll().execute()).length, 0);
    });

    it('the same address in another tenant may be added unproven, not twice in one tenant, and not proven twice', async () => {
      await assert.rejects(user('1', 'old@example.com'), /users_tenant_email_uq/);
      await user('2', 'old@example.com');
      await assert.rejects(
        (db.kysely as any).updateTable('users').set({ email_verified_at: created }).where('tenant_id', '=', '2').execute(),
        /users_email_proven_uq/,
      );
    });
  });
}
