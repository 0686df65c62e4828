// The use cases, wired once per app to the store, clock and settings.
import { BearerAuthenticator } from './access/authenticate.js';
import type { Caller } from './access/principal.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { LastUsedRecorder } from './credentials/last-used.js';
import { CredentialService } from './credentials/service.js';
import type { KeyRing } from './keys/key-ring.js';
import { LabelService } from './labels/service.js';
import { AccessTokens } from './oauth/access-token.js';
import type { Store } from './store/index.js';
import { SubscriptionService } from './subscriptions/service.js';
import { createTenantLoaders, type TenantLoaders } from './tenants/loaders.js';
import { TenantService } from './tenants/service.js';

export interface Services {
  clock: Clock;
  credentials: CredentialService;
  tenants: TenantService;
  labels: LabelService;
  subscriptions: SubscriptionService;
  tokens: AccessTokens;
  bearer: BearerAuthenticator;
  keys: KeyRing;
  /** batch loaders for one request */
  loaders(caller: Caller): TenantLoaders;
}

export function createServices(deps: { config: Config; store: Store; clock: Clock; keys: KeyRing; lastUsed: LastUsedRecorder }): Services {
  const { config, store, clock, keys, lastUsed } = deps;
  const tokens = new AccessTokens(
    keys,
    { issuer: config.baseUrl, audience: config.baseUrl, region: config.region, ttlSeconds: config.tokenTtlSeconds },
    clock,
  );
  const tenants = new TenantService(store, clock, { expiryGraceDays: config.expiryGraceDays });
  return {
    clock,
    credentials: new CredentialService(store, clock, { region: config.region, createLimitPerHour: config.clientCreateLimit }, lastUsed),
    tenants,
    labels: new LabelService(store, clock, tenants),
    subscriptions: new SubscriptionService(store, clock, tenants),
    tokens,
    bearer: new BearerAuthenticator(tokens, store.principals),
    keys,
    loaders: (caller) => {
      let visibility: ReturnType<TenantService['visibility']> | undefined;
      return createTenantLoaders(store, clock, () => (visibility ??= tenants.visibility(caller.principal)));
    },
  };
}
