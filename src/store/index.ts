// The one persister: every capability's store interface, on one Kysely instance. A transaction
// hands the use case the same set of stores bound to one database transaction.
import type { Kysely } from 'kysely';
import type { PrincipalStore } from '../access/store.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import type { CredentialStore } from '../credentials/store.js';
import type { KeyStore } from '../keys/store.js';
import type { LabelStore } from '../labels/store.js';
import type { SubscriptionStore } from '../subscriptions/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { DeviceStore } from '../device/store.js';
import type { SessionStore } from '../sessions/store.js';
import type { SignInStore } from '../signin/store.js';
import type { UserStore } from '../users/store.js';
import type { SsoStore } from '../sso/store.js';
import { auditStore } from './audit.js';
import { credentialStore } from './credentials.js';
import { keyStore } from './keys.js';
import { labelStore } from './labels.js';
import { subscriptionStore } from './subscriptions.js';
import { principalStore } from './principals.js';
import type { Database } from './schema.js';
import { tenantStore } from './tenants.js';
import { deviceStore } from './device.js';
import { sessionStore } from './sessions.js';
import { signInStore } from './signin.js';
import { userStore } from './users.js';
import { ssoStore } from './sso.js';

export interface Store {
  tenants: TenantStore;
  labels: LabelStore;
  subscriptions: SubscriptionStore;
  credentials: CredentialStore;
  principals: PrincipalStore;
  users: UserStore;
  sessions: SessionStore;
  signIn: SignInStore;
  device: DeviceStore;
  sso: SsoStore;
  audit: AuditStore;
  keys: KeyStore;
  /** Runs `fn` in one transaction: all its writes commit together or none do. Nests flat. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
}

export function createStore(db: Kysely<Database>, clock: Clock, inTransaction = false): Store {
  const store: Store = {
    tenants: tenantStore(db),
    labels: labelStore(db),
    subscriptions: subscriptionStore(db),
    credentials: credentialStore(db, clock),
    principals: principalStore(db),
    users: userStore(db),
    sessions: sessionStore(db),
    signIn: signInStore(db),
    device: deviceStore(db),
    sso: ssoStore(db),
    audit: auditStore(db),
    keys: keyStore(db),
    transaction: (fn) => (inTransaction ? fn(store) : db.transaction().execute((trx) => fn(createStore(trx, clock, true)))),
  };
  return store;
}
