// Seed builders. Clients go through the public GraphQL interface, like a user would create them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { TestApp } from './app.js';
import { createTenant } from './tenants.js';

export interface SeededClient {
  id: string;
  clientId: string;
  secret: string;
  tenantId: string;
}

export const CREATE_CLIENT = `mutation($name: String!, $roles: [ID!]) {
  createClient(name: $name, roles: $roles) { client { id client_id tenant_id roles } client_secret }
}`;

export async function createClient(t: TestApp, token: string, name: string, opts: { roles?: string[]; tenant?: string } = {}): Promise<SeededClient> {
  const res = await t.gql(token, CREATE_CLIENT, { name, ...(opts.roles ? { roles: opts.roles } : {}) }, { tenant: opts.tenant });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.errors, undefined, res.text);
  const c = res.body.data.createClient;
  return { id: c.client.id, clientId: c.client.client_id, secret: c.client_secret, tenantId: c.client.tenant_id };
}

/** A client with the given roles in a tenant, and its token. */
export async function clientWithRoles(t: TestApp, tenant: string, roles: string[], name = `c-${randomUUID().slice(0, 8)}`) {
  const client = await createClient(t, await t.rootToken(), name, { roles, tenant });
  return { ...client, token: await t.token(client.clientId, client.secret) };
}

/** A tenant under a partner, created through the tenant interface like a user would (see
 *  helpers/tenants.ts); kept under this name for the credential tests that use it. */
export function seedTenant(
  t: TestApp,
  parentId: string,
  opts: { name?: string; isPartner?: boolean; supportEnabled?: boolean } = {},
): Promise<string> {
  return createTenant(t, parentId, opts);
}

/** Every table a mutation writes. */
export const WRITTEN_TABLES = [
  'tenants',
  'tenant_environments',
  'tenant_labels',
  'services',
  'partner_subscriptions',
  'tenant_subscriptions',
  'clients',
  'client_secrets',
  'role_assignments',
  'client_creations',
  'audit_events',
  'users',
  'user_recovery_codes',
  'passkeys',
  'sso_connections',
  'sso_connection_domains',
  'sso_connection_testers',
  'sso_certificates',
  'saml_requests',
  'saml_assertions_used',
  'sso_identities',
  'mail_outbox',
] as const;

/**
 * Row counts of every table a mutation writes, to prove a rejected request wrote nothing. The
 * audit event that records a refusal itself (`authorization.refused`: a mutation refused for the
 * caller's roles) is not counted: it is what a refusal writes, not a change it made. The
 * authorization matrix asserts that event, one for each refused cell (test/authorization), and
 * the audit trail's tests what it holds.
 */
export async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const tables = WRITTEN_TABLES;
  const out: Record<string, number> = {};
  for (const table of tables) {
    const r =
      table === 'audit_events'
        ? await sql<{
            n: string;
          }>`select count(*)::text as n from audit_events where action not in ('authorization.refused', 'support.accessed')`.execute(t.db.kysely)
        : await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(t.db.kysely);
    out[table] = Number(r.rows[0]!.n);
  }
  return out;
}
