// The name a mail or page gives a tenant: its name, or `tenant <id>` when it is gone meanwhile.
import type { TenantStore } from './store.js';

export async function tenantNameOf(tenants: Pick<TenantStore, 'findTenant'>, tenantId: string): Promise<string> {
  return (await tenants.findTenant(tenantId))?.name ?? `tenant ${tenantId}`;
}
