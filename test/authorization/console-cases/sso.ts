// The single sign-on pages (src/http/pages/console/sso.ts) in the page matrix: each route and the
// GraphQL operation behind it, on a connection of C1 made by the root Administrator.
//
// The refresh case needs a connection configured by a metadata URL: a small metadata document is
// served here on loopback (http), so the runner's app must allow private URLs
// (GATEHOUSE_SSO_ALLOW_PRIVATE_URLS=true, as the GraphQL matrix's app does). Its server is unref'd:
// it does not keep the test process alive.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeCertificate, pemBody } from '../../helpers/openssl.js';
import type { PageCase, PageWorld, State } from './types.js';

const TENANT = { iface: 'tenant' as const };

/** a signing certificate valid from 2020 to 2036, whatever the test clock says (made once, by openssl) */
let certificate: string | undefined;
const pem = () => {
  certificate ??= makeCertificate({ subject: '/CN=idp.cases.test', validity: { notBefore: '20200101000000Z', notAfter: '20361231000000Z' } }).certPem;
  return certificate;
};

/** the URL of an IdP metadata document served on loopback (started once) */
let metadataUrl: Promise<string> | undefined;
function idpMetadataUrl(): Promise<string> {
  metadataUrl ??= new Promise((resolve, reject) => {
    const xml = `<?xml version="1.0"?>
<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.cases.test/metadata"><IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><KeyDescriptor use="signing"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>${pemBody(pem())}</X509Certificate></X509Data></KeyInfo></KeyDescriptor><SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.cases.test/sso"/></IDPSSODescriptor></EntityDescriptor>`;
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(xml));
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`);
    });
  });
  return metadataUrl;
}

/** a new connection of C1 (Created), serving a domain of its own */
async function connectionOfC1(w: PageWorld): Promise<State> {
  const domain = `${w
    .unique('sso')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')}.test`;
  const made = await w.gql(
    'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
    { c: { name: w.unique('SSO'), type: 'saml', domains: [domain] } },
    { tenant: w.C1, ...TENANT },
  );
  return { id: made.createSSOConnection.id, domain };
}

/** A connection of C1 whose IdP's side is saved (Testing): a test sign-in can start. */
async function configuredOfC1(w: PageWorld): Promise<State> {
  const s = await connectionOfC1(w);
  await w.gql(
    'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { id } }',
    { u: { id: s.id, samlConfiguration: { signingCert: pem(), signInEndpoint: 'https://idp.cases.test/sso' } } },
    { tenant: w.C1, ...TENANT },
  );
  return s;
}

/** one connection of C1 as the root Administrator reads it, or undefined once deleted */
const readBack = async (w: PageWorld, id: string) =>
  (await w.gql('{ ssoConnections { id name domains status metadataRefreshedAt } }', {}, { tenant: w.C1, ...TENANT })).ssoConnections.find(
    (c: { id: string }) => c.id === id,
  );

export const SSO_CASES: PageCase[] = [
  {
    route: 'GET /console/sso',
    row: 'ssoConnections',
    prepare: connectionOfC1,
    request: (w) => ({ path: `/console/sso?tenant=${w.C1}` }),
    effect: async (_w, s, res) => assert.ok(res.text.includes(`connection=${s.id}`), 'the connection is listed'),
  },
  {
    route: 'GET /console/sso/new',
    row: 'createSSOConnection',
    request: (w) => ({ path: `/console/sso/new?tenant=${w.C1}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/sso\/new"/),
  },
  {
    route: 'POST /console/sso/new',
    row: 'createSSOConnection',
    prepare: async (w) => ({
      name: w.unique('made-sso'),
      domain: `${w
        .unique('made')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-')}.test`,
    }),
    request: (w, s) => ({ path: '/console/sso/new', form: { tenant: w.C1, name: s.name, domains: s.domain, testers: '' } }),
    effect: async (w, s) => {
      const all = (await w.gql('{ ssoConnections { name domains } }', {}, { tenant: w.C1, ...TENANT })).ssoConnections;
      assert.ok(all.some((c: { name: string; domains: string[] }) => c.name === s.name && c.domains.includes(s.domain)));
    },
  },
  {
    route: 'GET /console/sso/connection',
    row: 'ssoConnection',
    prepare: connectionOfC1,
    request: (w, s) => ({ path: `/console/sso/connection?tenant=${w.C1}&connection=${s.id}` }),
    effect: async (_w, s, res) => assert.ok(res.text.includes(`/sso/saml/${s.id}/acs`), 'the values to paste at the IdP'),
  },
  {
    route: 'POST /console/sso/check',
    row: 'getSSOConnectionConfig',
    prepare: connectionOfC1,
    request: (w, s) => ({
      path: '/console/sso/check',
      form: { tenant: w.C1, connection: s.id, method: 'certificate', signingCert: pem(), signInEndpoint: 'https://idp.cases.test/sso' },
    }),
    effect: async (w, s, res) => {
      assert.match(res.text, /<dt>Subject<\/dt><dd>CN=idp\.cases\.test<\/dd>/);
      assert.equal((await readBack(w, s.id)).status, 'Created', 'the check saved nothing');
    },
  },
  {
    route: 'POST /console/sso/edit',
    row: 'updateSSOConnection',
    prepare: connectionOfC1,
    request: (w, s) => ({ path: '/console/sso/edit', form: { tenant: w.C1, connection: s.id, change: 'addDomain', value: `more-${s.domain}` } }),
    effect: async (w, s) => assert.deepEqual((await readBack(w, s.id)).domains.sort(), [s.domain, `more-${s.domain}`].sort()),
  },
  {
    route: 'POST /console/sso/refresh',
    row: 'refreshSSOConnectionMetadata',
    prepare: async (w) => {
      const s = await connectionOfC1(w);
      await w.gql(
        'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { id } }',
        { u: { id: s.id, samlConfiguration: { metadataURL: await idpMetadataUrl() } } },
        { tenant: w.C1, ...TENANT },
      );
      w.t.clock.advance(60_000);
      return s;
    },
    request: (w, s) => ({ path: '/console/sso/refresh', form: { tenant: w.C1, connection: s.id } }),
    effect: async (w, s) => assert.equal(new Date((await readBack(w, s.id)).metadataRefreshedAt).getTime(), w.t.clock.now().getTime()),
  },
  {
    // the test sign-in: a form (a new tab) whose answer goes on to the IdP by itself, for whom may
    // read the connection; it opens a SAML request of 10 minutes
    route: 'POST /console/sso/test',
    row: 'ssoConnection',
    prepare: configuredOfC1,
    request: (w, s) => ({ path: '/console/sso/test', form: { tenant: w.C1, connection: s.id } }),
    effect: async (_w, _s, res) => {
      assert.equal(res.status, 200);
      assert.match(res.text, /<meta http-equiv="refresh" content="0;url=https:\/\/idp\.cases\.test\/sso\?SAMLRequest=/, 'on to the IdP');
    },
  },
  {
    // a link to the test sign-in (a GET) starts nothing: it leads to the connection's page
    route: 'GET /console/sso/test',
    row: 'ssoConnection',
    prepare: configuredOfC1,
    request: (w, s) => ({ path: `/console/sso/test?tenant=${w.C1}&connection=${s.id}` }),
    effect: async (w, s, res) => {
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, `/console/sso/connection?tenant=${w.C1}&connection=${s.id}#test`);
    },
  },
  {
    route: 'GET /console/sso/delete',
    row: 'deleteSSOConnection',
    prepare: connectionOfC1,
    request: (w, s) => ({ path: `/console/sso/delete?tenant=${w.C1}&connection=${s.id}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/sso\/delete"/),
  },
  {
    route: 'POST /console/sso/delete',
    row: 'deleteSSOConnection',
    prepare: connectionOfC1,
    request: (w, s) => ({ path: '/console/sso/delete', form: { tenant: w.C1, connection: s.id } }),
    effect: async (w, s) => assert.equal(await readBack(w, s.id), undefined),
  },
];
