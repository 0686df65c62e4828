// Seed builders. Clients go through the public GraphQL interface, like a user would create them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { TestApp } from './app.js';

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

let seq = 0;
/** A tenant row under a parent (the tenant interface's createTenant replaces this in its own tests). */
export async function seedTenant(
  t: TestApp,
  parentId: string,
  opts: { name?: string; isPartner?: boolean; supportEnabled?: boolean } = {},
): Promise<string> {
  const parent = await t.db.kysely.selectFrom('tenants').select(['path', 'depth']).where('id', '=', parentId).executeTakeFirstOrThrow();
  const name = opts.name ?? `tenant-${++seq}-${randomUUID().slice(0, 6)}`;
  const now = t.clock.now();
  const row = await t.db.kysely
    .insertInto('tenants')
    .values({
      parent_id: parentId,
      path: '',
      depth: parent.depth + 1,
      name,
      name_normalized: name.toLowerCase(),
      is_partner: opts.isPartner ?? false,
      support_enabled: opts.supportEnabled ?? false,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await t.db.kysely
    .updateTable('tenants')
    .set({ path: `${parent.path}${row.id}.` })
    .where('id', '=', row.id)
    .execute();
  return row.id;
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
] as const;

/** Row counts of every table a mutation writes, to prove a rejected request wrote nothing. */
export async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const tables = WRITTEN_TABLES;
  const out: Record<string, number> = {};
  for (const table of tables) {
    const r = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(t.db.kysely);
    out[table] = Number(r.rows[0]!.n);
  }
  return out;
}
