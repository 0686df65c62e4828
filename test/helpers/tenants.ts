// Seed builders for the tenant interface: tenants are created through createTenant, support
// access through enableTenantSupport, like a user would.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TestApp, Response } from './app.js';

export const TENANT_PATH = '/public/query';

/** POST a document to the tenant interface. */
export function tq(t: TestApp, token: string, query: string, variables?: Record<string, unknown>, tenant?: string): Promise<Response> {
  return t.gql(token, query, variables, { path: TENANT_PATH, ...(tenant ? { tenant } : {}) });
}

export interface NewTenantOptions {
  name?: string;
  isPartner?: boolean;
  environments?: string[];
  labels?: { name: string; value?: string; owner_partner_tenant_id?: string }[];
  supportEnabled?: boolean;
  token?: string;
}

/** Creates a tenant under `parentId` with the root admin (or `token`); returns its id. */
export async function createTenant(t: TestApp, parentId: string, opts: NewTenantOptions = {}): Promise<string> {
  const token = opts.token ?? (await t.rootToken());
  const res = await tq(t, token, `mutation($t: TenantCreateInput!) { createTenant(newTenant: $t) { id } }`, {
    t: {
      name: opts.name ?? `tenant-${randomUUID().slice(0, 8)}`,
      partnerTenantID: parentId,
      ...(opts.isPartner ? { isPartner: true } : {}),
      ...(opts.environments ? { environments: opts.environments } : {}),
      ...(opts.labels ? { labels: opts.labels } : {}),
    },
  });
  assert.equal(res.body.errors, undefined, res.text);
  const id = res.body.data.createTenant.id as string;
  if (opts.supportEnabled) {
    const s = await tq(t, await t.rootToken(), `mutation($id: ID!) { enableTenantSupport(tenantID: $id) { id } }`, { id });
    assert.equal(s.body.errors, undefined, s.text);
  }
  return id;
}

/** The stored state of a tenant: its row, its environments and its audit count, to prove a refused update changed nothing. */
export async function tenantSnapshot(t: TestApp, id: string) {
  const tenant = await t.db.kysely.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const envs = await t.db.kysely.selectFrom('tenant_environments').selectAll().where('tenant_id', '=', id).orderBy('name').execute();
  // a refusal's own event (authorization.refused) and a staff visit's (support.accessed) are not
  // changes of the tenant (as rowCounts)
  const audit = await t.db.kysely
    .selectFrom('audit_events')
    .select('id')
    .where('tenant_id', '=', id)
    .where('action', 'not in', ['authorization.refused', 'support.accessed'])
    .execute();
  return { tenant, envs, audit: audit.length };
}
