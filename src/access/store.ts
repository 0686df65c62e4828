// Loading the principal behind a verified token, on every request (as of the last change: the
// persister's cache is voided by every write that matters, docs/performance.md): a revoked client, a
// revoked secret or a disabled user stops working at once, and role changes apply at once.
import type { Principal, RoleAssignment } from './principal.js';

export interface PrincipalStore {
  /** The client if it is live and the secret its token was obtained with is not revoked. */
  findClientPrincipal(clientUuid: string, secretId: string): Promise<Principal | undefined>;
  findUserPrincipal(userId: string): Promise<Principal | undefined>;
  /** The principal's role assignments, expired ones included. */
  findAssignments(kind: Principal['kind'], principalId: string): Promise<RoleAssignment[]>;
}
