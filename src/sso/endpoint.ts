// The IdP's sign-in endpoint, where browsers are sent with an AuthnRequest. The browser, not this
// service, fetches it, so the concern is not SSRF but sending people over plain http: https only,
// except on this machine (localhost) or when GATEHOUSE_SSO_ALLOW_PRIVATE_URLS is set.
import { badInput } from '../errors.js';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function checkSignInEndpoint(raw: string, allowPrivateUrls: boolean, field = 'signInEndpoint'): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw badInput(`${field} must be an absolute URL (the IdP's SAML sign-in URL, e.g. https://idp.example.com/sso/saml)`, { field });
  }
  const local = LOCAL_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && (local || allowPrivateUrls))) {
    throw badInput(`${field} must be an https URL (the browser is sent there with the sign-in request)`, { field });
  }
  if (url.username || url.password) throw badInput(`${field} must not carry a user name or password`, { field });
  if (url.hash) throw badInput(`${field} must not have a #fragment`, { field });
  if (url.href.length > 2048) throw badInput(`${field} is longer than 2048 characters`, { field });
  return url.href;
}
