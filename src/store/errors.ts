// Database errors the persister turns into domain errors a use case can act on. A unique index
// is known here by its name; above the persister it is known by the rule it keeps (errors.ts).
import { DuplicateKeyError, type UniqueKey } from '../errors.js';

const UNIQUE_KEYS: Record<string, UniqueKey> = {
  clients_tenant_name_live_uq: 'client.name',
  clients_client_id_uq: 'client.clientId',
  tenant_labels_owner_name_uq: 'label.name',
  services_owner_name_uq: 'service.name',
  partner_subscriptions_live_name_uq: 'subscription.name',
  users_tenant_email_uq: 'user.email',
  users_email_proven_uq: 'user.provenEmail',
  device_authorizations_user_code_key: 'device.userCode',
  sso_connection_domains_pkey: 'sso.domain',
  sso_connection_domains_proven_uq: 'sso.domainProven',
};

/** Rethrows a unique-constraint violation (SQLSTATE 23505) of a known index as DuplicateKeyError; anything else as it is. */
export function rethrowUnique(err: unknown): never {
  const e = err as { code?: string; constraint?: string; message?: string };
  if (e?.code === '23505') {
    const constraint = e.constraint ?? /constraint "([^"]+)"/.exec(e.message ?? '')?.[1];
    const key = constraint === undefined ? undefined : UNIQUE_KEYS[constraint];
    if (key) throw new DuplicateKeyError(key, { cause: err });
  }
  throw err;
}
