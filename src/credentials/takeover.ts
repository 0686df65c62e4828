// Who may take over a client's secret (a forced rotation hands the new secret to the caller): only
// a caller who could have given the client every role it holds, so that no one gets a client more
// powerful than one they could create (Operations may revoke any client with deleteClient, not take
// it over). The use case enforces it; the console asks it too, before offering the form.
import { mayGrant } from '../access/grants.js';
import type { Caller, RoleAssignment } from '../access/principal.js';
import { roleLabel } from '../access/roles.js';
import { forbidden } from '../errors.js';

export function assertMayTakeOver(caller: Caller, client: { roleAssignments: readonly RoleAssignment[] }, now: Date): void {
  const beyond = [...new Set(client.roleAssignments.filter((a) => !mayGrant(caller, a.roleId, now)).map((a) => a.roleId))];
  if (beyond.length > 0) {
    throw forbidden(`This client holds roles you could not give it (${beyond.map(roleLabel).join(', ')}); revoke it with deleteClient instead`);
  }
}
