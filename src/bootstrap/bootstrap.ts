// First start: on an empty database, in one transaction, create the vendor root tenant "1",
// an Administrator API client and an Administrator user. Secrets that were generated (not
// configured) are returned so the caller can print them once; only their digests are stored.
// Several processes starting together on one PostgreSQL: one bootstraps, the others see it done.
import { randomUUID } from 'node:crypto';
import { ROLE_IDS, ROOT_TENANT_ID } from '../access/roles.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { randomBase62 } from '../crypto/random.js';
import { generateClientId } from '../credentials/model.js';
import { generateSecret, hashSecret, secretHint } from '../credentials/secret.js';
import type { Transactional } from '../transaction.js';
import type { AuditStore } from '../audit/store.js';
import type { CredentialStore } from '../credentials/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { UserStore } from '../users/store.js';
import { nameKey } from '../text.js';
import { ENVIRONMENTS, normalizeTenantName } from '../tenants/model.js';
import { addUser } from '../users/creation.js';
import { emailKey } from '../users/model.js';
import { hashPassword } from '../users/password.js';

/** What first start writes, in one transaction: the root tenant, the first client and user, their roles, the audit event. */
export interface BootstrapStores {
  tenants: Pick<TenantStore, 'lockBootstrap' | 'rootExists' | 'insertRoot'>;
  credentials: Pick<CredentialStore, 'insertClient' | 'insertSecret' | 'insertRoleAssignments'>;
  users: UserStore;
  audit: AuditStore;
}

export const BOOTSTRAP_CLIENT_NAME = 'bootstrap-admin';
const BOOTSTRAP_ACTOR = { kind: 'system', id: 'bootstrap' } as const;
export const DEFAULT_ADMIN_EMAIL = 'admin@gatehouse.local';

export interface BootstrapResult {
  clientId: string;
  /** set only when generated */
  clientSecret?: string;
  adminEmail: string;
  /** set only when generated */
  adminPassword?: string;
}

export async function bootstrap(
  store: Transactional<BootstrapStores>,
  config: Pick<Config, 'bootstrap' | 'vendorName' | 'region'>,
  clock: Clock,
): Promise<BootstrapResult | undefined> {
  if (await store.tenants.rootExists()) return undefined;
  const now = clock.now();
  const clientId = config.bootstrap.clientId ?? generateClientId();
  const clientSecret = config.bootstrap.clientSecret ?? generateSecret();
  const adminEmail = config.bootstrap.adminEmail ?? DEFAULT_ADMIN_EMAIL;
  const adminPassword = config.bootstrap.adminPassword ?? randomBase62(128);
  const passwordHash = await hashPassword(adminPassword);

  return store.transaction(async (tx) => {
    await tx.tenants.lockBootstrap();
    if (await tx.tenants.rootExists()) return undefined;
    const rootName = normalizeTenantName(config.vendorName, 'GATEHOUSE_VENDOR_NAME');
    await tx.tenants.insertRoot({
      name: rootName.name,
      nameNormalized: rootName.normalized,
      createdAt: now,
      environments: Object.keys(ENVIRONMENTS),
    });

    const clientUuid = randomUUID();
    await tx.credentials.insertClient({
      id: clientUuid,
      tenantId: ROOT_TENANT_ID,
      clientId,
      name: BOOTSTRAP_CLIENT_NAME,
      nameNormalized: nameKey(BOOTSTRAP_CLIENT_NAME),
      environment: config.region,
      createdAt: now,
      createdBy: 'bootstrap',
    });
    await tx.credentials.insertSecret({
      id: randomUUID(),
      clientId: clientUuid,
      tenantId: ROOT_TENANT_ID,
      hash: hashSecret(clientSecret),
      hint: secretHint(clientSecret),
      createdAt: now,
    });
    await tx.credentials.insertRoleAssignments([
      { id: randomUUID(), tenantId: ROOT_TENANT_ID, roleId: ROLE_IDS.Administrator, expiresAt: null, principalId: clientUuid, createdAt: now },
    ]);

    await addUser(tx, {
      tenantId: ROOT_TENANT_ID,
      email: { email: adminEmail, key: emailKey(adminEmail) },
      displayName: 'Administrator',
      passwordHash,
      setup: null,
      roleIds: [ROLE_IDS.Administrator],
      createdAt: now,
      actor: BOOTSTRAP_ACTOR,
      // the event below records the first user with the rest of first start
      event: null,
    });
    await tx.audit.insertEvent({
      occurredAt: now,
      tenantId: ROOT_TENANT_ID,
      actor: BOOTSTRAP_ACTOR,
      action: 'service.bootstrapped',
      target: { kind: 'tenant', id: ROOT_TENANT_ID },
      details: { client_id: clientId, admin_email: adminEmail },
    });
    return {
      clientId,
      ...(config.bootstrap.clientSecret ? {} : { clientSecret }),
      adminEmail,
      ...(config.bootstrap.adminPassword ? {} : { adminPassword }),
    };
  });
}

/** The one place the generated secrets are shown: standard output, once. `baseUrl` is where the
 *  service is reached (GATEHOUSE_BASE_URL, else http://HOST:PORT): the notice names its sign-in page. */
export function formatBootstrapNotice(result: BootstrapResult, baseUrl: string): string {
  const lines = [
    'Gatehouse first start: created the vendor tenant "1", an Administrator API client and an Administrator user.',
    'Keep these now; secrets are shown only this once and are stored only as digests.',
    `  client_id:      ${result.clientId}`,
    `  client_secret:  ${result.clientSecret ?? '(from GATEHOUSE_BOOTSTRAP_CLIENT_SECRET)'}`,
    `  admin e-mail:   ${result.adminEmail}`,
    `  admin password: ${result.adminPassword ?? '(from GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD)'}`,
    `  sign in at:     ${baseUrl}/login (with the admin e-mail and password; the first sign-in enrols an authenticator app)`,
    `  tokens from:    ${baseUrl}/auth/api/v2/auth/token (the API client, by client credentials)`,
  ];
  return lines.join('\n') + '\n';
}
