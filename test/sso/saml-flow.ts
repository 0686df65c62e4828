// The browser's side of an SP-initiated SAML sign-in, for the tests of test/sso/ that drive the
// ACS over HTTP against the test IdP (test/helpers/saml-idp.ts): a tenant with one connection
// configured by the IdP's metadata, /login with an address, the AuthnRequest URL the browser is
// sent to, and the IdP's answer posted back as the browser would.
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { RunningClock } from '../helpers/browser.js';
import { PageClient } from '../helpers/pages.js';
import { type SamlPost, startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import type { Engine } from '../../src/store/db.js';
import { markDomainProven } from '../helpers/sso-domains.js';
import { createTenant } from '../helpers/tenants.js';

const TENANT_PATH = '/public/query';

export interface Connection {
  tenant: string;
  id: string;
  /** its ACS URL, as the IdP posts to it */
  acsUrl: string;
}

/** A tenant and a connection serving `domain`, configured by the IdP's metadata, then `status`;
 *  the domain marked proven in the store (test/helpers/sso-domains.ts) unless `proven` is false. */
export async function connectIdp(
  t: TestApp,
  idp: TestIdp,
  domain: string,
  status: 'Testing' | 'Enabled',
  testers: string[] = [],
  { proven = true }: { proven?: boolean } = {},
): Promise<Connection> {
  const root = await t.rootToken();
  const tenant = await createTenant(t, '1', { name: `Corp ${domain}` });
  const created = await t.gql(
    root,
    'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id ssoConnectionParameters { postBackURL } } }',
    { c: { name: 'Corp IdP', type: 'saml', domains: [domain], testers } },
    { path: TENANT_PATH, tenant },
  );
  assert.equal(created.body.errors, undefined, created.text);
  const { id, ssoConnectionParameters } = created.body.data.createSSOConnection;
  if (proven) await markDomainProven(t, id, domain);
  for (const u of [{ id, samlConfiguration: { metadataURL: idp.metadataUrl } }, ...(status === 'Enabled' ? [{ id, status }] : [])]) {
    const res = await t.gql(
      root,
      'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }',
      { u },
      { path: TENANT_PATH, tenant },
    );
    assert.equal(res.body.errors, undefined, res.text);
  }
  return { tenant, id, acsUrl: ssoConnectionParameters.postBackURL };
}

/**
 * A service and the test IdP, with a tenant whose connection serving `domain` is Enabled. The
 * service's clock runs with real time: node-saml and the IdP read the real clock. Close both with
 * `close()`.
 */
export async function samlWorld(
  engine: Engine,
  domain: string,
): Promise<{ t: TestApp; idp: TestIdp; connection: Connection; close(): Promise<void> }> {
  const [t, idp] = await Promise.all([
    startTestApp({ engine, clock: new RunningClock(), env: { GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true' } }),
    startTestIdp(),
  ]);
  const connection = await connectIdp(t, idp, domain, 'Enabled');
  return { t, idp, connection, close: async () => void (await Promise.all([t.close(), idp.close()])) };
}

/** /login with an address typed, on to the IdP: the AuthnRequest URL the browser is sent to. */
export async function toIdp(t: TestApp, client: PageClient, email: string): Promise<string> {
  const page = await client.get('/login');
  const typed = await client.post('/login', { _csrf: client.csrf(page), email });
  assert.equal(typed.status, 303, typed.text);
  const next = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec((await client.get('/login')).text)?.[1];
  assert.ok(next?.startsWith('/sso/saml/'), `on to the IdP, not ${next}`);
  const res = await client.get(next!);
  assert.equal(res.status, 303, res.text);
  return String(res.headers.location);
}

/** A SAMLResponse form (and RelayState) made from Response XML, as an attacker would post it. */
export function formOf(xml: string, post?: Pick<SamlPost, 'RelayState'>): Record<string, string> {
  return { SAMLResponse: Buffer.from(xml, 'utf8').toString('base64'), ...(post?.RelayState === undefined ? {} : { RelayState: post.RelayState }) };
}

/** The IdP's answer posted to the ACS by this browser; then /sso/saml/finish when it was accepted. */
export async function postBack(t: TestApp, client: PageClient, connection: Connection, form: Record<string, string> | SamlPost) {
  const fields = form.form instanceof URLSearchParams ? Object.fromEntries(form.form) : (form as Record<string, string>);
  const acs = await client.post(new URL(connection.acsUrl).pathname, fields);
  if (acs.status !== 303) return { acs, signedIn: undefined };
  await client.get(String(acs.headers.location));
  return { acs, signedIn: await whoIsSignedIn(client) };
}

/** Whose console this browser sees, if anyone's. */
export async function whoIsSignedIn(client: PageClient): Promise<string | undefined> {
  const page = await client.get('/console');
  return page.status === 200 ? (/Signed in as <strong>([^<]+)<\/strong>/.exec(page.text)?.[1] ?? 'someone') : undefined;
}

/** Why the service refused responses: the reasons it logged (the page says only that it could not accept). */
export function refusalReasons(t: TestApp): string[] {
  return t.logs.filter((l) => l.includes('SAML sign-in refused')).map((l) => String((JSON.parse(l) as { reason?: unknown }).reason));
}

/** Whether the replay store holds this assertion of this connection as used. */
export async function isUsed(t: TestApp, connection: Connection, assertionId: string): Promise<boolean> {
  const row = await t.db.kysely
    .selectFrom('saml_assertions_used')
    .select('assertion_id')
    .where('connection_id', '=', connection.id)
    .where('assertion_id', '=', assertionId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The one Assertion element of a response's XML, as text (the test IdP's prefix). */
export function assertionOf(xml: string): string {
  const end = '</saml:Assertion>';
  const start = xml.indexOf('<saml:Assertion ');
  assert.ok(start >= 0, 'an assertion');
  return xml.slice(start, xml.lastIndexOf(end) + end.length);
}

export { PageClient };
