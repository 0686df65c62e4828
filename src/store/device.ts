// DeviceStore on Kysely (both engines).
import type { Kysely, Selectable } from 'kysely';
import type { DeviceAuthorization } from '../device/model.js';
import type { DeviceStore } from '../device/store.js';
import { rethrowUnique } from './errors.js';
import type { Database, DeviceAuthorizationsTable } from './schema.js';

function toAuthorization(r: Selectable<DeviceAuthorizationsTable>): DeviceAuthorization {
  return {
    deviceCodeHash: Buffer.from(r.device_code_hash),
    userCode: r.user_code,
    clientId: r.client_id,
    loginHint: r.login_hint,
    status: r.status,
    userId: r.user_id,
    intervalSeconds: r.interval_seconds,
    lastPolledAt: r.last_polled_at,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    requestedFrom: r.requested_from,
  };
}

export function deviceStore(db: Kysely<Database>): DeviceStore {
  return {
    async insertDeviceAuthorization(a) {
      await db
        .insertInto('device_authorizations')
        .values({
          device_code_hash: a.deviceCodeHash,
          user_code: a.userCode,
          client_id: a.clientId,
          login_hint: a.loginHint,
          status: a.status,
          user_id: a.userId,
          interval_seconds: a.intervalSeconds,
          last_polled_at: a.lastPolledAt,
          created_at: a.createdAt,
          expires_at: a.expiresAt,
          requested_from: a.requestedFrom,
        })
        .execute()
        .catch(rethrowUnique);
    },
    async lockByDeviceCode(hash) {
      const r = await db.selectFrom('device_authorizations').selectAll().where('device_code_hash', '=', hash).forUpdate().executeTakeFirst();
      return r && toAuthorization(r);
    },
    async findByUserCode(code) {
      const r = await db.selectFrom('device_authorizations').selectAll().where('user_code', '=', code).executeTakeFirst();
      return r && toAuthorization(r);
    },
    async recordPoll(hash, at, intervalSeconds) {
      await db
        .updateTable('device_authorizations')
        .set({ last_polled_at: at, interval_seconds: intervalSeconds })
        .where('device_code_hash', '=', hash)
        .execute();
    },
    async decide(code, status, userId, now) {
      const r = await db
        .updateTable('device_authorizations')
        .set({ status, user_id: userId })
        .where('user_code', '=', code)
        .where('status', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async markIssued(hash) {
      const r = await db
        .updateTable('device_authorizations')
        .set({ status: 'issued' })
        .where('device_code_hash', '=', hash)
        .where('status', '=', 'approved')
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async setStatus(hash, status) {
      await db.updateTable('device_authorizations').set({ status }).where('device_code_hash', '=', hash).execute();
    },

    async deleteExpiredDeviceAuthorizations(before) {
      const r = await db.deleteFrom('device_authorizations').where('expires_at', '<', before).executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}
