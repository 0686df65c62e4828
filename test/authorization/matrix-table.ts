// The authorization table of docs/authorization.md, cell by cell, as test/authorization/matrix.test.ts
// walks it. Every Query and Mutation field of both GraphQL interfaces has at least one row; a field
// without one fails the test (deny by default). Change this table only together with the doc.
//
// The hierarchy the rows are about:
//
//   1 (vendor root)
//   ├── P1 (partner) ── C1 (child: the target), C2 (C1's sibling)
//   └── P2 (partner: another partner, the cross-tenant attacker)
//
// Targets: operations checked in the tenant act on C1; operations checked in a partner (createTenant,
// services, subscriptions, label ownership) act on P1, C1's partner. Labels are created on C1 in the
// name of P1 (owner_partner_tenant_id). Credential operations act in C1 (X-Tenant-Context: C1 for
// every actor not at home there) on a client of C1.
//
// Actors (columns):
//   anon        no token
//   P1.adm …    Administrator / Analyst / Responder / Auditor held in P1 (reaching C1 through the hierarchy)
//   C1.adm …    the same four roles held in C1 itself
//   P2.adm      Administrator of another partner
//   C2.adm      Administrator of C1's sibling
//   ops         Operations (tenant 1)
//   sup.off     Support (tenant 1), no tenant consented
//   sup.C1      Support, C1 consented (support_enabled), P1 not
//   sup.P1C1    Support, P1 and C1 consented
//   root.adm    Administrator of the vendor tenant 1 ("Administrator (in 1)")
//   self        the client itself (a client of C1 holding the Auditor role); credential rows only
//
// Cells: ok = allowed and takes effect; UN = UNAUTHENTICATED (HTTP 401); FB = FORBIDDEN; NF = NOT_FOUND
// (for a list: the target is left out, as if it did not exist); RS = RESTRICTED; -- = not applicable.

export const ACTORS = [
  'anon',
  'P1.adm',
  'P1.ana',
  'P1.res',
  'P1.aud',
  'C1.adm',
  'C1.ana',
  'C1.res',
  'C1.aud',
  'P2.adm',
  'C2.adm',
  'ops',
  'sup.off',
  'sup.C1',
  'sup.P1C1',
  'root.adm',
  'self',
] as const;
export type ActorName = (typeof ACTORS)[number];

export type Outcome = 'ok' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'RESTRICTED' | 'n/a';

const CELL: Record<string, Outcome> = { ok: 'ok', UN: 'UNAUTHENTICATED', FB: 'FORBIDDEN', NF: 'NOT_FOUND', RS: 'RESTRICTED', '--': 'n/a' };

