// Passkeys (WebAuthn credentials, docs/users.md "Passkeys"): a person's registered credentials,
// each with its id as the authenticator gave it (base64url, unique across the deployment: the
// browser names a credential by it when signing in without a password), its public key (COSE,
// not a secret), the signature counter last seen, the transports the browser reported, the name
// the person gave it, and when it was made and last used. A user's passkeys go with the user.
// Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const passkeys: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table passkeys (
        id uuid primary key,
        user_id uuid not null references users (id) on delete cascade,
        credential_id text not null,
        public_key bytea not null,
        counter bigint not null default 0,
        transports text not null default '',
        name text not null,
        created_at timestamptz not null,
        last_used_at timestamptz
      )`.execute(db);
    await sql`create unique index passkeys_credential_uq on passkeys (credential_id)`.execute(db);
    await sql`create index passkeys_user_idx on passkeys (user_id, created_at)`.execute(db);
  },
};
