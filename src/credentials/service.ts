// Credential use cases. Each one checks authorization first, then the rules, then writes all it
// changes in one transaction together with its audit event.
import { randomUUID } from 'node:crypto';
import { checkGrantableRoles } from '../access/grants.js';
import { assertCan, can } from '../access/policy.js';
import type { Caller, Principal } from '../access/principal.js';
import { isRoleId } from '../access/roles.js';
import { heldRoleNames } from '../access/scope.js';
import { principalEvent, type RequestInfo } from '../audit/model.js';
import type { Clock } from '../clock.js';
import { badInput, conflict, DuplicateKeyError, notFound, rateLimited } from '../errors.js';
import { checkPage } from '../paging.js';
import type { Transactional } from '../transaction.js';
import { searchKey } from '../text.js';
import { TENANT_ID_PATTERN } from '../ids.js';
import {
  asOf,
  generateClientId,
  normalizeClientName,
  parseClientRef,
  possibleClientId,
  secretIsLive,
  validateGracePeriod,
  type AuthenticatedClient,
  type Client,
} from './model.js';
import { digestsEqual, generateSecret, hashSecret, plausibleSecret, secretHint } from './secret.js';
import { assertMayTakeOver } from './takeover.js';
import type { LastUsedRecorder } from './last-used.js';
import type { PrincipalStore } from '../access/store.js';
import type { AuditStore } from '../audit/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { CredentialStore } from './store.js';

/** Everything the credential use cases read and write, and in one transaction when they ask. */
export interface CredentialStores {
  credentials: CredentialStore;
  tenants: Pick<TenantStore, 'findScopes'>;
  principals: Pick<PrincipalStore, 'findAssignments'>;
  audit: AuditStore;
}

export interface ClientWithSecret {
  client: Client;
  clientSecret: string;
}

/** The arguments of the `clients` query. Its lists are `[String]` and `[ID]`: an entry may be null. */
export interface ClientQuery {
  name?: string | null;
  clientIDs?: (string | null)[] | null;
  tenantID?: string | null;
  roleIDs?: (string | null)[] | null;
  tenantIDs?: (string | null)[] | null;
  page?: number | null;
  perPage?: number | null;
}

export interface CredentialSettings {
  region: string;
  createLimitPerHour: number;
}

const MAX_LIST = 1000;
const HOUR_MS = 3600_000;

