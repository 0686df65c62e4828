// What the credential use cases need from storage, and nothing more.
import type { RoleAssignment } from '../access/principal.js';
import type { Client } from './model.js';

export interface NewClient {
  id: string;
  tenantId: string;
  clientId: string;
  name: string;
  /** comparison key of the name: unique among the tenant's live clients */
  nameNormalized: string;
  environment: string;
  createdAt: Date;
  createdBy: string;
}

export interface NewSecret {
  id: string;
  clientId: string;
  tenantId: string;
  hash: Buffer;
  hint: string;
  createdAt: Date;
}

export interface ClientFilter {
  tenantIds: string[];
  /** a name key, or a LIKE pattern over name keys (text.ts searchKey) */
  name?: { pattern: string; wildcard: boolean };
  clientIds?: string[];
  roleIds?: string[];
  offset: number;
  limit: number;
}

/** A secret with its digest, for authentication only. */
export interface SecretDigest {
  id: string;
  hash: Uint8Array;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export interface AuthClient {
  id: string;
  tenantId: string;
  clientId: string;
  environment: string;
  secrets: SecretDigest[];
}

export interface CredentialStore {
  /** Serializes creations in a tenant until the transaction ends (the rate-limit count is exact). */
  lockTenantForCreation(tenantId: string): Promise<void>;
  /** Creations in the tenant after `since`, and the oldest of them. */
  countCreationsSince(tenantId: string, since: Date): Promise<{ count: number; oldest: Date | null }>;
  /** throws DuplicateKeyError('client.name') when a live client of the tenant has the same name key */
  insertClient(client: NewClient): Promise<void>;
  recordCreation(tenantId: string, clientId: string, at: Date): Promise<void>;
  insertSecret(secret: NewSecret): Promise<void>;
  insertRoleAssignments(assignments: (RoleAssignment & { principalId: string; createdAt: Date })[]): Promise<void>;
  /** A live (unrevoked) client of the tenant, locked for update when asked. */
  findClient(tenantId: string, ref: { id: string } | { clientId: string }, forUpdate?: boolean): Promise<Client | undefined>;
  getClient(id: string): Promise<Client>;
  listClients(filter: ClientFilter): Promise<Client[]>;
  findAuthClient(clientId: string): Promise<AuthClient | undefined>;
  /** Live secrets (neither revoked nor past their grace period) of a client. */
  findLiveSecrets(clientUuid: string, now: Date): Promise<SecretDigest[]>;
  /** The secret stops obtaining tokens at `at`; tokens already issued with it stay valid. */
  expireSecret(secretId: string, at: Date): Promise<void>;
  /** Every unrevoked secret of the client is revoked: it and the tokens issued with it stop working. */
  revokeSecrets(clientUuid: string, at: Date): Promise<void>;
  touchClient(id: string, at: Date, by: string): Promise<void>;
  revokeClient(id: string, at: Date, by: string): Promise<void>;
  recordSecretUse(uses: { secretId: string; at: Date }[]): Promise<void>;
}
