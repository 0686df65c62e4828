// (c) oidc-provider's client_credentials grant, the peer most Node identity servers build on.
// Configured as close to Gatehouse as it allows: one client with client_secret_basic, and a
// resource indicator whose access tokens are JWTs signed ES256 (oidc-provider's default for
// client_credentials would be opaque tokens kept in its store, which is a different product).
// Its in-memory adapter is enough: JWT access tokens are not stored.
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, portFromEnv } from '../fixtures.js';

const port = portFromEnv();
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'bench' };

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      // the only key is EC: the default RS256 would fail client validation
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [jwk] },
  // unused by this grant; set so that the provider does not warn about it
  cookies: { keys: ['gatehouse-bench-cookie-key'] },
  scopes: ['api'],
  // as the other issuers: one hour (and no notice about the default on stderr)
  ttl: { ClientCredentials: 3600 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => AUDIENCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({ scope: 'api', audience: AUDIENCE, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
    },
  },
});
provider.listen(port, '127.0.0.1');
