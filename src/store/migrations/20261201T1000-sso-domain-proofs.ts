// SSO domains proven by DNS (docs/sso.md, "Domains proven by DNS"): a claim of a domain is no
// longer the domain's one row in the whole service. Several connections may claim a domain
// (pending), at most one holds it proven (a partial unique index settles two proofs at the same
// instant), and each claim keeps its check: the digest of the value shown once, when it was
// proven, last checked, what was wrong, since when a proven domain has failed its re-checks, and
// when it is checked next (the job's index).
//
// Claims that exist at the upgrade were routing people already: they are kept proven (nothing
// stops working), without a value, and due for a check 30 days later. A check without a value
// fails, so a tenant gets a value (regenerateSSODomainChallenge) and publishes it within those 30
// days (plus the grace period of a failing proven domain), or the domain is lost. Frozen once shipped.
import { sql, type Kysely, type Migration } from 'kysely';

export const ssoDomainProofs: Migration = {
  async up(db: Kysely<unknown>) {
    await sql`alter table sso_connection_domains drop constraint sso_connection_domains_pkey`.execute(db);
    await sql`alter table sso_connection_domains add primary key (connection_id, domain)`.execute(db);
    await sql`alter table sso_connection_domains
      add column status text not null default 'proven' check (status in ('pending', 'proven', 'lost')),
      add column challenge_hash bytea,
      add column proven_at timestamptz,
      add column checked_at timestamptz,
      add column check_error text,
      add column failing_since timestamptz,
      add column next_check_at timestamptz`.execute(db);
    await sql`update sso_connection_domains set
      proven_at = created_at,
      next_check_at = now() + interval '30 days',
      check_error = 'claimed before domains were proven by DNS: get a value and publish the TXT record within 30 days of the upgrade, or the domain stops routing'`.execute(
      db,
    );
    await sql`alter table sso_connection_domains alter column status drop default`.execute(db);
    await sql`alter table sso_connection_domains alter column next_check_at set not null`.execute(db);
    // sign-in routes an address by its domain to the one connection that proved it
    await sql`create unique index sso_connection_domains_proven_uq on sso_connection_domains (domain) where status = 'proven'`.execute(db);
    // who else claims a domain (the console's "proven by another connection", the operator's release)
    await sql`create index sso_connection_domains_domain_idx on sso_connection_domains (domain)`.execute(db);
    // the periodic check's next claims
    await sql`create index sso_connection_domains_due_idx on sso_connection_domains (next_check_at)`.execute(db);
  },
};
