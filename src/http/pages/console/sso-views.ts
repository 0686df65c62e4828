// The HTML of the SSO pages but the wizard's steps (sso-wizard.ts): the list of a tenant's
// connections (status, domains, a certificate expiring within 30 days), a connection's page
// (its status and the moves it allows, domains, testers, certificates, metadata, the test
// sign-in) and the deletion's confirmation. sso.ts decides what each shows.
import {
  certificateExpiresSoon,
  currentCertificate,
  EXPIRY_WARNING_DAYS,
  STATUS_MOVES,
  type SpParameters,
  type SsoConnection,
  type SsoConnectionStatus,
} from '../../../sso/model.js';
import type { Session } from '../../../sessions/model.js';
import type { DomainProofStatus, ShownDomainProof } from '../../../sso/domain-proof.js';
import { html, type Html } from '../html.js';
import { csrfField } from '../page-kit.js';
import { alert, noticeOf, type View, when } from './layout.js';
import {
  connectionPath,
  SSO_CONNECTION_PATH,
  SSO_DELETE_PATH,
  SSO_EDIT_PATH,
  SSO_NEW_PATH,
  SSO_REFRESH_PATH,
  SSO_TEST_PATH,
  ssoListPath,
} from './paths.js';
import type { Problem } from './problems.js';
import { copyable, valuesToPaste } from './sso-wizard.js';

type TenantRef = { id: string; name: string };

/** What each status means, for the person. */
const STATUS_WORDS: Record<SsoConnectionStatus, string> = {
  Created: 'Being set up: nobody signs in through it yet.',
  Testing: 'Testing: only its testers sign in through it.',
  Enabled: 'Enabled: everyone in its domains signs in through it.',
  Disabled: 'Disabled: nobody signs in through it.',
};

/** The button of each status move. */
const MOVE_LABEL: Record<SsoConnectionStatus, string> = {
  Created: '',
  Testing: 'Back to testing',
  Enabled: 'Enable for everyone',
  Disabled: 'Disable',
};

/** The warning of a connection whose certificates all expire within 30 days (or have). */
function expiryWarning(c: SsoConnection, now: Date): Html | '' {
  if (!certificateExpiresSoon(c, now)) return '';
  const cert = currentCertificate(c, now);
  const expired = cert && cert.expiresAt <= now;
  return html`<span class="expiry">${expired ? 'Certificate expired' : 'Certificate expires'} ${when(cert?.expiresAt ?? null)}</span>`;
}

export function connectionList(o: { tenant: TenantRef; connections: SsoConnection[]; now: Date; notice: string | undefined }): View {
  const { tenant, connections, now } = o;
  const soon = connections.filter((c) => certificateExpiresSoon(c, now));
  return {
    title: `Single sign-on of ${tenant.name}`,
    body: html`${noticeOf(o.notice)}
<p class="lead">People whose e-mail domain a connection serves sign in at your identity provider (SAML 2.0).</p>
${
  soon.length > 0
    ? html`<div class="warning" role="alert"><p><strong>${soon.length === 1 ? 'A connection’s' : `${soon.length} connections’`} identity-provider certificate expires within ${EXPIRY_WARNING_DAYS} days.</strong> When it expires nobody signs in through the connection: add the IdP’s new certificate (or refresh its metadata) before then.</p></div>`
    : ''
}
<p><a class="button" href="${`${SSO_NEW_PATH}?tenant=${tenant.id}`}">Set up a connection</a></p>
${
  connections.length === 0
    ? html`<p>${tenant.name} has no single sign-on connection.</p>`
    : html`<div class="scroll"><table class="stack">
<caption>Connections</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Domains</th><th scope="col">Certificate valid until</th></tr></thead>
<tbody>
${connections.map(
  (c) => html`<tr>
<th scope="row"><a href="${connectionPath(SSO_CONNECTION_PATH, tenant.id, c.id)}">${c.name}</a></th>
<td data-label="Status">${c.status}</td>
<td data-label="Domains">${domainsWithStatus(c)}</td>
<td data-label="Certificate valid until">${expiryWarning(c, now) || when(currentCertificate(c, now)?.expiresAt ?? null, 'no certificate yet')}</td>
</tr>
`,
)}</tbody>
</table></div>`
}`,
  };
}

