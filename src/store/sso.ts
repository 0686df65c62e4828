// SsoStore on Kysely (both engines). The methods of one tenant's connections apply the tenant in
// their SQL: on the connection row itself, or, for its domains, testers and certificates, through
// the connection (`owned`: the connection's id if it is the tenant's); an insert takes its rows
// from a join with the tenant's connection, so that through another tenant it inserts nothing.
import { type Kysely, type Selectable, sql } from 'kysely';
import type { DomainClaim, SsoDomain } from '../sso/domain-proof.js';
import type { SsoCertificate, SsoConnection } from '../sso/model.js';
import type { SsoStore } from '../sso/store.js';
import { rethrowUnique } from './errors.js';
import type { Database } from './schema.js';

const connectionColumns = [
  'id',
  'tenant_id',
  'name',
  'type',
  'status',
  'idp_entity_id',
  'sign_in_endpoint',
  'metadata_url',
  'metadata_refreshed_at',
  'metadata_refresh_error',
  'created_by',
  'created_at',
  'updated_at',
] as const;

/** a certificate as selectConnections aggregates it */
interface CertificateJson {
  id: string;
  name: string | null;
  pem: string;
  fingerprint_sha256: string;
  issuer: string;
  subject: string;
  from_metadata: boolean;
  not_before_ms: number;
  expires_at_ms: number;
  created_at_ms: number;
}

/** a domain's proof as selectConnections aggregates it */
interface DomainJson {
  domain: string;
  status: SsoDomain['status'];
  created_at_ms: number;
  proven_at_ms: number | null;
  checked_at_ms: number | null;
  check_error: string | null;
  failing_since_ms: number | null;
  next_check_at_ms: number;
  proven_elsewhere: boolean;
}

type ConnectionRow = Selectable<Database['sso_connections']> & {
  domains: string[];
  domain_proofs: DomainJson[];
  testers: string[];
  certificates: CertificateJson[];
};

const ms = (v: number | string | null) => (v === null ? null : new Date(Number(v)));

function domainOf(d: DomainJson): SsoDomain {
  return {
    domain: d.domain,
    status: d.status,
    createdAt: new Date(Number(d.created_at_ms)),
    provenAt: ms(d.proven_at_ms),
    checkedAt: ms(d.checked_at_ms),
    checkError: d.check_error,
    failingSince: ms(d.failing_since_ms),
    nextCheckAt: new Date(Number(d.next_check_at_ms)),
    provenElsewhere: d.proven_elsewhere,
  };
}

