// SAML SSO connections (docs/sso.md): the connection, the e-mail domains it serves (each domain
// in at most one connection of the whole service: the primary key settles a race between two
// tenants), its testers, up to three IdP signing certificates, and what sign-in through it keeps:
// the AuthnRequests issued (so any process can finish a sign-in another began), the assertion ids
// already used (replay), and which user a (connection, NameID) pair is. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const sso: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table sso_connections (
        id uuid primary key,
        tenant_id bigint not null references tenants (id) on delete cascade,
        name text not null,
        type text not null check (type in ('saml')),
        status text not null check (status in ('Created', 'Testing', 'Enabled', 'Disabled')),
        idp_entity_id text,
        sign_in_endpoint text,
        metadata_url text,
        metadata_refreshed_at timestamptz,
        metadata_refresh_error text,
        created_by text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`.execute(db);
    await sql`create index sso_connections_tenant_idx on sso_connections (tenant_id, created_at, id)`.execute(db);
    await sql`create index sso_connections_metadata_idx on sso_connections (metadata_refreshed_at) where metadata_url is not null`.execute(db);
    await sql`
      create table sso_connection_domains (
        domain text primary key,
        connection_id uuid not null references sso_connections (id) on delete cascade,
        created_at timestamptz not null
      )`.execute(db);
    await sql`create index sso_connection_domains_connection_idx on sso_connection_domains (connection_id)`.execute(db);
    await sql`
      create table sso_connection_testers (
        connection_id uuid not null references sso_connections (id) on delete cascade,
        email text not null,
        created_at timestamptz not null,
        primary key (connection_id, email)
      )`.execute(db);
    await sql`
      create table sso_certificates (
        id uuid primary key,
        connection_id uuid not null references sso_connections (id) on delete cascade,
        name text,
        pem text not null,
        fingerprint_sha256 text not null,
        issuer text not null,
        subject text not null,
        not_before timestamptz not null,
        expires_at timestamptz not null,
        from_metadata boolean not null,
        created_at timestamptz not null,
        unique (connection_id, fingerprint_sha256)
      )`.execute(db);
    await sql`
      create table saml_requests (
        id text primary key,
        connection_id uuid not null references sso_connections (id) on delete cascade,
        session_id_hash bytea not null,
        email text,
        user_id uuid references users (id) on delete cascade,
        ticket_hash bytea unique,
        created_at timestamptz not null,
        expires_at timestamptz not null
      )`.execute(db);
    await sql`create index saml_requests_expires_idx on saml_requests (expires_at)`.execute(db);
    await sql`
      create table saml_assertions_used (
        connection_id uuid not null references sso_connections (id) on delete cascade,
        assertion_id text not null,
        expires_at timestamptz not null,
        primary key (connection_id, assertion_id)
      )`.execute(db);
    await sql`create index saml_assertions_used_expires_idx on saml_assertions_used (expires_at)`.execute(db);
    await sql`
      create table sso_identities (
        connection_id uuid not null references sso_connections (id) on delete cascade,
        name_id text not null,
        user_id uuid not null references users (id) on delete cascade,
        created_at timestamptz not null,
        last_sign_in_at timestamptz,
        primary key (connection_id, name_id)
      )`.execute(db);
    await sql`create index sso_identities_user_idx on sso_identities (user_id)`.execute(db);
  },
};
