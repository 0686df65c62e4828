// SessionStore on Kysely (both engines).
import { type Kysely, sql } from 'kysely';
import type { SessionState } from '../sessions/model.js';
import type { SessionStore } from '../sessions/store.js';
import type { Database } from './schema.js';

export function sessionStore(db: Kysely<Database>): SessionStore {
  return {
    async insertSession(s) {
      await db
        .insertInto('sessions')
        .values({
          id_hash: s.idHash,
          user_id: s.userId,
          signed_in_at: s.signedInAt,
          state: JSON.stringify(s.state),
          csrf_token: s.csrfToken,
          created_at: s.createdAt,
          last_seen_at: s.lastSeenAt,
          expires_at: s.expiresAt,
        })
        .execute();
    },

    async findSession(idHash) {
      const row = await db
        .selectFrom('sessions as s')
        .leftJoin('users as u', 'u.id', 's.user_id')
        .leftJoin('tenants as t', 't.id', 'u.tenant_id')
        .select([
          's.id_hash',
          's.user_id',
          's.signed_in_at',
          's.state',
          's.csrf_token',
          's.created_at',
          's.last_seen_at',
          's.expires_at',
          'u.id as found_user',
          'u.disabled_at',
          'u.email_superseded_at',
          'u.tokens_valid_after as user_cut',
          't.tokens_valid_after as tenant_cut',
          't.enabled as tenant_enabled',
        ])
        .where('s.id_hash', '=', idHash)
        .executeTakeFirst();
      if (!row) return undefined;
      const cuts = [row.user_cut, row.tenant_cut].filter((d): d is Date => d instanceof Date);
      return {
        idHash: Buffer.from(row.id_hash),
        userId: row.user_id,
        signedInAt: row.signed_in_at,
        state: (typeof row.state === 'string' ? JSON.parse(row.state) : row.state) as SessionState,
        csrfToken: row.csrf_token,
        createdAt: row.created_at,
        lastSeenAt: row.last_seen_at,
        expiresAt: row.expires_at,
        user:
          row.found_user === null
            ? null
            : {
                disabledAt: row.disabled_at,
                emailSupersededAt: row.email_superseded_at,
                tokensValidAfter: cuts.length ? new Date(Math.max(...cuts.map((d) => d.getTime()))) : null,
                tenantEnabled: row.tenant_enabled === true,
              },
      };
    },

    async deleteSession(idHash) {
      const r = await db.deleteFrom('sessions').where('id_hash', '=', idHash).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },

    async touchSession(idHash, at) {
      await db.updateTable('sessions').set({ last_seen_at: at }).where('id_hash', '=', idHash).execute();
    },

    async patchSessionState(idHash, patch) {
      // jsonb operators, on the row as it is when updated: `- key` removes a key, `||` sets keys
      // (its right side wins); what another request wrote meanwhile under other keys stays
      const kept = (patch.remove ?? []).reduce((state, key) => sql`(${state} - ${key}::text)`, sql`state`);
      await db
        .updateTable('sessions')
        .set({ state: sql`${kept} || ${JSON.stringify(patch.set ?? {})}::jsonb` })
        .where('id_hash', '=', idHash)
        .execute();
    },

    async takeSessionStateKey(idHash, key) {
      // the row locked as read (FOR UPDATE): a second request taking the key at once waits, then
      // finds it gone and updates nothing (PostgreSQL reads the row again after the lock)
      const row = await db
        .updateTable('sessions as s')
        .from(
          db
            .selectFrom('sessions')
            // as text, read alike on both engines (a jsonb string would come back parsed or not)
            .select(['id_hash', sql<string>`(state -> ${key}::text)::text`.as('taken')])
            .where('id_hash', '=', idHash)
            .where(sql<boolean>`(state -> ${key}::text) is not null`)
            .forUpdate()
            .as('old'),
        )
        .set({ state: sql`s.state - ${key}::text` })
        .whereRef('s.id_hash', '=', 'old.id_hash')
        .returning(sql<string>`old.taken`.as('taken'))
        .executeTakeFirst();
      return row ? (JSON.parse(row.taken) as never) : undefined;
    },

    async deleteUserSessions(userId) {
      await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
    },

    async listUserSessions(userId) {
      const rows = await db
        .selectFrom('sessions')
        .select(['id_hash', 'user_id', 'signed_in_at', 'created_at', 'last_seen_at', 'expires_at'])
        .where('user_id', '=', userId)
        .orderBy('last_seen_at', 'desc')
        .orderBy('id_hash')
        .execute();
      return rows.map((row) => ({
        idHash: Buffer.from(row.id_hash),
        userId: row.user_id,
        signedInAt: row.signed_in_at,
        createdAt: row.created_at,
        lastSeenAt: row.last_seen_at,
        expiresAt: row.expires_at,
      }));
    },

    async deleteOtherUserSessions(userId, keepIdHash) {
      const r = await db.deleteFrom('sessions').where('user_id', '=', userId).where('id_hash', '!=', keepIdHash).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async recordSignIn(userId, at) {
      await db.updateTable('users').set({ last_sign_in_at: at }).where('id', '=', userId).execute();
    },

    async deleteExpiredSessions(now, idleSince) {
      const r = await db
        .deleteFrom('sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
