// Client authentication at the token endpoint: HTTP Basic (client_secret_basic, RFC 6749
// section 2.3.1: each part form-urlencoded before base64) or client_id + client_secret in the
// body (client_secret_post). Using both in one request is invalid_request (section 2.3). A public
// client (`none`: the device flow's, RFC 8628) only names itself.
import type { AuthenticatedClient } from '../credentials/model.js';
import { PUBLIC_CLIENTS } from '../device/model.js';
import { invalidClient, invalidRequest, OAuthError } from './errors.js';
import type { TokenParams } from './params.js';

export type { AuthenticatedClient } from '../credentials/model.js';

/** What client authentication asks of the credentials (CredentialService). */
export interface ClientAuthenticator {
  /** the client if the secret is one of its live secrets, else undefined */
  authenticate(clientId: string, secret: string): Promise<AuthenticatedClient | undefined>;
}

export interface PresentedCredentials {
  clientId: string;
  clientSecret: string;
  method: 'client_secret_basic' | 'client_secret_post';
}

function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw invalidClient();
  }
}

export function presentedCredentials(authorization: string | undefined, params: TokenParams): PresentedCredentials | undefined {
  const inBody = params.client_secret !== undefined;
  if (authorization !== undefined) {
    if (inBody) throw invalidRequest('use one client authentication method: HTTP Basic or client_secret in the body, not both');
    const m = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(authorization);
    if (!m) throw invalidClient();
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw invalidClient();
    const clientId = formDecode(decoded.slice(0, colon));
    if (params.client_id !== undefined && params.client_id !== clientId) {
      throw invalidRequest('client_id in the body differs from the one in the Authorization header');
    }
    return { clientId, clientSecret: formDecode(decoded.slice(colon + 1)), method: 'client_secret_basic' };
  }
  if (inBody) {
    if (params.client_id === undefined) throw invalidRequest('client_secret was sent without client_id');
    return { clientId: params.client_id, clientSecret: params.client_secret!, method: 'client_secret_post' };
  }
  return undefined;
}

export async function authenticateClient(
  credentials: ClientAuthenticator,
  presented: PresentedCredentials | undefined,
): Promise<AuthenticatedClient> {
  if (!presented) throw invalidClient();
  const client = await credentials.authenticate(presented.clientId, presented.clientSecret);
  if (!client) throw invalidClient();
  return client;
}

/** The public client a request names (the device authorization request, the device-code grant):
 *  one of this service's own, which hold no secret; any other is invalid_client. */
export function publicClient(params: TokenParams): string {
  const clientId = params.client_id;
  if (clientId === undefined || !(PUBLIC_CLIENTS as readonly string[]).includes(clientId)) {
    throw new OAuthError('invalid_client', `client_id must name a public client of this service (${PUBLIC_CLIENTS.join(', ')})`, 401);
  }
  return clientId;
}
