// MailOutboxStore on Kysely (both engines). Claiming is one statement: the due rows are locked
// with `for update skip locked` (rows another process is claiming are passed over, not waited
// for), counted an attempt and leased, so each message goes to one process at a time.
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ClaimedMail, OutboxMail } from '../mail/model.js';
import type { MailOutboxStore } from '../mail/store.js';
import type { Database, MailOutboxTable } from './schema.js';

type Row = Selectable<MailOutboxTable>;

function toMail(r: Row): OutboxMail {
  return {
    id: r.id,
    tenantId: r.tenant_id === null ? null : String(r.tenant_id),
    template: r.template,
    to: r.to_address,
    subject: r.subject,
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: new Date(r.next_attempt_at),
    lastError: r.last_error,
    createdAt: new Date(r.created_at),
    sentAt: r.sent_at === null ? null : new Date(r.sent_at),
    bodyKept: r.body_sealed !== null,
  };
}

export function mailOutboxStore(db: Kysely<Database>): MailOutboxStore {
  return {
    async insertMail(m) {
      await db
        .insertInto('mail_outbox')
        .values({
          id: m.id,
          tenant_id: m.tenantId,
          template: m.template,
          to_address: m.to,
          subject: m.subject,
          body_sealed: m.bodySealed,
          status: 'queued',
          next_attempt_at: m.createdAt,
          created_at: m.createdAt,
        })
        .execute();
    },

    async claimDue(now, leaseUntil, limit) {
      const due = db
        .selectFrom('mail_outbox')
        .select('id')
        .where((eb) =>
          eb.or([
            eb.and([eb('status', '=', 'queued'), eb('next_attempt_at', '<=', now)]),
            eb.and([eb('status', '=', 'sending'), eb('lease_until', '<=', now)]),
          ]),
        )
        .orderBy('next_attempt_at')
        .limit(limit)
        .forUpdate()
        .skipLocked();
      const rows = await db
        .updateTable('mail_outbox')
        .set({ status: 'sending', lease_until: leaseUntil, attempts: sql`attempts + 1` })
        .where('id', 'in', due)
        .where('body_sealed', 'is not', null)
        .returningAll()
        .execute();
      return rows
        .map((r): ClaimedMail => ({ ...toMail(r), bodySealed: r.body_sealed! }))
        .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime());
    },

    async markSent(id, at) {
      await db
        .updateTable('mail_outbox')
        .set({ status: 'sent', sent_at: at, body_sealed: null, lease_until: null, last_error: null })
        .where('id', '=', id)
        .execute();
    },

    async markRetry(id, nextAttemptAt, error) {
      await db
        .updateTable('mail_outbox')
        .set({ status: 'queued', next_attempt_at: nextAttemptAt, lease_until: null, last_error: error })
        .where('id', '=', id)
        .execute();
    },

    async markFailed(id, error) {
      await db.updateTable('mail_outbox').set({ status: 'failed', lease_until: null, last_error: error }).where('id', '=', id).execute();
    },

    async listMail(limit, status) {
      let q = db.selectFrom('mail_outbox').selectAll();
      if (status) q = q.where('status', '=', status);
      const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toMail);
    },

    async deleteMailBefore(status, cutoff) {
      const r = await db.deleteFrom('mail_outbox').where('status', '=', status).where('created_at', '<', cutoff).executeTakeFirst();
      return Number(r.numDeletedRows);
    },

    async findMail(id) {
      const r = await db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();
      return r && { ...toMail(r), bodySealed: r.body_sealed };
    },
  };
}