/** One small form that posts one change of the connection. */
function change(o: { session: Session; tenant: TenantRef; c: SsoConnection }, fields: Record<string, string>, button: Html, cls = ''): Html {
  return html`<form class="inline-form" method="post" action="${SSO_EDIT_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="connection" value="${o.c.id}">${Object.entries(
    fields,
  ).map(
    ([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`,
  )}<button type="submit"${cls ? html` class="${cls}"` : ''}>${button}</button></form>`;
}

/** A list of values (domains or testers), each with its remove button, and a field to add one. */
function valueList(
  o: { session: Session; tenant: TenantRef; c: SsoConnection },
  what: { id: string; heading: string; values: string[]; add: string; remove: string; label: string; hint: string; empty: string; type: string },
  failed: { problem: Problem; typed?: string | undefined } | undefined,
): Html {
  const typed = failed?.typed;
  return html`<section aria-labelledby="${what.id}-heading" id="${what.id}">
<h2 id="${what.id}-heading">${what.heading}</h2>
${alert(failed?.problem)}
${
  what.values.length === 0
    ? html`<p>${what.empty}</p>`
    : html`<ul class="values">${what.values.map(
        (v) =>
          html`<li><code>${v}</code> ${change(o, { change: what.remove, value: v }, html`Remove<span class="visually-hidden"> ${v}</span>`, 'link')}</li>`,
      )}</ul>`
}
<form class="fields" method="post" action="${SSO_EDIT_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="connection" value="${o.c.id}"><input type="hidden" name="change" value="${what.add}">
<label for="${what.id}-new">${what.label}</label>
<div class="inline"><input id="${what.id}-new" name="value" type="${what.type}" required value="${typed ?? ''}" aria-describedby="${what.id}-hint"><button type="submit">Add</button></div>
<p id="${what.id}-hint" class="hint">${what.hint}</p>
</form>
</section>`;
}

/** The domains, each not proven marked with its status (only proven ones route people). */
function domainsWithStatus(c: SsoConnection): string {
  return c.domainProofs.map((d) => (d.status === 'proven' ? d.domain : `${d.domain} (${d.status})`)).join(', ');
}

/** A domain's status, in the person's words. */
const PROOF_WORDS: Record<DomainProofStatus, string> = {
  pending: 'Pending: not proven yet, so nobody in it is sent to the identity provider.',
  proven: 'Proven: people in it sign in through this connection.',
  lost: 'Lost: its DNS record was not found for the grace period; nobody in it is sent to the identity provider until it is found again.',
};

/** The domains with their proofs by DNS: status, what the last check found, the record to
 *  publish (its value only in the answer that issued it), check now, a new value, remove. */
function domainsPart(
  o: { session: Session; tenant: TenantRef; c: SsoConnection },
  proofs: readonly ShownDomainProof[],
  failed: { problem: Problem; typed?: string | undefined } | undefined,
): Html {
  const issued = proofs.filter((d) => d.value !== null);
  return html`<section aria-labelledby="domains-heading" id="domains">