// prettier-ignore
export const TABLE = `
operation                            | anon | P1.adm | P1.ana | P1.res | P1.aud | C1.adm | C1.ana | C1.res | C1.aud | P2.adm | C2.adm | ops | sup.off | sup.C1 | sup.P1C1 | root.adm | self
# tenant interface (/public/query)
tenants                              | UN   | ok     | ok     | ok     | ok     | ok     | ok     | ok     | ok     | NF     | NF     | ok  | NF      | ok     | ok       | ok       | --
partnerSubscriptions                 | UN   | ok     | ok     | ok     | ok     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
services                             | UN   | ok     | ok     | ok     | ok     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
createTenant                         | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
createTenant(isPartner)              | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | FB  | NF      | NF     | FB       | ok       | --
updateTenant(name)                   | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(domain)                 | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(description)            | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(allow_response_actions) | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(actions_approver)       | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(environments)           | UN   | ok     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(disable)                | UN   | ok     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(expiresAt)              | UN   | ok     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenant(clearExpiration)        | UN   | ok     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
enableTenantSupport                  | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | NF     | NF     | FB  | NF      | FB     | FB       | ok       | --
disableTenantSupport                 | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | NF     | NF     | FB  | NF      | FB     | FB       | ok       | --
createTenantLabel                    | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
createTenantLabel(restricted)        | UN   | FB     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
updateTenantLabel                    | UN   | ok     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
deleteTenantLabel                    | UN   | ok     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | ok  | NF      | FB     | FB       | ok       | --
updateTenantLabel(restricted label)  | UN   | RS     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | RS  | NF      | FB     | FB       | RS       | --
deleteTenantLabel(restricted label)  | UN   | RS     | FB     | FB     | FB     | FB     | FB     | FB     | FB     | NF     | NF     | RS  | NF      | FB     | FB       | RS       | --
assignSubscription                   | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
unassignSubscription                 | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
createService                        | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
createPartnerSubscription            | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
retirePartnerSubscription            | UN   | ok     | FB     | FB     | FB     | NF     | NF     | NF     | NF     | NF     | NF     | ok  | NF      | NF     | FB       | ok       | --
# credential interface (/graphql, acting in C1)
clients                              | UN   | ok     | ok     | ok     | ok     | ok     | ok     | ok     | ok     | FB     | FB     | ok  | FB      | ok     | ok       | ok       | ok
me                                   | UN   | ok     | ok     | ok     | ok     | ok     | ok     | ok     | ok     | FB     | FB     | ok  | FB      | ok     | ok       | ok       | ok
roles                                | UN   | ok     | ok     | ok     | ok     | ok     | ok     | ok     | ok     | FB     | FB     | ok  | FB      | ok     | ok       | ok       | ok
createClient                         | UN   | ok     | ok     | FB     | FB     | ok     | ok     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
rotateClientSecret                   | UN   | ok     | ok     | FB     | FB     | ok     | ok     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | ok
forceRotateClientSecret              | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
deleteClient                         | UN   | ok     | ok     | FB     | FB     | ok     | ok     | FB     | FB     | FB     | FB     | ok  | FB      | FB     | FB       | ok       | FB
# users (credential interface, acting in C1, on a user whose home is C1; docs/users.md)
users                                | UN   | ok     | FB     | FB     | ok     | ok     | FB     | FB     | ok     | FB     | FB     | ok  | FB      | FB     | FB       | ok       | ok
user                                 | UN   | ok     | FB     | FB     | ok     | ok     | FB     | FB     | ok     | FB     | FB     | ok  | FB      | FB     | FB       | ok       | ok
createUser                           | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
assignUserRole                       | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
removeUserRole                       | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
disableUser                          | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
enableUser                           | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
resetUserSignIn                      | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
unlockUserSignIn                     | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
deleteUser                           | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | FB
# SSO connections (tenant interface, X-Tenant-Context: C1, on a connection of C1; docs/sso.md)
ssoConnections                       | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
ssoConnection                        | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
auditEvents                          | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
getSSOConnectionConfig               | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
createSSOConnection                  | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
updateSSOConnection                  | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
deleteSSOConnection                  | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
refreshSSOConnectionMetadata         | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
checkSSODomain                       | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
regenerateSSODomainChallenge         | UN   | ok     | FB     | FB     | FB     | ok     | FB     | FB     | FB     | FB     | FB     | FB  | FB      | FB     | FB       | ok       | --
`;

/** The table as rows: operation -> actor -> expected outcome. Throws on a malformed table. */
export function parseTable(text: string = TABLE): Map<string, Record<ActorName, Outcome>> {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const header = lines[0]!.split('|').map((c) => c.trim());
  if (header[0] !== 'operation' || header.slice(1).join(',') !== ACTORS.join(',')) {
    throw new Error(`table header must be: operation | ${ACTORS.join(' | ')}`);
  }
  const rows = new Map<string, Record<ActorName, Outcome>>();
  for (const line of lines.slice(1)) {
    const cells = line.split('|').map((c) => c.trim());
    const [op, ...outcomes] = cells;
    if (!op || outcomes.length !== ACTORS.length) throw new Error(`table row "${line}" must have ${ACTORS.length} cells`);
    if (rows.has(op)) throw new Error(`table row "${op}" appears twice`);
    const row = {} as Record<ActorName, Outcome>;
    ACTORS.forEach((actor, i) => {
      const outcome = CELL[outcomes[i]!];
      if (!outcome) throw new Error(`table row "${op}", column ${actor}: unknown cell "${outcomes[i]}"`);
      row[actor] = outcome;
    });
    rows.set(op, row);
  }
  return rows;
}

/**
 * updateTenant is two permissions (docs/authorization.md): the profile ("edit", checked in the
 * target) and the limits ("manage", checked in the parent). Every TenantUpdateInput field is one
 * or the other; a new field without a decision fails the test.
 */
export const TENANT_UPDATE_FIELDS: Record<string, 'edit' | 'manage'> = {
  name: 'edit',
  domain: 'edit',
  description: 'edit',
  allow_response_actions: 'edit',
  actions_approver: 'edit',
  environments: 'manage',
  disable: 'manage',
  expiresAt: 'manage',
  clearExpiration: 'manage',
};
