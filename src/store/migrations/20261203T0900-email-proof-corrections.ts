// Two corrections to the proof of addresses (docs/users.md "Proven addresses"), found by review
// after 20261201T0900-mail-outbox shipped:
// - That migration grandfathered every existing account as proven, pending invitations and
//   squats included, so an address an administrator had merely typed kept its owner out for good.
//   Only accounts someone set up or used (a password, an authenticator, a passkey, a sign-in) or
//   signed in to through SSO stay proven: an invitation nobody used proves nothing. Told apart by the mark the grandfathering left (proven
//   at the instant of creation, which no proof since can be).
// - A new address of one's own is proven by its link only when the link was mailed through an
//   SMTP server: without one it is read from the outbox folder, by the operator, and proves
//   nothing about the address. The pending change remembers which it was.
// Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const emailProofCorrections: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table users add column pending_email_mailed boolean not null default false`.execute(db);
    await sql`
      update users set email_verified_at = null
      where email_verified_at = created_at
        and password_hash is null
        and totp_secret_sealed is null
        and last_sign_in_at is null
        and not exists (select 1 from passkeys p where p.user_id = users.id)
        and not exists (select 1 from sso_identities i where i.user_id = users.id)`.execute(db);
  },
};