<h2 id="domains-heading">Domains</h2>
${alert(failed?.problem)}
<p>A domain routes people to the identity provider only once it is <strong>proven</strong>: publish a DNS record of type TXT named <code>_gatehouse-challenge.</code> followed by the domain, holding the value this page shows once when you ask for one (<em>Show a new value</em>), then <em>Check now</em>. Each domain is checked again regularly; a proven one whose record is no longer found stops routing after a grace period.</p>
${issued.map(
  (
    d,
  ) => html`<div class="notice" role="status"><p><strong>Publish this DNS record for ${d.domain}.</strong> The value is shown only now: copy it before you leave this page (you can ask for a new one).</p>
${copyable(`txt-name-${d.domain}`, `record name for ${d.domain}`, d.recordName, 'Name (host). Some DNS hosts add the domain themselves: then enter only the part before it.')}
<p>Type: <strong>TXT</strong></p>
${copyable(`txt-value-${d.domain}`, `record value for ${d.domain}`, d.value ?? '', 'Value (content), exactly as shown.')}
</div>`,
)}
<div class="scroll"><table class="stack">
<caption>Domains of the connection and their proof by DNS</caption>
<thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Last checked</th><th scope="col">Actions</th></tr></thead>
<tbody>${proofs.map(
    (d) =>
      html`<tr><th scope="row"><code>${d.domain}</code></th><td data-label="Status"><strong>${d.status}</strong>. ${PROOF_WORDS[d.status]}${
        d.provenElsewhere ? html` Another connection has proven this domain: it routes there.` : ''
      }${d.checkError ? html`<br><span class="hint">${d.checkError}</span>` : ''}</td><td data-label="Last checked">${when(d.checkedAt)}</td><td class="row-actions">${change(
        o,
        { change: 'checkDomain', value: d.domain },
        html`Check now<span class="visually-hidden"> ${d.domain}</span>`,
        'link',
      )}${change(o, { change: 'regenerateDomain', value: d.domain }, html`Show a new value<span class="visually-hidden"> for ${d.domain}</span>`, 'link')}${change(
        o,
        { change: 'removeDomain', value: d.domain },
        html`Remove<span class="visually-hidden"> ${d.domain}</span>`,
        'link',
      )}</td></tr>`,
  )}</tbody>
</table></div>
<form class="fields" method="post" action="${SSO_EDIT_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="connection" value="${o.c.id}"><input type="hidden" name="change" value="addDomain">
<label for="domains-new">Add a domain</label>
<div class="inline"><input id="domains-new" name="value" type="text" required value="${failed?.typed ?? ''}" aria-describedby="domains-hint"><button type="submit">Add</button></div>
<p id="domains-hint" class="hint">Like acme.com, without @. It is pending until proven by its DNS record: once added, ask for its value with <em>Show a new value</em>. A connection keeps at least one domain.</p>
</form>
</section>`;
}

export interface ConnectionPageParts {
  /** the IdP form (sso-wizard.ts idpForm), with its check and problem */
  idp: Html;
  /** the problem of a domain or tester change, and which list it belongs to */
  problem?: { of: 'domains' | 'testers' | 'name' | 'certificates' | 'status' | 'refresh'; problem: Problem; typed?: string | undefined };
}

export function connectionPage(o: {
  session: Session;
  tenant: TenantRef;
  c: SsoConnection;
  sp: SpParameters;
  /** the domains with their proofs (SsoService.domainProofs) */
  proofs: readonly ShownDomainProof[];
  now: Date;
  notice: string | undefined;
  parts: ConnectionPageParts;
}): View {
  const { c, tenant, now } = o;
  const p = o.parts.problem;
  const ctx = { session: o.session, tenant, c };
  const moves = STATUS_MOVES[c.status].filter((s) => s !== 'Created' && (c.status !== 'Created' || s === 'Disabled'));
  const setUp = c.status === 'Created';
  const canTest = c.status === 'Testing' || c.status === 'Enabled';
  return {
    title: `Connection ${c.name}`,
    body: html`${noticeOf(o.notice)}
