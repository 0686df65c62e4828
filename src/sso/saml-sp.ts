// This service as a SAML service provider for one connection: the @node-saml/node-saml instance
// with the settings docs/sso.md describes. One instance per sign-in step (they are cheap); the
// requests issued live in the database (the cache provider below), not in a process's memory,
// so any process can finish a sign-in another began.
import type { CacheItem, CacheProvider, SAML } from '@node-saml/node-saml';

/** @node-saml/node-saml, imported at the first SAML operation (its import takes about 45 ms of the
 *  server's start, for deployments where nobody signs in through SSO). */
let library: Promise<typeof import('@node-saml/node-saml')> | undefined;
const nodeSaml = () => {
  library ??= import('@node-saml/node-saml');
  return library;
};
import type { SsoConnection } from './model.js';
import type { SsoStore } from './store.js';

/** How long an AuthnRequest may be answered. */
export const REQUEST_TTL_MS = 10 * 60_000;
/** Clock difference tolerated between the IdP and this service (OWASP: a few minutes at most). */
export const CLOCK_SKEW_MS = 3 * 60_000;

export interface SpValues {
  entityID: string;
  postBackURL: string;
}

/**
 * The cache node-saml asks whether an InResponseTo names a request it issued. It answers only
 * for open requests of this connection: a response naming another connection's request, an
 * answered one, or an expired one is refused. Saving is done by the caller (start), who knows
 * the browser session; node-saml's removal is left to completeSamlRequest, which marks the
 * request answered in the same step as the sign-in it leads to.
 */
function requestCache(sso: SsoStore, connectionId: string, now: () => Date): CacheProvider {
  return {
    saveAsync: async (_key: string, value: string): Promise<CacheItem | null> => ({ value, createdAt: Date.now() }),
    getAsync: async (key: string) => {
      const open = await sso.findOpenSamlRequest(connectionId, key, now());
      return open ? open.createdAt.toISOString() : null;
    },
    removeAsync: async (key: string | null) => key,
  };
}

export async function serviceProvider(
  connection: SsoConnection,
  sp: SpValues,
  certificates: string[],
  sso: SsoStore,
  now: () => Date,
  requestId?: string,
): Promise<SAML> {
  const { SAML, ValidateInResponseTo } = await nodeSaml();
  return new SAML({
    ...(requestId ? { generateUniqueId: () => requestId } : {}),
    issuer: sp.entityID,
    callbackUrl: sp.postBackURL,
    audience: sp.entityID,
    entryPoint: connection.signInEndpoint ?? undefined,
    // only the connection's certificates: node-saml (xml-crypto 6) ignores KeyInfo in the document
    idpCert: certificates,
    ...(connection.idpEntityId ? { idpIssuer: connection.idpEntityId } : {}),
    // a signature over the response or over the assertion (IdPs differ; Okta signs both, Entra ID
    // the assertion, some ADFS setups the response): with both false node-saml 5.1 requires a
    // valid signature by a configured certificate over one of them, and reads the assertion only
    // from the bytes that signature covers
    wantAssertionsSigned: false,
    wantAuthnResponseSigned: false,
    // node-saml reads the Response's InResponseTo before it verifies any signature, from a
    // Response that is unsigned when only the assertion is: the service reads it from signed
    // content itself (assertion-checks.ts) and requires one. node-saml still checks the Response's
    // when there is one ('ifPresent'), as a second opinion; 'always' would also refuse a Response
    // that leaves it to the assertion's SubjectConfirmationData, where the profile requires it.
    validateInResponseTo: ValidateInResponseTo.ifPresent,
    requestIdExpirationPeriodMs: REQUEST_TTL_MS,
    cacheProvider: requestCache(sso, connection.id, now),
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    signatureAlgorithm: 'sha256',
    identifierFormat: null,
    disableRequestedAuthnContext: true,
    // the IdP's NameID is an e-mail address (docs/sso.md); no extra round trips
    forceAuthn: false,
    passive: false,
  });
}

/** This service's SP metadata for a connection (unsigned: it carries no secret). */
export async function spMetadata(connection: SsoConnection, sp: SpValues, sso: SsoStore, now: () => Date): Promise<string> {
  // the metadata needs no IdP certificate; node-saml wants one in the options all the same
  const saml = await serviceProvider(connection, sp, ['unused'], sso, now);
  return saml.generateServiceProviderMetadata(null, null);
}
