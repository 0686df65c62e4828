// The mail outbox (src/mail/): a row per message, written in the transaction of the change that
// causes it, delivered by whichever process claims it (`for update skip locked`, with a lease so a
// process that dies mid-send lets another retry). The body is sealed (crypto/sealed-box.ts: it may
// carry a one-time link) and dropped once delivered. Also the proof of addresses (docs/users.md):
// an address is unique among the accounts that proved it, and within a tenant; existing accounts
// are grandfathered as proven (they were unique); a new address of one's own waits, with the digest
// of the link mailed to it, until that link is followed. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const mailOutbox: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table mail_outbox (
        id uuid primary key,
        tenant_id bigint,
        template text not null,
        to_address text not null,
        subject text not null,
        body_sealed text,
        status text not null check (status in ('queued', 'sending', 'sent', 'failed')),
        attempts integer not null default 0,
        next_attempt_at timestamptz not null,
        lease_until timestamptz,
        last_error text,
        created_at timestamptz not null,
        sent_at timestamptz
      )`.execute(db);
    await sql`create index mail_outbox_due_idx on mail_outbox (next_attempt_at) where status in ('queued', 'sending')`.execute(db);
    await sql`create index mail_outbox_created_idx on mail_outbox (created_at, id)`.execute(db);

    await sql`
      alter table users
        add column email_verified_at timestamptz,
        add column email_superseded_at timestamptz,
        add column setup_link_mailed boolean not null default false,
        add column pending_email text,
        add column pending_email_token_hash bytea,
        add column pending_email_expires_at timestamptz`.execute(db);
    await sql`update users set email_verified_at = created_at`.execute(db);
    await sql`drop index users_email_uq`.execute(db);
    await sql`create unique index users_email_proven_uq on users (email_normalized) where email_verified_at is not null`.execute(db);
    await sql`create unique index users_tenant_email_uq on users (tenant_id, email_normalized)`.execute(db);
    await sql`create index users_email_idx on users (email_normalized, created_at)`.execute(db);
  },
};
