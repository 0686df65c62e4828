// SSO domains proven by DNS (docs/sso.md), for tests: a domain proven the real way (its TXT record
// set on the loopback DNS responder, then checkSSODomain), or, for the tests whose subject is not
// the proof (sign-in, the ACS, the console's other pages, the CLI), marked proven directly in the
// store, as a check that found the record would leave it.
import assert from 'node:assert/strict';
import type { TestApp } from './app.js';
import type { TestDnsServer } from './dns-server.js';

/** Marks a connection's claim of `domain` proven in the database (no DNS involved; not due for a
 *  re-check for a year, so the periodic check leaves it alone). */
export async function markDomainProven(t: TestApp, connectionId: string, domain: string): Promise<void> {
  const now = t.clock.now();
  const done = await t.db.kysely
    .updateTable('sso_connection_domains')
    .set({
      status: 'proven',
      proven_at: now,
      checked_at: now,
      check_error: null,
      failing_since: null,
      next_check_at: new Date(now.getTime() + 365 * 86_400_000),
    })
    .where('connection_id', '=', connectionId)
    .where('domain', '=', domain)
    .executeTakeFirst();
  assert.equal(Number(done.numUpdatedRows), 1, `connection ${connectionId} claims ${domain}`);
}

/** Every domain of a connection marked proven (markDomainProven). */
export async function markAllProven(t: TestApp, connectionId: string): Promise<void> {
  const rows = await t.db.kysely.selectFrom('sso_connection_domains').select('domain').where('connection_id', '=', connectionId).execute();
  for (const r of rows) await markDomainProven(t, connectionId, r.domain);
}

/** The TXT value a mutation's answer issued for `domain` (domainProofs.txtRecordValue). */
export function issuedValue(connection: { domainProofs: { domain: string; txtRecordValue: string | null }[] }, domain: string): string {
  const value = connection.domainProofs.find((d) => d.domain === domain)?.txtRecordValue;
  assert.ok(value, `a value issued for ${domain}`);
  return value;
}

/** Publishes the value on the responder and asks the service to check it now, as the tenant's
 *  Administrator would; answers the domain's proof as checkSSODomain returned it. */
export async function proveByDns(
  t: TestApp,
  dns: TestDnsServer,
  token: string,
  tenant: string,
  connectionId: string,
  domain: string,
  value: string,
): Promise<{ status: string; problem: string | null }> {
  dns.setTxt(`_gatehouse-challenge.${domain}`, [value]);
  const res = await t.gql(
    token,
    'mutation($id: ID!, $d: String!) { checkSSODomain(connectionID: $id, domain: $d) { domainProofs { domain status problem } } }',
    { id: connectionId, d: domain },
    { path: '/public/query', tenant },
  );
  assert.equal(res.body.errors, undefined, res.text);
  return res.body.data.checkSSODomain.domainProofs.find((d: { domain: string }) => d.domain === domain);
}
