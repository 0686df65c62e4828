// Who is calling: an API client or a user, with the role assignments loaded for this request.
import type { RequestInfo } from '../audit/model.js';

export interface RoleAssignment {
  id: string;
  tenantId: string;
  roleId: string;
  expiresAt: Date | null;
}

export interface Principal {
  kind: 'client' | 'user';
  /** UUID of the client or user */
  id: string;
  /** home tenant: the acting tenant when a request names none */
  tenantId: string;
  /** the public client_id, for clients */
  clientId?: string;
  /** the secret a client token was obtained with (revoking it ends the token) */
  secretId?: string;
  assignments: RoleAssignment[];
  /** tokens issued before this instant are void (its home tenant was disabled then; re-enabling
   *  the tenant does not revive them); null when access was never cut */
  tokensValidAfter: Date | null;
  /** the request this principal was authenticated for (set by the transport; audit events carry
   *  its id and address: audit/model.ts principalEvent) */
  request?: RequestInfo;
}

/** What the tenant-scoped checks need to know of a tenant. */
export interface TenantScope {
  id: string;
  /** ancestry, root first, ending with this tenant's own id: '1.5.23.' */
  path: string;
  supportEnabled: boolean;
  supportExpiresAt: Date | null;
}

export function ancestorsOrSelf(scope: Pick<TenantScope, 'path'>): string[] {
  return scope.path.split('.').filter((part) => part !== '');
}

/** A request's principal and the tenant it acts in (X-Tenant-Context, else its home tenant). */
export interface Caller {
  principal: Principal;
  tenant: TenantScope;
}
