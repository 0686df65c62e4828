// People: what a user needs beyond the bootstrap row of the foundation (display name, a password
// set later through a one-time set-up link, a sealed TOTP secret with its last used time step,
// recovery codes, and the instant their tokens were cut). Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const users: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      alter table users
        add column display_name text not null default '',
        alter column password_hash drop not null,
        add column totp_secret_sealed text,
        add column totp_last_step bigint,
        add column setup_token_hash bytea,
        add column setup_expires_at timestamptz,
        add column tokens_valid_after timestamptz,
        add column created_by text,
        add column updated_by text,
        add column last_sign_in_at timestamptz`.execute(db);
    await sql`create index users_tenant_idx on users (tenant_id, created_at, id)`.execute(db);
    await sql`create unique index users_setup_token_uq on users (setup_token_hash) where setup_token_hash is not null`.execute(db);
    await sql`
      create table user_recovery_codes (
        user_id uuid not null references users (id) on delete cascade,
        code_hash bytea not null,
        created_at timestamptz not null,
        used_at timestamptz,
        primary key (user_id, code_hash)
      )`.execute(db);
  },
};
