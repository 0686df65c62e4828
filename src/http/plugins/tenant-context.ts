// preHandler after bearer-auth: the tenant the request acts in, `X-Tenant-Context` when present,
// else the principal's home tenant (TenantService.actingTenant decides). A malformed header is 400.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badInput } from '../../errors.js';
import { TENANT_ID_PATTERN } from '../../ids.js';
import type { Services } from '../../services.js';

export const TENANT_CONTEXT_HEADER = 'x-tenant-context';

export function tenantContext(services: Pick<Services, 'tenants'>) {
  return async function resolveTenant(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const principal = request.principal;
    if (!principal) throw new Error('tenant-context runs after bearer-auth');
    const raw = request.headers[TENANT_CONTEXT_HEADER];
    // repeated headers arrive joined ("1, 2") or as a list, and fail here like any other bad value
    if (raw !== undefined && (typeof raw !== 'string' || !TENANT_ID_PATTERN.test(raw))) {
      throw badInput('X-Tenant-Context must be one tenant id (digits only, no spaces)', { header: 'X-Tenant-Context' });
    }
    request.caller = { principal, tenant: await services.tenants.actingTenant(principal, raw) };
  };
}
