// Who runs a command that changes the database (`gatehouse users`, `keys`, `sso`): the operating
// system's user, the audit events' actor `operator` (docs/operations.md, "Audit trail"). Whoever
// runs such a command holds the database: the name is what the machine says, not a proof.
import { userInfo } from 'node:os';
import type { OperatorActor } from '../audit/model.js';

export function currentOperator(): OperatorActor {
  let name = 'unknown';
  try {
    name = userInfo().username || 'unknown';
  } catch {
    // no user database entry for this uid (a container's arbitrary uid)
  }
  return { kind: 'operator', id: name };
}
