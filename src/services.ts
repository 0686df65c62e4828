// The use cases, wired once per app to the store, clock and settings.
import { BearerAuthenticator } from './access/authenticate.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { LastUsedRecorder } from './credentials/last-used.js';
import { CredentialService } from './credentials/service.js';
import type { KeyRing } from './keys/key-ring.js';
import { AccessTokens } from './oauth/access-token.js';
import type { Store } from './store/index.js';

export interface Services {
  credentials: CredentialService;
  tokens: AccessTokens;
  bearer: BearerAuthenticator;
  keys: KeyRing;
}

export function createServices(deps: { config: Config; store: Store; clock: Clock; keys: KeyRing; lastUsed: LastUsedRecorder }): Services {
  const { config, store, clock, keys, lastUsed } = deps;
  const tokens = new AccessTokens(
    keys,
    { issuer: config.baseUrl, audience: config.baseUrl, region: config.region, ttlSeconds: config.tokenTtlSeconds },
    clock,
  );
  return {
    credentials: new CredentialService(store, clock, { region: config.region, createLimitPerHour: config.clientCreateLimit }, lastUsed),
    tokens,
    bearer: new BearerAuthenticator(tokens, store.principals),
    keys,
  };
}
