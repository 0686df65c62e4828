// Values every server of the comparison shares, so that each answers the same request: one
// client (the bootstrap client on Gatehouse), one resource, one GraphQL document.
export const CLIENT_ID = 'bench-compare-client';
export const CLIENT_SECRET = 'gatehouse_compare_secret_0123456789abcdefghijklmn';
export const AUDIENCE = 'urn:gatehouse-bench';
/** Form body: oidc-provider accepts only this encoding at its token endpoint; the others take it too. */
export const TOKEN_BODY = 'grant_type=client_credentials';
export const BASIC = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
/** Eight scalar fields of Gatehouse's Client type, asked of Gatehouse and of the graphql-jit reference alike. */
export const CLIENTS_QUERY = '{ clients { id name client_id roles tenant_id created_at updated_at created_by } }';

/** The port a server under test listens on (loopback only). */
export function portFromEnv(): number {
  const port = Number(process.env.PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error('PORT must be set');
  return port;
}
