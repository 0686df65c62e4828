// The one persister: every capability's store interface, on one Kysely instance. A transaction
// hands the use case the same set of stores bound to one database transaction. Outside a
// transaction, the reads every authenticated request makes (the client at the token endpoint, the
// principal behind a token, the acting tenant's scope) and the credential listings (the `clients`
// query) are cached until what they read changes (auth-changes.ts, write-watch.ts,
// read-cache.ts); inside one, every read goes to the database.
import type { Kysely } from 'kysely';
import type { PrincipalStore } from '../access/store.js';
import type { AttemptStore } from '../attempts/store.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import type { CredentialStore } from '../credentials/store.js';
import type { KeyStore } from '../keys/store.js';
import type { LabelStore } from '../labels/store.js';
import type { SubscriptionStore } from '../subscriptions/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { DeviceStore } from '../device/store.js';
import type { SessionStore } from '../sessions/store.js';
import type { PasskeyStore, SignInStore } from '../signin/store.js';
import type { UserStore } from '../users/store.js';
import type { SsoStore } from '../sso/store.js';
import type { TokenThrottleStore } from '../oauth/throttle-store.js';
import type { RevokedTokenStore } from '../oauth/revocation-store.js';
import type { MailOutboxStore } from '../mail/store.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import { keyedRequest } from '../idempotency/context.js';
import { COMMITTED_GRACE_SECONDS } from '../idempotency/model.js';
import { AppError } from '../errors.js';
import { idempotencyStore } from './idempotency.js';
import { mailOutboxStore } from './mail-outbox.js';
import { attemptStore } from './attempts.js';
import { auditStore } from './audit.js';
import { heartbeatStore } from './heartbeats.js';
import type { HeartbeatStore } from '../maintenance/heartbeat.js';
import { credentialStore } from './credentials.js';
import { keyStore } from './keys.js';
import { labelStore } from './labels.js';
import { subscriptionStore } from './subscriptions.js';
import { principalStore } from './principals.js';
import type { Database } from './schema.js';
import type { ChangeSignal } from './auth-changes.js';
import { ReadCache } from './read-cache.js';
import { tenantStore } from './tenants.js';
import { deviceStore } from './device.js';
import { sessionStore } from './sessions.js';
import { signInStore } from './signin.js';
import { passkeyStore } from './passkeys.js';
import { userStore } from './users.js';
import { ssoStore } from './sso.js';
import { tokenThrottleStore } from './token-throttle.js';
import { revokedTokenStore } from './revoked-tokens.js';

export interface Store {
  tenants: TenantStore;
  labels: LabelStore;
  subscriptions: SubscriptionStore;
  credentials: CredentialStore;
  principals: PrincipalStore;
  users: UserStore;
  sessions: SessionStore;
  signIn: SignInStore;
  /** people's passkeys (WebAuthn credentials) */
  passkeys: PasskeyStore;
  /** attempt counts of sign-in and device login (attempts/model.ts) */
  attempts: AttemptStore;
  device: DeviceStore;
  sso: SsoStore;
  /** the token endpoint's shared failure counts */
  tokenThrottle: TokenThrottleStore;
  /** revoked access tokens (RFC 7009) */
  revokedTokens: RevokedTokenStore;
  audit: AuditStore;
  heartbeats: HeartbeatStore;
  keys: KeyStore;
  /** the mail outbox (mail/) */
  mail: MailOutboxStore;
  /** the keys of safe retries (idempotency/) */
  idempotency: IdempotencyStore;
  /** Runs `fn` in one transaction: all its writes commit together or none do. Nests flat. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
}

export interface StoreOptions {
  /** the signal of the database's WriteWatch (Db.changes); without it nothing is cached */
  changes?: ChangeSignal;
  /** the caches' backstop lifetime; 0: no caching */
  cacheLifetimeMs?: number;
}

/** entries per cache: more than the clients, principals and tenants that are busy at once */
const CACHE_ENTRIES = 10_000;
/** client listings kept, and the clients they may hold in all (a page holds up to 500; about 1 KB each) */
const LISTING_ENTRIES = 1_000;
const LISTED_CLIENTS = 10_000;
const MAX_LISTING_KEY = 2048;

export function createStore(db: Kysely<Database>, clock: Clock, options: StoreOptions = {}): Store {
  const { changes } = options;
  const store = storeOn(db, clock, changes);
  const lifetimeMs = options.cacheLifetimeMs ?? 10_000;
  return changes && lifetimeMs > 0 ? withCachedReads(store, changes, lifetimeMs) : store;
}

