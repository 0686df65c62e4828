// Tenant interface: environments, labels, services, partner subscriptions, and the indexes the
// tenants query is served from. Frozen once shipped. Imports no application code.
import { sql, type Kysely, type Migration } from 'kysely';

export const tenantInterface: Migration = {
  async up(db: Kysely<unknown>) {
    // pg_trgm lives in public so that every schema (and every test schema) can use it; the lock
    // keeps two schemas migrating at once from racing on the database-wide extension
    await sql`select pg_advisory_xact_lock(7243003)`.execute(db);
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);

    // enabled mirrors "enabled in at least one environment", kept by the service in the same
    // transaction as the environments, so token checks and filters need no join
    await sql`alter table tenants add column enabled boolean not null default true`.execute(db);

    // ordering keys, each with id as the tie-breaker for keyset pagination
    await sql`create index tenants_order_created_idx on tenants (created_at, id)`.execute(db);
    await sql`create index tenants_order_updated_idx on tenants (updated_at, id)`.execute(db);
    await sql`create index tenants_order_name_idx on tenants (name_normalized, id)`.execute(db);
    // name search with % wildcards
    await sql`create index tenants_name_trgm_idx on tenants using gin (name_normalized public.gin_trgm_ops)`.execute(db);
    await sql`create index tenants_partners_idx on tenants (id) where is_partner`.execute(db);
    await sql`create index tenants_support_idx on tenants (id) where support_enabled`.execute(db);
    // the expiry job
    await sql`create index tenants_expiry_idx on tenants (expires_at) where enabled and expires_at is not null`.execute(db);

    await sql`
      create table tenant_environments (
        id uuid primary key,
        tenant_id bigint not null references tenants (id),
        name text not null,
        enabled boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (tenant_id, name)
      )`.execute(db);
    await sql`create index tenant_environments_filter_idx on tenant_environments (name, enabled, tenant_id)`.execute(db);

    await sql`
      create table tenant_labels (
        id uuid primary key,
        tenant_id bigint not null references tenants (id),
        name text not null,
        name_normalized text not null,
        value text,
        owner_partner_tenant_id bigint not null references tenants (id),
        restricted boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`.execute(db);
    await sql`create unique index tenant_labels_owner_name_uq on tenant_labels (tenant_id, owner_partner_tenant_id, name_normalized)`.execute(db);
    await sql`create index tenant_labels_filter_idx on tenant_labels (name_normalized, tenant_id)`.execute(db);

    await sql`
      create table services (
        id uuid primary key,
        owner_tenant_id bigint not null references tenants (id),
        name text not null,
        description text,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`.execute(db);
    await sql`create unique index services_owner_name_uq on services (owner_tenant_id, lower(name))`.execute(db);

    await sql`
      create table partner_subscriptions (
        id uuid primary key,
        partner_tenant_id bigint not null references tenants (id),
        service_id uuid not null references services (id),
        name text not null,
        name_normalized text not null,
        description text,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        retired_at timestamptz
      )`.execute(db);
    await sql`create unique index partner_subscriptions_live_name_uq on partner_subscriptions (partner_tenant_id, name_normalized) where retired_at is null`.execute(
      db,
    );
    await sql`create index partner_subscriptions_name_idx on partner_subscriptions (name_normalized)`.execute(db);

    await sql`
      create table tenant_subscriptions (
        tenant_id bigint not null references tenants (id),
        subscription_id uuid not null references partner_subscriptions (id),
        assigned_at timestamptz not null,
        assigned_by text not null,
        primary key (tenant_id, subscription_id)
      )`.execute(db);
    await sql`create index tenant_subscriptions_subscription_idx on tenant_subscriptions (subscription_id, tenant_id)`.execute(db);
  },
};
