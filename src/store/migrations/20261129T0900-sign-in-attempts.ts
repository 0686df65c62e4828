// Sign-in attempts (attempts/model.ts): a count may now be a window that begins at its first
// attempt, so the first is recorded; the attempt before the last too, so that an attempt given
// back (it succeeded) does not move the count's delay on; and the browsers recognised for an account (a browser that
// signed in to it before keeps its own allowance, whatever others try: OWASP's device cookie).
// The cookie holds 256 random bits; the row only their SHA-256. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const signInAttempts: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table sign_in_failures add column first_failure_at timestamptz`.execute(db);
    await sql`update sign_in_failures set first_failure_at = last_failure_at`.execute(db);
    await sql`alter table sign_in_failures alter column first_failure_at set not null`.execute(db);
    await sql`alter table sign_in_failures add column previous_failure_at timestamptz`.execute(db);
    await sql`create index sign_in_failures_last_idx on sign_in_failures (last_failure_at)`.execute(db);
    await sql`
      create table recognised_browsers (
        browser_hash bytea not null,
        user_id uuid not null references users (id) on delete cascade,
        recognised_at timestamptz not null,
        expires_at timestamptz not null,
        primary key (browser_hash, user_id)
      )`.execute(db);
    await sql`create index recognised_browsers_user_idx on recognised_browsers (user_id)`.execute(db);
    await sql`create index recognised_browsers_expires_idx on recognised_browsers (expires_at)`.execute(db);
  },
};
