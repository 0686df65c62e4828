// preHandler after bearer-auth: the tenant the request acts in. `X-Tenant-Context` when present,
// else the principal's home tenant. A malformed value is 400; a tenant the principal's roles do
// not reach is 403 with the same answer whether or not the tenant exists.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { reaches } from '../../access/policy.js';
import type { Clock } from '../../clock.js';
import { badInput, forbidden } from '../../errors.js';
import type { Store } from '../../store/index.js';
import { TENANT_ID_PATTERN } from '../../ids.js';

export const TENANT_CONTEXT_HEADER = 'x-tenant-context';

export function tenantContext(store: Store, clock: Clock) {
  return async function resolveTenant(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const principal = request.principal;
    if (!principal) throw new Error('tenant-context runs after bearer-auth');
    const raw = request.headers[TENANT_CONTEXT_HEADER];
    let tenantId = principal.tenantId;
    if (raw !== undefined) {
      // repeated headers arrive joined ("1, 2") or as a list, and fail here like any other bad value
      if (typeof raw !== 'string' || !TENANT_ID_PATTERN.test(raw)) {
        throw badInput('X-Tenant-Context must be one tenant id (digits only, no spaces)', { header: 'X-Tenant-Context' });
      }
      tenantId = raw;
    }
    const scope = await store.tenants.findScope(tenantId);
    // without the header the request acts in the home tenant; each operation then checks its
    // own permissions (Support staff, who do not see their home tenant, can still search)
    if (!scope || (raw !== undefined && !reaches(principal, scope, clock.now()))) {
      throw forbidden(`Your roles do not reach tenant ${tenantId}`);
    }
    request.caller = { principal, tenant: scope };
  };
}
