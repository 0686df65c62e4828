// Discovery: authorization-server metadata (RFC 8414) and the public signing keys (JWKS).
import type { FastifyReply } from 'fastify';
import { SCOPE_NAMES } from '../../access/scope.js';
import type { KeyRing } from '../../keys/key-ring.js';
import { SIGNING_ALG } from '../../keys/key-ring.js';
import { DEVICE_AUTHORIZATION_PATH } from './device-authorization.js';
import { INTROSPECTION_PATH } from './introspection-endpoint.js';
import { REVOCATION_PATH } from './revocation-endpoint.js';
import { GRANT_TYPES, TOKEN_PATH } from './token-endpoint.js';

export const JWKS_PATH = '/.well-known/jwks.json';
export const METADATA_PATH = '/.well-known/oauth-authorization-server';

export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    token_endpoint: `${issuer}${TOKEN_PATH}`,
    device_authorization_endpoint: `${issuer}${DEVICE_AUTHORIZATION_PATH}`,
    jwks_uri: `${issuer}${JWKS_PATH}`,
    // RFC 7662: API clients whose roles allow it (docs/tokens.md)
    introspection_endpoint: `${issuer}${INTROSPECTION_PATH}`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    // RFC 7009: a client's own tokens; `none`: gatehouse-cli revokes its user token at logout
    revocation_endpoint: `${issuer}${REVOCATION_PATH}`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    grant_types_supported: [...GRANT_TYPES],
    // `none`: the public client of the device flow (gatehouse-cli)
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    // scopes are role names (oauth/scope.ts); a client may ask only for roles it holds
    scopes_supported: [...SCOPE_NAMES],
    // no authorization endpoint: this server issues tokens to clients and devices only
    response_types_supported: [],
    access_token_signing_alg_values_supported: [SIGNING_ALG],
  };
}

/**
 * The handlers of GET METADATA_PATH and GET JWKS_PATH: public, cached for five minutes (a new
 * signing key is published GATEHOUSE_SIGNING_KEY_PREPUBLISH_HOURS before it signs, far longer;
 * docs/tokens.md, "Signing keys").
 */
export function discovery(opts: { issuer: string; keys: KeyRing }) {
  const metadata = authorizationServerMetadata(opts.issuer);
  return {
    metadata: async (_request: unknown, reply: FastifyReply) => {
      reply.header('cache-control', 'public, max-age=300');
      return metadata;
    },
    jwks: async (_request: unknown, reply: FastifyReply) => {
      reply.header('cache-control', 'public, max-age=300');
      return await opts.keys.jwks();
    },
  };
}
