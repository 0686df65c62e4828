// What an IdP's configuration says, read from its metadata URL (fetched with the SSRF rules of
// safe-fetch.ts) or from a signing certificate given by hand: the entity id, the sign-in endpoint
// (HTTP-Redirect, which is how this service sends requests) and every signing certificate.
import { badInput } from '../errors.js';
import { parseCertificate, type IdpCertificate } from './certificate.js';
import { checkSignInEndpoint } from './endpoint.js';
import { parseIdpMetadata } from './idp-metadata.js';
import { fetchPublicUrl } from './safe-fetch.js';

export interface IdpConfiguration {
  /** from metadata only */
  entityId?: string;
  /** from metadata only: its HTTP-Redirect SingleSignOnService */
  signInEndpoint?: string;
  /** newest-expiring first */
  certificates: IdpCertificate[];
}

export async function readIdpConfiguration(
  input: { metadataUrl?: string | null; cert?: string | null },
  allowPrivateUrls: boolean,
): Promise<IdpConfiguration> {
  if (input.cert) return { certificates: [parseCertificate(input.cert)] };
  if (!input.metadataUrl) throw badInput('give metadataURL or cert', { field: 'metadataURL' });
  const { body } = await fetchPublicUrl(input.metadataUrl, { allowPrivate: allowPrivateUrls });
  return fromMetadata(body, allowPrivateUrls);
}

/** The configuration in a metadata document. */
export function fromMetadata(xml: string, allowPrivateUrls: boolean): IdpConfiguration {
  const metadata = parseIdpMetadata(xml);
  if (metadata.wantAuthnRequestsSigned) {
    throw badInput(
      'the IdP metadata says WantAuthnRequestsSigned="true", and Gatehouse does not sign its sign-in requests: turn that off at the IdP (requests carry no secret; responses stay signed)',
      { field: 'metadataURL' },
    );
  }
  const redirect = metadata.signInEndpoints.redirect;
  if (!redirect) {
    throw badInput('the IdP metadata has no SingleSignOnService with the HTTP-Redirect binding, which is how Gatehouse sends sign-in requests', {
      field: 'metadataURL',
    });
  }
  return {
    entityId: metadata.entityId,
    signInEndpoint: checkSignInEndpoint(redirect, allowPrivateUrls, 'metadataURL'),
    certificates: [...metadata.signingCertificates].sort((a, b) => b.expiresAt.getTime() - a.expiresAt.getTime()),
  };
}
