// The HTML of the SSO set-up wizard (docs/sso.md, "Setting up a connection"): step 1, the
// connection's name, domains and testers (createSSOConnection); step 2, this service's values to
// paste into the identity provider, each with a copy button, and short instructions for Okta,
// Microsoft Entra ID and Google Workspace; step 3, the IdP's side (a metadata URL, or a
// certificate and a sign-in URL) with the live check (getSSOConnectionConfig) shown before it is
// saved (updateSSOConnection). sso.ts decides what each shows; sso-views.ts holds the rest.
import type { IdpConfiguration } from '../../../sso/idp-configuration.js';
import type { SpParameters } from '../../../sso/model.js';
import type { Session } from '../../../sessions/model.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../page-kit.js';
import { alert, type View, when } from './layout.js';
import { SSO_CHECK_PATH, SSO_EDIT_PATH, SSO_NEW_PATH, ssoListPath } from './paths.js';
import type { Problem } from './problems.js';

type TenantRef = { id: string; name: string };

/** What the new-connection form was sent with, to show it again. */
export interface NewValues {
  name: string;
  domains: string;
  testers: string;
}

/** The steps, for the line above each step's page. */
const steps = (n: number) => html`<p class="hint">Set-up, step ${n} of 4</p>`;

/** Step 1: GET/POST /console/sso/new. */
export function newConnectionForm(o: { session: Session; tenant: TenantRef; values?: NewValues; problem?: Problem }): View {
  const v = o.values ?? { name: '', domains: '', testers: '' };
  return {
    title: 'Set up single sign-on',
    body: html`${steps(1)}${alert(o.problem)}
<p>Connect ${o.tenant.name} to your company’s identity provider (Okta, Microsoft Entra ID, Google Workspace, or any SAML 2.0 IdP). People whose e-mail domain the connection serves will then sign in there, with the IdP’s own multi-factor check. Nothing changes for anyone until you enable it at the end.</p>
<form class="fields" method="post" action="${SSO_NEW_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}">
<label for="name">Name</label>
<input id="name" name="name" type="text" maxlength="100" required autofocus value="${v.name}" aria-describedby="name-hint">
<p id="name-hint" class="hint">For you, for example “Acme Okta”.</p>
<label for="domains">E-mail domains</label>
<textarea id="domains" name="domains" rows="3" required aria-describedby="domains-hint">${v.domains}</textarea>
<p id="domains-hint" class="hint">One a line, like <code>acme.com</code> (without @). Everyone with an address there will sign in through this connection once it is enabled and the domain is proven by a DNS record (the connection’s page shows it).</p>
<label for="testers">Testers (optional)</label>
<textarea id="testers" name="testers" rows="3" aria-describedby="testers-hint">${v.testers}</textarea>
<p id="testers-hint" class="hint">E-mail addresses, one a line, in the domains above. While the connection is being tested, only they sign in through it. You can add them later.</p>
<div class="actions"><button type="submit">Create and continue</button><a href="${ssoListPath(o.tenant.id)}">Cancel</a></div>
</form>`,
  };
}

/** One value to paste at the IdP, with its copy button (the copy script shows it). */
export function copyable(id: string, label: string, value: string, hint: string): Html {
  return html`<label for="${id}">${label}</label>
<div class="copyable"><input id="${id}" type="text" class="mono" readonly value="${value}" spellcheck="false" aria-describedby="${id}-hint"><button type="button" class="copy" data-copy="${id}" hidden>Copy<span class="visually-hidden"> ${label}</span></button></div>
<p id="${id}-hint" class="hint">${hint}</p>
<p id="${id}-status" class="hint" role="status"></p>`;
}

/** Step 2: this service's values and where each IdP wants them. */
export function valuesToPaste(sp: SpParameters): Html {
  return html`<section aria-labelledby="sp-values">
<h2 id="sp-values">At your identity provider</h2>
${steps(2)}
<p>Create a SAML application at your identity provider and give it these values. Send the person’s e-mail address as the NameID, and sign the assertion with RSA-SHA256.</p>
${copyable('sp-entity-id', 'Entity ID (Audience URI)', sp.entityID, 'Called SP Entity ID, Audience URI or Identifier.')}
${copyable('sp-acs-url', 'ACS URL (Reply URL)', sp.postBackURL, 'Called Assertion Consumer Service URL, Single sign-on URL or Reply URL; binding HTTP-POST.')}
${copyable('sp-metadata-url', 'SP metadata link', sp.metadataURL, 'For identity providers that import a service provider’s metadata.')}
<details><summary>Okta</summary>
<ol><li>Applications › Create App Integration › SAML 2.0.</li>
<li>Single sign-on URL: the ACS URL; Audience URI (SP Entity ID): the entity ID.</li>
<li>Name ID format: EmailAddress; Application username: Email.</li>
<li>Assign the people or groups, then open Sign On › “Metadata URL” and copy it for the next step.</li></ol>
</details>
<details><summary>Microsoft Entra ID</summary>
<ol><li>Enterprise applications › New application › Create your own application (non-gallery).</li>
<li>Single sign-on › SAML › Basic SAML Configuration: Identifier (Entity ID): the entity ID; Reply URL: the ACS URL.</li>
<li>Attributes &amp; Claims: Unique User Identifier (Name ID) = user.mail, format Email address.</li>
<li>Assign users and groups; copy the “App Federation Metadata Url” for the next step.</li></ol>
</details>
<details><summary>Google Workspace</summary>
<ol><li>Admin console › Apps › Web and mobile apps › Add app › Add custom SAML app.</li>
<li>Download the certificate (or copy it) and copy the SSO URL: Google publishes no metadata URL, so use “certificate and sign-in URL” in the next step.</li>
<li>Service provider details: ACS URL and Entity ID as above; Name ID format EMAIL, Name ID Basic Information › Primary email.</li>
<li>Turn the app on for the people who will use it.</li></ol>
</details>
</section>`;
}