export class CredentialService {
  constructor(
    private readonly store: Transactional<CredentialStores>,
    private readonly clock: Clock,
    private readonly settings: CredentialSettings,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async createClient(caller: Caller, input: { name: string; roles?: string[] | null }): Promise<ClientWithSecret> {
    const now = this.clock.now();
    const { principal, tenant } = caller;
    assertCan(principal, tenant, 'clients.create', now);
    const { name, key: nameNormalized } = normalizeClientName(input.name);
    const roleIds = checkGrantableRoles(caller, input.roles, now, 'client');

    const secret = generateSecret();
    const clientUuid = randomUUID();
    const client = await this.store.transaction(async (tx) => {
      // Creations in one tenant queue here, so the count below is exact under concurrency and
      // across processes (it lives in the database).
      await tx.credentials.lockTenantForCreation(tenant.id);
      // measured once the lock is held, so time spent queued does not shift the window
      const now = this.clock.now();
      const window = await tx.credentials.countCreationsSince(tenant.id, new Date(now.getTime() - HOUR_MS));
      if (window.count >= this.settings.createLimitPerHour) {
        const retryAfter = window.oldest ? Math.max(1, Math.ceil((window.oldest.getTime() + HOUR_MS - now.getTime()) / 1000)) : 3600;
        throw rateLimited(
          `At most ${this.settings.createLimitPerHour} clients may be created per tenant per hour; retry in ${retryAfter} seconds`,
          retryAfter,
        );
      }
      try {
        await tx.credentials.insertClient({
          id: clientUuid,
          tenantId: tenant.id,
          clientId: generateClientId(),
          name,
          nameNormalized,
          environment: this.settings.region,
          createdAt: now,
          createdBy: principal.id,
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.key === 'client.name') {
          throw conflict('Existing client in tenant');
        }
        throw err;
      }
      await tx.credentials.recordCreation(tenant.id, clientUuid, now);
      await tx.credentials.insertSecret({
        id: randomUUID(),
        clientId: clientUuid,
        tenantId: tenant.id,
        hash: hashSecret(secret),
        hint: secretHint(secret),
        createdAt: now,
      });
      await tx.credentials.insertRoleAssignments(
        roleIds.map((roleId) => ({ id: randomUUID(), tenantId: tenant.id, roleId, expiresAt: null, principalId: clientUuid, createdAt: now })),
      );
      await tx.audit.insertEvent(
        principalEvent(
          principal,
          now,
          tenant.id,
          'client.created',
          { kind: 'client', id: clientUuid },
          {
            name,
            roles: roleIds,
            secret_hint: secretHint(secret),
          },
        ),
      );
      return tx.credentials.getClient(clientUuid);
    });
    return { client, clientSecret: secret };
  }

  async listClients(caller: Caller, query: ClientQuery): Promise<Client[]> {
    const now = this.clock.now();
    const { offset, perPage } = checkPage(query);
    for (const [field, list] of [
      ['tenantIDs', query.tenantIDs],
      ['clientIDs', query.clientIDs],
      ['roleIDs', query.roleIDs],
    ] as const) {
      if (list && list.length > MAX_LIST) throw badInput(`${field} takes at most ${MAX_LIST} values`, { field });
    }
    const explicit: string[] = [];
    for (const id of [...(query.tenantIDs ?? []), ...(query.tenantID ? [query.tenantID] : [])]) {
      if (id === null || !TENANT_ID_PATTERN.test(id)) throw badInput(`"${id}" is not a tenant id`, { field: 'tenantIDs' });
      explicit.push(id);
    }
    let tenantIds: string[];
    if (explicit.length === 0) {
      assertCan(caller.principal, caller.tenant, 'clients.read', now);
      tenantIds = [caller.tenant.id];
    } else {
      // Tenants the caller's roles do not reach are left out, exactly as if they did not exist.
      const scopes = await this.store.tenants.findScopes([...new Set(explicit)]);
      tenantIds = scopes.filter((s) => can(caller.principal, s, 'clients.read', now)).map((s) => s.id);
    }
    const roleIds = query.roleIDs?.map((roleId) => {
      if (roleId === null || !isRoleId(roleId)) throw badInput(`unknown role id "${roleId}"`, { field: 'roleIDs' });
      return roleId;
    });
    if (query.clientIDs?.some((id) => id?.includes('\u0000'))) throw badInput('clientIDs must not contain a NUL character', { field: 'clientIDs' });
    // the listing may come from the cache (store/index.ts): what expired since is dropped here
    const clients = await this.store.credentials.listClients({
      tenantIds,
      ...(query.name != null ? { name: searchKey(query.name, 'name') } : {}),
      // a null entry matches no client (as NULL in an SQL IN list matches no row)
      ...(query.clientIDs != null ? { clientIds: query.clientIDs.filter((id) => id !== null) } : {}),
      ...(roleIds != null ? { roleIds } : {}),
      offset,
      limit: perPage,
    });
    return clients.map((c) => asOf(c, now));
  }

  async rotateClientSecret(
    caller: Caller,
    input: { id: string; secret?: string | null; gracePeriodSeconds?: number | null },
  ): Promise<ClientWithSecret> {
    const now = this.clock.now();
    const { principal, tenant } = caller;
    const ref = parseClientRef(input.id);
    const self =
      principal.kind === 'client' &&
      principal.tenantId === tenant.id &&
      ('id' in ref ? ref.id === principal.id : ref.clientId === principal.clientId);
    // A client may rotate its own secret (it proves possession); anyone else needs the permission.
    if (!self) assertCan(principal, tenant, 'clients.rotate', now);
    const grace = validateGracePeriod(input.gracePeriodSeconds);
    if (typeof input.secret !== 'string' || input.secret.length === 0) {
      throw badInput('secret (the current client secret) is required', { field: 'secret' });
    }
    const presented = hashSecret(input.secret);
    const plausible = plausibleSecret(input.secret);
    const secret = generateSecret();

    const client = await this.store.transaction(async (tx) => {
      const found = await tx.credentials.findClient(tenant.id, ref, true);
      if (!found) throw notFound('Client');
      const live = await tx.credentials.findLiveSecrets(found.id, now);
      const current = live.find((s) => s.expiresAt === null);
      if (!plausible || !current || !digestsEqual(current.hash, presented)) {
        throw badInput('secret is not the current secret of this client', { field: 'secret' });
      }
      // At most two live secrets: the new one, and the old one during its grace period.
      for (const s of live) if (s.id !== current.id) await tx.credentials.expireSecret(s.id, now);
      await tx.credentials.expireSecret(current.id, new Date(now.getTime() + grace * 1000));
      await this.insertNewSecret(tx, found, secret, now, principal);
      await tx.audit.insertEvent(
        principalEvent(
          principal,
          now,
          tenant.id,
          'client.secret_rotated',
          { kind: 'client', id: found.id },
          {
            grace_seconds: grace,
            secret_hint: secretHint(secret),
          },
        ),
      );
      return tx.credentials.getClient(found.id);
    });
    return { client, clientSecret: secret };
  }

  async forceRotateClientSecret(caller: Caller, input: { id: string }): Promise<ClientWithSecret> {
    const now = this.clock.now();
    const { principal, tenant } = caller;
    assertCan(principal, tenant, 'clients.forceRotate', now);
    const ref = parseClientRef(input.id);
    const secret = generateSecret();
    const client = await this.store.transaction(async (tx) => {
      const found = await tx.credentials.findClient(tenant.id, ref, true);
      if (!found) throw notFound('Client');
      // the new secret goes to the caller (takeover.ts)
      assertMayTakeOver(caller, found, now);
      // Suspected leak: every earlier secret, and every token obtained with one, ends now.
      await tx.credentials.revokeSecrets(found.id, now);
      await this.insertNewSecret(tx, found, secret, now, principal);
      await tx.audit.insertEvent(
        principalEvent(
          principal,
          now,
          tenant.id,
          'client.secret_force_rotated',
          { kind: 'client', id: found.id },
          { secret_hint: secretHint(secret) },
        ),
      );
      return tx.credentials.getClient(found.id);
    });
    return { client, clientSecret: secret };
  }

  async deleteClient(caller: Caller, input: { id: string }): Promise<Client> {
    const now = this.clock.now();
    const { principal, tenant } = caller;
    assertCan(principal, tenant, 'clients.delete', now);
    const ref = parseClientRef(input.id);
    return await this.store.transaction(async (tx) => {
      const found = await tx.credentials.findClient(tenant.id, ref, true);
      if (!found) throw notFound('Client');
      await tx.credentials.revokeSecrets(found.id, now);
      await tx.credentials.revokeClient(found.id, now, principal.id);
      await tx.audit.insertEvent(principalEvent(principal, now, tenant.id, 'client.deleted', { kind: 'client', id: found.id }, { name: found.name }));
      return tx.credentials.getClient(found.id);
    });
  }

  /**
   * Client authentication for the token endpoint. Unknown client, revoked client and wrong
   * secret all answer undefined after the same work (one digest, one query). A match also loads
   * the role names the client holds now: the scope its token request may ask for.
   */
  async authenticate(clientId: string, secret: string): Promise<AuthenticatedClient | undefined> {
    const now = this.clock.now();
    const presented = hashSecret(secret);
    if (!plausibleSecret(secret) || !possibleClientId(clientId)) return undefined;
    const client = await this.store.credentials.findAuthClient(clientId);
    if (!client || client.environment !== this.settings.region) return undefined;
    let match: string | undefined;
    for (const s of client.secrets) {
      // compare every live secret, so the time taken does not tell which one matched
      if (secretIsLive(s, now) && digestsEqual(s.hash, presented)) match = s.id;
    }
    if (!match) return undefined;
    const roles = heldRoleNames(await this.store.principals.findAssignments('client', client.id), now);
    return { clientUuid: client.id, clientId: client.clientId, tenantId: client.tenantId, secretId: match, roles };
  }

  /** refusal events being written, off the request path (credentialsRefused) */
  private readonly writing = new Set<Promise<void>>();

  /**
   * A token request named this client and was refused (invalid_client): an audit event in the
   * client's tenant (client.credentials_refused, outcome failure), so its Administrators see
   * someone holding a wrong or old secret. Written off the request path: the answer does not wait
   * for it, so its time does not tell whether the client exists. Nothing is written for a
   * client_id that names no client (no tenant to tell; the throttle still counts it), nor for a
   * secret that could not be one of ours (credentials/secret.ts plausibleSecret: one with our
   * prefix whose checksum fails, or shorter than 32 characters): noise, not someone holding an old
   * secret. The checksum is no secret, so this only quiets the trail: the guessing throttle is
   * what bounds the events an attacker writes (only attempts it let through get here;
   * docs/operations.md). The actor is `anonymous`: whoever sent it did not authenticate. A write
   * that fails goes to `onError`.
   */
  credentialsRefused(clientId: string, secret: string, request: RequestInfo, onError: (err: unknown) => void): void {
    if (!possibleClientId(clientId) || !plausibleSecret(secret)) return;
    const at = this.clock.now();
    const write: Promise<void> = this.writeRefusal(clientId, request, at)
      .catch(onError)
      .finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  /** Resolves once every refusal event begun so far is written or has failed (shutdown, tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.writing]);
  }

  private async writeRefusal(clientId: string, request: RequestInfo, at: Date): Promise<void> {
    const client = await this.store.credentials.findAuthClient(clientId);
    if (!client) return;
    await this.store.audit.insertEvent({
      occurredAt: at,
      tenantId: client.tenantId,
      actor: { kind: 'anonymous', id: 'unauthenticated', tenantId: null },
      action: 'client.credentials_refused',
      target: { kind: 'client', id: client.id },
      details: { client_id: client.clientId },
      outcome: 'failure',
      request,
    });
  }

  /** A token was issued with this secret: it counts as used (written in batches; last-used.ts). */
  recordSecretUse(secretId: string): void {
    this.lastUsed.record(secretId, this.clock.now());
  }

  private async insertNewSecret(tx: CredentialStores, client: Client, secret: string, now: Date, principal: Principal): Promise<void> {
    await tx.credentials.insertSecret({
      id: randomUUID(),
      clientId: client.id,
      tenantId: client.tenantId,
      hash: hashSecret(secret),
      hint: secretHint(secret),
      createdAt: now,
    });
    await tx.credentials.touchClient(client.id, now, principal.id);
  }
}
