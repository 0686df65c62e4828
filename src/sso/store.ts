// What the SSO use cases need from storage. The persister (store/sso.ts) implements it.
import type { DomainClaim, DomainClaimPatch, DomainProofStatus } from './domain-proof.js';
import type { SsoCertificate, SsoConnection, SsoConnectionStatus } from './model.js';

export interface NewSsoConnectionRow {
  id: string;
  tenantId: string;
  name: string;
  type: 'saml';
  status: SsoConnectionStatus;
  createdBy: string;
  createdAt: Date;
}

export interface SsoConnectionPatch {
  name?: string;
  status?: SsoConnectionStatus;
  idpEntityId?: string | null;
  signInEndpoint?: string | null;
  metadataUrl?: string | null;
  metadataRefreshedAt?: Date | null;
  metadataRefreshError?: string | null;
  updatedAt: Date;
}

export interface SamlRequestRow {
  id: string;
  connectionId: string;
  sessionIdHash: Uint8Array;
  email: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export interface CompletedSamlRequest {
  connectionId: string;
  sessionIdHash: Uint8Array;
  userId: string;
}

export interface SsoStore {
  // One tenant's connections, as their management reads and changes them: every method takes the
  // tenant that owns the connection and applies it in its SQL, so that no query can forget it.
  // Through another tenant nothing is read (undefined, []) and nothing is changed. The service
  // checks first (authorization, the acting tenant); this is the second line.

  /** with domains, testers and certificates; `forUpdate` locks the connection row */
  findConnection(tenantId: string, id: string, forUpdate?: boolean): Promise<SsoConnection | undefined>;
  listConnections(tenantId: string): Promise<SsoConnection[]>;
  insertConnection(row: NewSsoConnectionRow): Promise<void>;
  updateConnection(tenantId: string, id: string, patch: SsoConnectionPatch): Promise<void>;
  deleteConnection(tenantId: string, id: string): Promise<void>;
  /** claims domains for a connection, pending, each with the digest of its TXT value; other
   *  connections' claims of the same domains do not stand in the way (only one can prove it) */
  addDomains(tenantId: string, connectionId: string, claims: { domain: string; challengeHash: Uint8Array }[], now: Date): Promise<void>;
  /** one claim of the connection, with its value's digest; `forUpdate` locks it */
  findDomainClaim(tenantId: string, connectionId: string, domain: string, forUpdate?: boolean): Promise<DomainClaim | undefined>;
  /** changes a claim; making it proven while another connection holds the domain proven raises
   *  DuplicateKeyError('sso.domainProven') */
  updateDomainClaim(tenantId: string, connectionId: string, domain: string, patch: DomainClaimPatch): Promise<void>;
  removeDomains(tenantId: string, connectionId: string, domains: string[]): Promise<void>;
  addTesters(tenantId: string, connectionId: string, emails: string[], now: Date): Promise<void>;
  removeTesters(tenantId: string, connectionId: string, emails: string[]): Promise<void>;
  /** each certificate of one of the tenant's connections (its `connectionId`) */
  insertCertificates(tenantId: string, certificates: SsoCertificate[]): Promise<void>;
  deleteCertificates(tenantId: string, connectionId: string, ids: string[]): Promise<void>;

  // Unscoped, on purpose: who asks does not know the tenant, and the tenant is the connection's own.

  /** Sign-in (the ACS, the SP metadata, /sso/saml/finish): the URL names a connection, not a
   *  tenant. With domains, testers and certificates. */
  findConnectionForSignIn(id: string): Promise<SsoConnection | undefined>;
  /** Sign-in routing by an address's domain: the one connection, whichever tenant holds it, that
   *  has the domain proven (pending and lost claims route nobody). */
  connectionForDomain(domain: string): Promise<SsoConnection | undefined>;
  /** which connections (of any tenant) claim these domains, and how far each claim is proven */
  domainOwners(domains: string[]): Promise<{ domain: string; connectionId: string; status: DomainProofStatus }[]>;
  /** the periodic check, across tenants: claims whose next check is due (each then read and
   *  changed through its own tenant) */
  domainClaimsDue(now: Date, limit: number): Promise<{ tenantId: string; connectionId: string; domain: string }[]>;
  /** the scheduled refresh, across tenants: connections configured by metadata URL whose last
   *  refresh is older than `before` (each then read and changed through its own tenant) */
  connectionsToRefresh(before: Date, limit: number): Promise<SsoConnection[]>;

  // What a sign-in through a connection keeps, keyed by the connection (reached only from the
  // sign-in, which found the connection above).
  insertSamlRequest(row: SamlRequestRow): Promise<void>;
  /** an open (not yet answered) request of this connection, if it has not expired */
  findOpenSamlRequest(connectionId: string, id: string, now: Date): Promise<SamlRequestRow | undefined>;
  /** marks an open request answered, for this user and ticket; false if it was answered already */
  completeSamlRequest(id: string, userId: string, ticketHash: Uint8Array, expiresAt: Date): Promise<boolean>;
  /** removes an open request without answering it (a test sign-in's, once its response was read); false if it was answered or removed already */
  closeSamlRequest(connectionId: string, id: string): Promise<boolean>;
  /** removes and returns the answered request of this ticket, if it has not expired */
  takeCompletedSamlRequest(ticketHash: Uint8Array, now: Date): Promise<CompletedSamlRequest | undefined>;
  /** records an assertion as used; false when it already was (a replay) */
  useAssertion(connectionId: string, assertionId: string, expiresAt: Date): Promise<boolean>;
  findIdentity(connectionId: string, nameId: string): Promise<{ userId: string } | undefined>;
  insertIdentity(connectionId: string, nameId: string, userId: string, now: Date): Promise<void>;
  touchIdentity(connectionId: string, nameId: string, now: Date): Promise<void>;
  /** forgets expired requests and used-assertion records; returns how many rows went */
  purgeExpired(now: Date): Promise<number>;
}