function storeOn(db: Kysely<Database>, clock: Clock, changes: ChangeSignal | undefined, inTransaction = false): Store {
  const store: Store = {
    tenants: tenantStore(db),
    labels: labelStore(db),
    subscriptions: subscriptionStore(db),
    credentials: credentialStore(db, clock),
    principals: principalStore(db),
    users: userStore(db),
    sessions: sessionStore(db),
    signIn: signInStore(db),
    passkeys: passkeyStore(db),
    attempts: attemptStore(db),
    device: deviceStore(db),
    sso: ssoStore(db),
    tokenThrottle: tokenThrottleStore(db),
    revokedTokens: revokedTokenStore(db),
    audit: auditStore(db),
    heartbeats: heartbeatStore(db),
    keys: keyStore(db),
    mail: mailOutboxStore(db),
    idempotency: idempotencyStore(db),
    transaction: async (fn) => {
      if (inTransaction) return fn(store);
      const before = changes?.generation;
      // a request sent with an Idempotency-Key (idempotency/context.ts): its key is marked
      // committed by the change's own transaction, so a retry never runs a change twice
      const keyed = keyedRequest();
      try {
        const result = await db.transaction().execute(async (trx) => {
          const tx = storeOn(trx, clock, changes, true);
          const value = await fn(tx);
          if (keyed && !(await tx.idempotency.markCommitted(keyed, new Date(clock.now().getTime() + COMMITTED_GRACE_SECONDS * 1000)))) {
            // the key was taken over by a retry (this request outlived its lease): the retry is
            // the one that runs, so this change is rolled back
            throw new AppError(
              'CONFLICT',
              'This request outlived the hold on its Idempotency-Key and a retry took it over: its change was not made; the retry is the one that counts',
            );
          }
          return value;
        });
        if (keyed) keyed.committed = true;
        return result;
      } finally {
        // a change written in the transaction is void for the caches only once it has committed
        if (changes && changes.generation !== before) changes.bump();
      }
    },
  };
  return store;
}

/** The root store with its per-request reads cached (read-cache.ts); transactions read fresh. */
function withCachedReads(store: Store, changes: ChangeSignal, lifetimeMs: number): Store {
  const options = { max: CACHE_ENTRIES, lifetimeMs };
  // an unknown client_id is remembered too, so that it costs the same reads as a known client
  // with a wrong secret (docs/tokens.md); a new client, or any write to one, is a change
  const authClients = new ReadCache<NonNullable<Awaited<ReturnType<CredentialStore['findAuthClient']>>>>(changes, {
    ...options,
    misses: CACHE_ENTRIES,
  });
  const principals = new ReadCache<NonNullable<Awaited<ReturnType<PrincipalStore['findUserPrincipal']>>>>(changes, options);
  const assignments = new ReadCache<Awaited<ReturnType<PrincipalStore['findAssignments']>>>(changes, options);
  const revocations = new ReadCache<Awaited<ReturnType<RevokedTokenStore['findRevocation']>>>(changes, options);
  const scopes = new ReadCache<NonNullable<Awaited<ReturnType<TenantStore['findScope']>>>>(changes, options);
  const listings = new ReadCache<Awaited<ReturnType<CredentialStore['listClients']>>>(changes, {
    max: LISTING_ENTRIES,
    lifetimeMs,
    maxSize: { total: LISTED_CLIENTS, size: (list) => list.length },
  });
  return {
    ...store,
    credentials: {
      ...store.credentials,
      findAuthClient: (clientId) => authClients.get(clientId, () => store.credentials.findAuthClient(clientId)),
      // the filter is the key: tenants (already authorized), name key, ids, roles and the page; a
      // long one (hundreds of ids) is read each time, so keys never hold more than 2 KB each
      listClients: async (filter) => {
        const key = JSON.stringify(filter);
        if (key.length > MAX_LISTING_KEY) return store.credentials.listClients(filter);
        return (await listings.get(key, () => store.credentials.listClients(filter))) ?? [];
      },
    },
    principals: {
      ...store.principals,
      findClientPrincipal: (id, secretId) => principals.get(`client ${id} ${secretId}`, () => store.principals.findClientPrincipal(id, secretId)),
      findUserPrincipal: (id) => principals.get(`user ${id}`, () => store.principals.findUserPrincipal(id)),
      findAssignments: async (kind, id) => (await assignments.get(`${kind} ${id}`, () => store.principals.findAssignments(kind, id))) ?? [],
    },
    tenants: { ...store.tenants, findScope: (id) => scopes.get(id, () => store.tenants.findScope(id)) },
    // every authenticated request asks; "not revoked" is an object, so it is kept too
    revokedTokens: {
      ...store.revokedTokens,
      findRevocation: async (jti) => (await revocations.get(jti, () => store.revokedTokens.findRevocation(jti))) ?? { revoked: false },
    },
  };
}