<dl class="facts">
<dt>Status</dt><dd><strong>${c.status}</strong>. ${STATUS_WORDS[c.status]}</dd>
<dt>Domains</dt><dd>${domainsWithStatus(c)}</dd>
${c.idpEntityId ? html`<dt>IdP entity ID</dt><dd><code>${c.idpEntityId}</code></dd>` : ''}
${c.signInEndpoint ? html`<dt>Sign-in URL</dt><dd><code>${c.signInEndpoint}</code></dd>` : ''}
</dl>
${setUp ? html`${valuesToPaste(o.sp)}\n${o.parts.idp}` : ''}
${
  canTest || c.status === 'Disabled'
    ? html`<section aria-labelledby="test-heading" id="test">
<h2 id="test-heading">Test and enable</h2>
${c.status === 'Testing' ? html`<p class="hint">Set-up, step 4 of 4</p>` : ''}
<p>While the connection is Testing only its testers sign in through it. The test sign-in opens the identity provider in a new tab: sign in there as a tester. The tab then shows what the identity provider sent (the attributes), or what was wrong; nobody is signed in by it, and this tab stays signed in as you.</p>
${
  canTest
    ? html`<form method="post" action="${SSO_TEST_PATH}" target="_blank" class="inline-form">${csrfField(o.session)}<input type="hidden" name="tenant" value="${tenant.id}"><input type="hidden" name="connection" value="${c.id}"><button type="submit">Test sign-in<span class="visually-hidden"> (opens a new tab)</span></button></form>
<p class="hint">A tester can also sign in for real at <code>${o.sp.callbackURL}</code>, or by typing their address at the sign-in page.</p>`
    : html`<p>Move the connection back to Testing to test it.</p>`
}
${p?.of === 'status' ? alert(p.problem) : ''}
<div class="actions">${moves.map((s) => change(ctx, { change: 'status', status: s }, html`${MOVE_LABEL[s]}`, s === 'Disabled' ? 'secondary' : ''))}</div>
</section>`
    : c.status === 'Created'
      ? html`<section aria-labelledby="test-heading" id="test"><h2 id="test-heading">Test and enable</h2><p>Once the identity provider’s side is saved, the connection moves to Testing: its testers can then try it, and you enable it for everyone.</p>
${p?.of === 'status' ? alert(p.problem) : ''}
<div class="actions">${moves.map((s) => change(ctx, { change: 'status', status: s }, html`${MOVE_LABEL[s]}`, 'secondary'))}</div></section>`
      : ''
}
${domainsPart(ctx, o.proofs, p?.of === 'domains' ? p : undefined)}
${valueList(
  ctx,
  {
    id: 'testers',
    heading: 'Testers',
    values: c.testers,
    add: 'addTester',
    remove: 'removeTester',
    label: 'Add a tester',
    hint: 'An e-mail address in one of the domains. Testers sign in through the connection while it is Testing.',
    empty: 'No testers yet: add one to try the connection before enabling it.',
    type: 'email',
  },
  p?.of === 'testers' ? p : undefined,
)}
${certificates(ctx, now, p?.of === 'certificates' ? p.problem : undefined)}
${renameForm(ctx, p?.of === 'name' ? p : undefined)}
${metadataPart(ctx, p?.of === 'refresh' ? p.problem : undefined)}
${setUp ? '' : html`${o.parts.idp}\n<details><summary>This service’s values for the identity provider</summary>${valuesToPaste(o.sp)}</details>`}
<p class="actions"><a href="${ssoListPath(tenant.id)}">Back to the connections</a><a class="danger-link" href="${connectionPath(SSO_DELETE_PATH, tenant.id, c.id)}">Delete this connection</a></p>`,
  };
}

function renameForm(
  o: { session: Session; tenant: TenantRef; c: SsoConnection },
  failed: { problem: Problem; typed?: string | undefined } | undefined,
): Html {
  return html`<section aria-labelledby="name-heading" id="name"><h2 id="name-heading">Name</h2>
${alert(failed?.problem)}
<form class="fields" method="post" action="${SSO_EDIT_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="connection" value="${o.c.id}"><input type="hidden" name="change" value="name">
<label for="rename">Name of the connection</label>
<div class="inline"><input id="rename" name="value" type="text" maxlength="100" required value="${failed?.typed ?? o.c.name}"><button type="submit">Rename</button></div>
</form></section>`;
}

function certificates(o: { session: Session; tenant: TenantRef; c: SsoConnection }, now: Date, problem: Problem | undefined): Html {
  const { c } = o;
  if (c.certificates.length === 0) return html``;
  return html`<section aria-labelledby="certs-heading" id="certificates"><h2 id="certs-heading">Signing certificates</h2>