export function ssoStore(db: Kysely<Database>): SsoStore {
  /** the connections of these rows (selectConnections: each with its domains, testers and certificates) */
  function complete(rows: ConnectionRow[]): SsoConnection[] {
    return rows.map((r) => ({
      id: r.id,
      tenantId: String(r.tenant_id),
      name: r.name,
      type: r.type,
      status: r.status,
      idpEntityId: r.idp_entity_id,
      signInEndpoint: r.sign_in_endpoint,
      metadataUrl: r.metadata_url,
      metadataRefreshedAt: r.metadata_refreshed_at,
      metadataRefreshError: r.metadata_refresh_error,
      createdBy: r.created_by,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      domains: r.domains,
      domainProofs: r.domain_proofs.map(domainOf),
      testers: r.testers,
      certificates: r.certificates.map(
        (c): SsoCertificate => ({
          id: c.id,
          connectionId: r.id,
          name: c.name,
          pem: c.pem,
          fingerprintSha256: c.fingerprint_sha256,
          issuer: c.issuer,
          subject: c.subject,
          notBefore: new Date(c.not_before_ms),
          expiresAt: new Date(c.expires_at_ms),
          fromMetadata: c.from_metadata,
          createdAt: new Date(c.created_at_ms),
        }),
      ),
    }));
  }

  /** A connection's domains or testers, ordered, as a JSON array (a column of selectConnections). */
  const listOf = (table: 'sso_connection_domains' | 'sso_connection_testers', column: 'domain' | 'email') => {
    const value = sql.ref(`x.${column}`);
    return sql<string[]>`(select coalesce(json_agg(${value} order by ${value}), '[]')
      from ${sql.table(table)} x where x.connection_id = sso_connections.id)`;
  };

  /** Connections with their domains, testers and certificates, in one statement (it was one for
   *  the connections and one for each of the three). JSON carries no dates: times come as
   *  milliseconds since the epoch. */
  const selectConnections = () =>
    db
      .selectFrom('sso_connections')
      .select(connectionColumns)
      .select([
        listOf('sso_connection_domains', 'domain').as('domains'),
        listOf('sso_connection_testers', 'email').as('testers'),
        sql<DomainJson[]>`(select coalesce(json_agg(json_build_object(
            'domain', d.domain, 'status', d.status, 'check_error', d.check_error,
            'created_at_ms', extract(epoch from d.created_at) * 1000,
            'proven_at_ms', extract(epoch from d.proven_at) * 1000,
            'checked_at_ms', extract(epoch from d.checked_at) * 1000,
            'failing_since_ms', extract(epoch from d.failing_since) * 1000,
            'next_check_at_ms', extract(epoch from d.next_check_at) * 1000,
            'proven_elsewhere', exists (select 1 from sso_connection_domains o
              where o.domain = d.domain and o.status = 'proven' and o.connection_id <> d.connection_id)
          ) order by d.domain), '[]') from sso_connection_domains d where d.connection_id = sso_connections.id)`.as('domain_proofs'),
        sql<CertificateJson[]>`(select coalesce(json_agg(json_build_object(
            'id', c.id, 'name', c.name, 'pem', c.pem, 'fingerprint_sha256', c.fingerprint_sha256,
            'issuer', c.issuer, 'subject', c.subject, 'from_metadata', c.from_metadata,
            'not_before_ms', extract(epoch from c.not_before) * 1000,
            'expires_at_ms', extract(epoch from c.expires_at) * 1000,
            'created_at_ms', extract(epoch from c.created_at) * 1000
          ) order by c.created_at desc, c.id), '[]') from sso_certificates c where c.connection_id = sso_connections.id)`.as('certificates'),
      ]);
  /** the connection's row if the tenant owns it, else none */
  const ownedRow = (tenantId: string, connectionId: string) =>
    db.selectFrom('sso_connections').where('id', '=', connectionId).where('tenant_id', '=', tenantId);
  /** its id, as a subquery */
  const owned = (tenantId: string, connectionId: string) => ownedRow(tenantId, connectionId).select('id');
  /** a list of values as one parameter (jsonb), the same on both engines */
  const jsonb = (values: unknown) => sql`cast(${JSON.stringify(values)} as jsonb)`;

  return {
    async findConnection(tenantId, id, forUpdate = false) {
      let q = selectConnections().where('id', '=', id).where('tenant_id', '=', tenantId);
      if (forUpdate) q = q.forUpdate();
      const row = await q.executeTakeFirst();
      return row ? complete([row])[0] : undefined;
    },
    async findConnectionForSignIn(id) {
      const row = await selectConnections().where('id', '=', id).executeTakeFirst();
      return row ? complete([row])[0] : undefined;
    },
    async listConnections(tenantId) {
      const rows = await selectConnections().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
      return complete(rows);
    },
    async connectionForDomain(domain) {
      const row = await selectConnections()
        .where('id', '=', (eb) =>
          eb.selectFrom('sso_connection_domains').select('connection_id').where('domain', '=', domain).where('status', '=', 'proven'),
        )
        .executeTakeFirst();
      return row ? complete([row])[0] : undefined;
    },
    async connectionsToRefresh(before, limit) {
      const rows = await selectConnections()
        .where('metadata_url', 'is not', null)
        .where('status', '!=', 'Disabled')
        .where((eb) => eb.or([eb('metadata_refreshed_at', 'is', null), eb('metadata_refreshed_at', '<', before)]))
        .orderBy('metadata_refreshed_at')
        .limit(limit)
        .execute();
      return complete(rows);
    },
    async insertConnection(row) {
      await db
        .insertInto('sso_connections')
        .values({
          id: row.id,
          tenant_id: row.tenantId,
          name: row.name,
          type: row.type,
          status: row.status,
          idp_entity_id: null,
          sign_in_endpoint: null,
          metadata_url: null,
          metadata_refreshed_at: null,
          metadata_refresh_error: null,
          created_by: row.createdBy,
          created_at: row.createdAt,
          updated_at: row.createdAt,
        })
        .execute();
    },
    async updateConnection(tenantId, id, p) {
      await db
        .updateTable('sso_connections')
        .set({
          ...(p.name !== undefined ? { name: p.name } : {}),
          ...(p.status !== undefined ? { status: p.status } : {}),
          ...(p.idpEntityId !== undefined ? { idp_entity_id: p.idpEntityId } : {}),
          ...(p.signInEndpoint !== undefined ? { sign_in_endpoint: p.signInEndpoint } : {}),
          ...(p.metadataUrl !== undefined ? { metadata_url: p.metadataUrl } : {}),
          ...(p.metadataRefreshedAt !== undefined ? { metadata_refreshed_at: p.metadataRefreshedAt } : {}),
          ...(p.metadataRefreshError !== undefined ? { metadata_refresh_error: p.metadataRefreshError } : {}),
          updated_at: p.updatedAt,
        })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .execute();
    },
    async deleteConnection(tenantId, id) {
      await db.deleteFrom('sso_connections').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
    },
    async addDomains(tenantId, connectionId, claims, now) {
      if (claims.length === 0) return;
      const rows = claims.map((c) => ({ domain: c.domain, challenge_hash: Buffer.from(c.challengeHash).toString('hex') }));
      await db
        .insertInto('sso_connection_domains')
        .columns(['domain', 'connection_id', 'created_at', 'status', 'challenge_hash', 'next_check_at'])
        .expression(
          ownedRow(tenantId, connectionId)
            .crossJoin(
              sql<{ domain: string; challenge_hash: string }>`jsonb_to_recordset(${jsonb(rows)})`.as<'d'>(sql`d(domain text, challenge_hash text)`),
            )
            .select([
              'd.domain',
              'id',
              sql<Date>`cast(${now} as timestamptz)`.as('created_at'),
              sql<'pending'>`'pending'`.as('status'),
              sql<Uint8Array>`decode(d.challenge_hash, 'hex')`.as('challenge_hash'),
              // checked by the job within the hour (the check now button at once)
              sql<Date>`cast(${now} as timestamptz) + interval '1 hour'`.as('next_check_at'),
            ]),
        )
        .execute()
        .catch(rethrowUnique);
    },
    async findDomainClaim(tenantId, connectionId, domain, forUpdate = false) {
      let q = db
        .selectFrom('sso_connection_domains as d')
        .innerJoin('sso_connections as c', 'c.id', 'd.connection_id')
        .selectAll('d')
        .select('c.tenant_id')
        .select(
          sql<boolean>`exists (select 1 from sso_connection_domains o
            where o.domain = d.domain and o.status = 'proven' and o.connection_id <> d.connection_id)`.as('proven_elsewhere'),
        )
        .where('d.connection_id', '=', connectionId)
        .where('d.domain', '=', domain)
        .where('c.tenant_id', '=', tenantId);
      if (forUpdate) q = q.forUpdate('d');
      const r = await q.executeTakeFirst();
      if (!r) return undefined;
      const claim: DomainClaim = {
        tenantId: String(r.tenant_id),
        connectionId: r.connection_id,
        domain: r.domain,
        status: r.status,
        challengeHash: r.challenge_hash,
        createdAt: r.created_at,
        provenAt: r.proven_at,
        checkedAt: r.checked_at,
        checkError: r.check_error,
        failingSince: r.failing_since,
        nextCheckAt: r.next_check_at,
        provenElsewhere: Boolean(r.proven_elsewhere),
      };
      return claim;
    },
    async updateDomainClaim(tenantId, connectionId, domain, p) {
      await db
        .updateTable('sso_connection_domains')
        .set({
          ...(p.status !== undefined ? { status: p.status } : {}),
          ...(p.challengeHash !== undefined ? { challenge_hash: p.challengeHash } : {}),
          ...(p.provenAt !== undefined ? { proven_at: p.provenAt } : {}),
          ...(p.checkedAt !== undefined ? { checked_at: p.checkedAt } : {}),
          ...(p.checkError !== undefined ? { check_error: p.checkError } : {}),
          ...(p.failingSince !== undefined ? { failing_since: p.failingSince } : {}),
          ...(p.nextCheckAt !== undefined ? { next_check_at: p.nextCheckAt } : {}),
        })
        .where('connection_id', 'in', owned(tenantId, connectionId))
        .where('domain', '=', domain)
        .execute()
        .catch(rethrowUnique);
    },
    async domainClaimsDue(now, limit) {
      const rows = await db
        .selectFrom('sso_connection_domains as d')
        .innerJoin('sso_connections as c', 'c.id', 'd.connection_id')
        .select(['c.tenant_id', 'd.connection_id', 'd.domain'])
        .where('d.next_check_at', '<=', now)
        .orderBy('d.next_check_at')
        .limit(limit)
        .execute();
      return rows.map((r) => ({ tenantId: String(r.tenant_id), connectionId: r.connection_id, domain: r.domain }));
    },
    async removeDomains(tenantId, connectionId, domains) {
      if (domains.length === 0) return;
      await db
        .deleteFrom('sso_connection_domains')
        .where('connection_id', 'in', owned(tenantId, connectionId))
        .where('domain', 'in', domains)
        .execute();
    },
    async domainOwners(domains) {
      if (domains.length === 0) return [];
      const rows = await db
        .selectFrom('sso_connection_domains')
        .select(['domain', 'connection_id', 'status'])
        .where('domain', 'in', domains)
        .orderBy('created_at')
        .execute();
      return rows.map((r) => ({ domain: r.domain, connectionId: r.connection_id, status: r.status }));
    },
    async addTesters(tenantId, connectionId, emails, now) {
      if (emails.length === 0) return;
      await db
        .insertInto('sso_connection_testers')
        .columns(['connection_id', 'email', 'created_at'])
        .expression(
          ownedRow(tenantId, connectionId)
            .crossJoin(sql<{ email: string }>`jsonb_array_elements_text(${jsonb(emails)})`.as<'t'>(sql`t(email)`))
            .select(['id', 't.email', sql<Date>`cast(${now} as timestamptz)`.as('created_at')]),
        )
        .onConflict((oc) => oc.columns(['connection_id', 'email']).doNothing())
        .execute();
    },
    async removeTesters(tenantId, connectionId, emails) {
      if (emails.length === 0) return;
      await db
        .deleteFrom('sso_connection_testers')
        .where('connection_id', 'in', owned(tenantId, connectionId))
        .where('email', 'in', emails)
        .execute();
    },
    async insertCertificates(tenantId, certificates) {
      if (certificates.length === 0) return;
      const rows = certificates.map((c) => ({
        id: c.id,
        connection_id: c.connectionId,
        name: c.name,
        pem: c.pem,
        fingerprint_sha256: c.fingerprintSha256,
        issuer: c.issuer,
        subject: c.subject,
        not_before: c.notBefore,
        expires_at: c.expiresAt,
        from_metadata: c.fromMetadata,
        created_at: c.createdAt,
      }));
      type Row = Omit<(typeof rows)[number], 'not_before' | 'expires_at' | 'created_at'> & { not_before: Date; expires_at: Date; created_at: Date };
      await db
        .insertInto('sso_certificates')
        .columns([
          'id',
          'connection_id',
          'name',
          'pem',
          'fingerprint_sha256',
          'issuer',
          'subject',
          'not_before',
          'expires_at',
          'from_metadata',
          'created_at',
        ])
        .expression(
          db
            .selectFrom(
              sql<Row>`jsonb_to_recordset(${jsonb(rows)})`.as<'r'>(
                sql`r(id uuid, connection_id uuid, name text, pem text, fingerprint_sha256 text, issuer text, subject text, not_before timestamptz, expires_at timestamptz, from_metadata boolean, created_at timestamptz)`,
              ),
            )
            .innerJoin('sso_connections as c', (j) => j.onRef('c.id', '=', 'r.connection_id').on('c.tenant_id', '=', tenantId))
            .select([
              'r.id',
              'r.connection_id',
              'r.name',
              'r.pem',
              'r.fingerprint_sha256',
              'r.issuer',
              'r.subject',
              'r.not_before',
              'r.expires_at',
              'r.from_metadata',
              'r.created_at',
            ]),
        )
        .execute();
    },
    async deleteCertificates(tenantId, connectionId, ids) {
      if (ids.length === 0) return;
      await db.deleteFrom('sso_certificates').where('connection_id', 'in', owned(tenantId, connectionId)).where('id', 'in', ids).execute();
    },
    async insertSamlRequest(row) {
      await db
        .insertInto('saml_requests')
        .values({
          id: row.id,
          connection_id: row.connectionId,
          session_id_hash: row.sessionIdHash,
          email: row.email,
          created_at: row.createdAt,
          expires_at: row.expiresAt,
        })
        .execute();
    },
    async findOpenSamlRequest(connectionId, id, now) {
      const row = await db
        .selectFrom('saml_requests')
        .selectAll()
        .where('id', '=', id)
        .where('connection_id', '=', connectionId)
        .where('user_id', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row
        ? {
            id: row.id,
            connectionId: row.connection_id,
            sessionIdHash: row.session_id_hash,
            email: row.email,
            createdAt: row.created_at as Date,
            expiresAt: row.expires_at as Date,
          }
        : undefined;
    },
    async completeSamlRequest(id, userId, ticketHash, expiresAt) {
      const done = await db
        .updateTable('saml_requests')
        .set({ user_id: userId, ticket_hash: ticketHash, expires_at: expiresAt })
        .where('id', '=', id)
        .where('user_id', 'is', null)
        .executeTakeFirst();
      return Number(done.numUpdatedRows) === 1;
    },
    async closeSamlRequest(connectionId, id) {
      const closed = await db
        .deleteFrom('saml_requests')
        .where('id', '=', id)
        .where('connection_id', '=', connectionId)
        .where('user_id', 'is', null)
        .executeTakeFirst();
      return Number(closed.numDeletedRows) === 1;
    },
    async takeCompletedSamlRequest(ticketHash, now) {
      const row = await db.deleteFrom('saml_requests').where('ticket_hash', '=', ticketHash).returningAll().executeTakeFirst();
      if (!row || row.user_id === null || (row.expires_at as Date) <= now) return undefined;
      return { connectionId: row.connection_id, sessionIdHash: row.session_id_hash, userId: row.user_id };
    },
    async useAssertion(connectionId, assertionId, expiresAt) {
      const inserted = await db
        .insertInto('saml_assertions_used')
        .values({ connection_id: connectionId, assertion_id: assertionId, expires_at: expiresAt })
        .onConflict((oc) => oc.columns(['connection_id', 'assertion_id']).doNothing())
        .returning('assertion_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async findIdentity(connectionId, nameId) {
      const row = await db
        .selectFrom('sso_identities')
        .select('user_id')
        .where('connection_id', '=', connectionId)
        .where('name_id', '=', nameId)
        .executeTakeFirst();
      return row ? { userId: row.user_id } : undefined;
    },
    async insertIdentity(connectionId, nameId, userId, now) {
      await db
        .insertInto('sso_identities')
        .values({ connection_id: connectionId, name_id: nameId, user_id: userId, created_at: now, last_sign_in_at: now })
        .execute();
    },
    async touchIdentity(connectionId, nameId, now) {
      await db
        .updateTable('sso_identities')
        .set({ last_sign_in_at: now })
        .where('connection_id', '=', connectionId)
        .where('name_id', '=', nameId)
        .execute();
    },
    async purgeExpired(now) {
      const requests = await db.deleteFrom('saml_requests').where('expires_at', '<=', now).executeTakeFirst();
      const assertions = await db.deleteFrom('saml_assertions_used').where('expires_at', '<=', now).executeTakeFirst();
      return Number(requests.numDeletedRows) + Number(assertions.numDeletedRows);
    },
  };
}