/** What the IdP form was sent with. */
export interface IdpValues {
  /** which way: metadata URL, or certificate and sign-in URL */
  method: 'metadata' | 'certificate';
  metadataURL: string;
  signingCert: string;
  signInEndpoint: string;
}

/** The live check's answer: what the IdP's metadata or certificate says (nothing saved yet). */
function checkResult(idp: IdpConfiguration, now: Date): Html {
  return html`<div class="notice" role="status"><p><strong>Checked: this is what the identity provider says.</strong> Nothing is saved yet.</p>
${idp.entityId ? html`<dl class="facts"><dt>IdP entity ID</dt><dd><code>${idp.entityId}</code></dd></dl>` : ''}
${idp.signInEndpoint ? html`<dl class="facts"><dt>Sign-in URL</dt><dd><code>${idp.signInEndpoint}</code></dd></dl>` : ''}
${idp.certificates.map(
  (c) => html`<dl class="facts cert-check">
<dt>Issuer</dt><dd>${c.issuer}</dd>
<dt>Subject</dt><dd>${c.subject}</dd>
<dt>Valid from</dt><dd>${when(c.notBefore)}</dd>
<dt>Valid until</dt><dd>${when(c.expiresAt)}${c.expiresAt <= now ? html` <strong>(expired)</strong>` : ''}</dd>
<dt>SHA-256 fingerprint</dt><dd><code>${c.fingerprint256}</code></dd>
</dl>`,
)}
<p>If this is your identity provider, save it.</p></div>`;
}

/** Step 3: the IdP's side, checked (Check) then saved (Save). */
export function idpForm(o: {
  session: Session;
  tenant: TenantRef;
  connectionId: string;
  values?: IdpValues;
  checked?: IdpConfiguration;
  problem?: Problem;
  now: Date;
  configuredBefore: boolean;
}): Html {
  const v = o.values ?? { method: 'metadata', metadataURL: '', signingCert: '', signInEndpoint: '' };
  const radio = (value: IdpValues['method'], label: string) =>
    html`<div class="choice"><input type="radio" id="method-${value}" name="method" value="${value}"${v.method === value ? html` checked` : ''}><label for="method-${value}">${label}</label></div>`;
  return html`<section aria-labelledby="idp-side" id="idp">
<h2 id="idp-side">${o.configuredBefore ? 'Change the identity provider’s side' : 'The identity provider’s side'}</h2>
${o.configuredBefore ? '' : steps(3)}
${alert(o.problem)}${o.checked ? checkResult(o.checked, o.now) : ''}
<form class="fields" method="post" action="${SSO_EDIT_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="connection" value="${o.connectionId}"><input type="hidden" name="change" value="idp">
<fieldset>
<legend>How to give it</legend>
${radio('metadata', 'Metadata URL (recommended: certificates are then read again every day)')}
${radio('certificate', 'Certificate and sign-in URL')}
</fieldset>
<label for="metadataURL">Metadata URL</label>
<input id="metadataURL" name="metadataURL" type="url" class="mono" value="${v.metadataURL}" spellcheck="false" aria-describedby="metadataURL-hint">
<p id="metadataURL-hint" class="hint">The https address of the IdP’s SAML metadata (Okta’s “Metadata URL”, Entra ID’s “App Federation Metadata Url”).</p>
<label for="signingCert">Signing certificate (PEM)</label>
<textarea id="signingCert" name="signingCert" rows="6" class="mono" spellcheck="false" aria-describedby="signingCert-hint">${v.signingCert}</textarea>
<p id="signingCert-hint" class="hint">Open the certificate file the IdP gave you in a text editor and paste all of it, from <code>-----BEGIN CERTIFICATE-----</code> to <code>-----END CERTIFICATE-----</code> (this page takes pasted text, not a file upload).</p>
<label for="signInEndpoint">Sign-in URL</label>
<input id="signInEndpoint" name="signInEndpoint" type="url" class="mono" value="${v.signInEndpoint}" spellcheck="false" aria-describedby="signInEndpoint-hint">
<p id="signInEndpoint-hint" class="hint">The IdP’s SAML single sign-on URL (HTTP-Redirect), with the certificate only.</p>
<div class="actions"><button type="submit" formaction="${SSO_CHECK_PATH}" class="secondary">Check</button><button type="submit">Save</button></div>
</form>
</section>`;
}