${alert(problem)}
${certificateExpiresSoon(c, now) ? html`<div class="warning" role="alert"><p>${expiryWarning(c, now)}: add the identity provider’s new certificate before then (or refresh its metadata), or nobody can sign in.</p></div>` : ''}
<div class="scroll"><table class="stack">
<caption>Certificates the identity provider signs with</caption>
<thead><tr><th scope="col">Subject</th><th scope="col">Issuer</th><th scope="col">Valid from</th><th scope="col">Valid until</th><th scope="col">From</th><th scope="col">Actions</th></tr></thead>
<tbody>${c.certificates.map(
    (cert) =>
      html`<tr><th scope="row">${cert.name ?? cert.subject}</th><td data-label="Issuer">${cert.issuer}</td><td data-label="Valid from">${when(cert.notBefore)}</td><td data-label="Valid until">${when(cert.expiresAt)}</td><td data-label="From">${cert.fromMetadata ? 'metadata' : 'pasted'}</td><td class="row-actions">${change(
        o,
        { change: 'removeCertificate', value: cert.id },
        html`Remove<span class="visually-hidden"> the certificate valid until ${cert.expiresAt.toISOString().slice(0, 10)}</span>`,
        'link',
      )}</td></tr>`,
  )}</tbody></table></div>
<p class="hint">During a key rollover at the identity provider, add its new certificate (or let the metadata list both), switch the IdP to it, then remove the old one here. While people sign in through the connection it keeps at least one certificate valid now.</p></section>`;
}

function metadataPart(o: { session: Session; tenant: TenantRef; c: SsoConnection }, problem: Problem | undefined): Html {
  const { c } = o;
  if (!c.metadataUrl) return html``;
  return html`<section aria-labelledby="metadata-heading" id="metadata"><h2 id="metadata-heading">Metadata</h2>
${alert(problem)}
<dl class="facts"><dt>Metadata URL</dt><dd><code>${c.metadataUrl}</code></dd>
<dt>Last read</dt><dd>${when(c.metadataRefreshedAt)}</dd>
${c.metadataRefreshError ? html`<dt>Last error</dt><dd>${c.metadataRefreshError}</dd>` : ''}</dl>
<form method="post" action="${SSO_REFRESH_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="connection" value="${c.id}"><button type="submit" class="secondary">Read the metadata again now</button></form>
</section>`;
}

export function deleteConfirmation(o: { session: Session; tenant: TenantRef; c: SsoConnection }): View {
  return {
    title: `Delete connection ${o.c.name}?`,
    body: html`<p><strong>This cannot be undone.</strong> Nobody signs in through it any more: people of its domains sign in with a password again, and those who have none need a set-up link from an Administrator. Their accounts stay.</p>
<dl class="facts"><dt>Status</dt><dd>${o.c.status}</dd><dt>Domains</dt><dd>${o.c.domains.join(', ')}</dd></dl>
<form method="post" action="${SSO_DELETE_PATH}">${csrfField(o.session)}<input type="hidden" name="tenant" value="${o.tenant.id}"><input type="hidden" name="connection" value="${o.c.id}">
<div class="actions"><button type="submit" class="danger">Delete connection</button><a href="${connectionPath(SSO_CONNECTION_PATH, o.tenant.id, o.c.id)}">Cancel</a></div>
</form>`,
  };
}

/** The test sign-in's new tab, on its way to the IdP (the page goes on by itself: a meta refresh;
 *  the link is for a browser that does not). */
export function testHop(c: SsoConnection, idpUrl: string): Html {
  return html`<p>Going on to the identity provider of ${c.name}: sign in there as a tester. This tab then shows what it sent; nobody is signed in by the test.</p>
<p><a class="button" href="${idpUrl}">Continue to the identity provider</a></p>`;
}
