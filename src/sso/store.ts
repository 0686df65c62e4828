// What the SSO use cases need from storage. The persister (store/sso.ts) implements it.
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
  /** with domains, testers and certificates; `forUpdate` locks the connection row */
  findConnection(id: string, forUpdate?: boolean): Promise<SsoConnection | undefined>;
  listConnections(tenantId: string): Promise<SsoConnection[]>;
  /** the connection serving an e-mail domain, if any */
  connectionForDomain(domain: string): Promise<SsoConnection | undefined>;
  /** connections configured by metadata URL whose last refresh is older than `before` */
  connectionsToRefresh(before: Date, limit: number): Promise<SsoConnection[]>;
  insertConnection(row: NewSsoConnectionRow): Promise<void>;
  updateConnection(id: string, patch: SsoConnectionPatch): Promise<void>;
  deleteConnection(id: string): Promise<void>;
  /** claims domains for a connection; a domain already claimed raises DuplicateKeyError('sso.domain') */
  addDomains(connectionId: string, domains: string[], now: Date): Promise<void>;
  removeDomains(connectionId: string, domains: string[]): Promise<void>;
  /** which of these domains other connections hold, with their connection ids */
  domainOwners(domains: string[]): Promise<{ domain: string; connectionId: string }[]>;
  addTesters(connectionId: string, emails: string[], now: Date): Promise<void>;
  removeTesters(connectionId: string, emails: string[]): Promise<void>;
  insertCertificates(certificates: SsoCertificate[]): Promise<void>;
  deleteCertificates(connectionId: string, ids: string[]): Promise<void>;

  insertSamlRequest(row: SamlRequestRow): Promise<void>;
  /** an open (not yet answered) request of this connection, if it has not expired */
  findOpenSamlRequest(connectionId: string, id: string, now: Date): Promise<SamlRequestRow | undefined>;
  /** marks an open request answered, for this user and ticket; false if it was answered already */
  completeSamlRequest(id: string, userId: string, ticketHash: Uint8Array, expiresAt: Date): Promise<boolean>;
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
