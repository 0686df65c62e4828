// SSO connections on the tenant interface (docs/sso.md): what a tenant Administrator notices when
// creating, configuring (by a real IdP's metadata URL, or by hand), moving through the statuses,
// rolling certificates over, and deleting. Who may call what is the authorization matrix's.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestApp, TEST_BASE_URL, type Response, type TestApp } from '../helpers/app.js';
import { RunningClock } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { makeCertificate } from '../helpers/openssl.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { rowCounts } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const FIELDS = `id name type status externalName externalID environment tenantID createdAt updatedAt certName expiresAt notBefore issuer subject
  domains testers certificateExpiresSoon metadataURL metadataRefreshedAt metadataRefreshError
  ssoConnectionParameters { postBackURL entityID metadataURL callbackURL }
  ssoConnectionIDPConfig { samlConnectionConfiguration { signingCert signInEndpoint } azureADConnectionConfiguration { clientID clientSecret domain } }
  certificates { id name pem fingerprintSHA256 issuer subject notBefore expiresAt fromMetadata expired }`;
const CREATE = `mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { ${FIELDS} } }`;
const UPDATE = `mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { ${FIELDS} } }`;
const DELETE = `mutation($id: ID!) { deleteSSOConnection(connectionID: $id) { id name domains } }`;
const REFRESH = `mutation($id: ID!) { refreshSSOConnectionMetadata(connectionID: $id) { ${FIELDS} } }`;
const LIST = `{ ssoConnections { id name status domains certificateExpiresSoon } }`;
const ONE = `query($id: ID!) { ssoConnection(connectionID: $id) { ${FIELDS} } }`;
const CONFIG = `query($m: String, $c: String) { getSSOConnectionConfig(metadataURL: $m, cert: $c) {
  ssoConnectionConfiguration { samlConnectionConfiguration { signingCert signInEndpoint } azureADConnectionConfiguration { clientID } }
  expiresAt notBefore issuer subject entityID certificates { pem fingerprintSHA256 expiresAt }
} }`;

const errorCode = (res: Response) => res.body.errors?.[0]?.extensions?.code;

for (const engine of engines()) {
  describe(`SSO connections (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let tenant: string;
    let other: string;
    let n = 0;
    const domain = () => `corp${++n}.test`;

    before(async () => {
      // certificates are made during the test, valid from the moment they are made: the service's
      // clock runs with real time (and is moved on where days must pass)
      [t, idp] = await Promise.all([
        startTestApp({ engine, clock: new RunningClock(), env: { GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true' } }),
        startTestIdp(),
      ]);

      tenant = await createTenant(t, '1', { name: 'Acme' });
      other = await createTenant(t, '1', { name: 'Globex' });
    });
    after(async () => {
      await Promise.all([t.close(), idp.close()]);
    });

    // a fresh token each time: some tests move the clock on by days
    const call = async (query: string, variables: Record<string, unknown> = {}, inTenant = tenant) =>
      t.gql(await t.rootToken(), query, variables, { path: '/public/query', tenant: inTenant });
    const ok = async (query: string, variables: Record<string, unknown> = {}, inTenant = tenant) => {
      const res = await call(query, variables, inTenant);
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data;
    };
    const create = async (extra: Record<string, unknown> = {}, inTenant = tenant) =>
      (await ok(CREATE, { c: { name: 'Acme IdP', type: 'saml', domains: [domain()], ...extra } }, inTenant)).createSSOConnection;
    const update = async (u: Record<string, unknown>) => (await ok(UPDATE, { u })).updateSSOConnection;
    const byMetadata = (id: string) => update({ id, connectionConfiguration: { samlConfiguration: { metadataURL: idp.metadataUrl } } });
    /** every row of the SSO tables, to compare before and after a refused call */
    const ssoRows = async () =>
      JSON.stringify(
        await Promise.all(
          (['sso_connections', 'sso_connection_domains', 'sso_connection_testers', 'sso_certificates'] as const).map((table) =>
            t.db.kysely
              .selectFrom(table)
              .selectAll()
              .execute()
              .then((rows) => rows.map((r) => JSON.stringify(r)).sort()),
          ),
        ),
      );
    /** a refused call: its code, and nothing written */
    const refused = async (query: string, variables: Record<string, unknown>, code: string, message?: RegExp, inTenant = tenant) => {
      const [counts, rows] = [await rowCounts(t), await ssoRows()];
      const res = await call(query, variables, inTenant);
      assert.equal(errorCode(res), code, res.text);
      if (message) assert.match(res.body.errors[0].message, message);
      assert.deepEqual(await rowCounts(t), counts, 'a refused call writes nothing');
      assert.equal(await ssoRows(), rows, 'a refused call changes nothing');
      return res;
    };

    it("creates a connection in Created with this service's SAML values, normalised domains and testers", async () => {
      const c = await create({ name: '  Acme   Okta ', domains: ['Acme.EXAMPLE.', 'München.example'], testers: ['IT-Admin@acme.example'] });
      const root = `${TEST_BASE_URL}/sso/saml/${c.id}`;
      assert.deepEqual(
        { ...c, createdAt: undefined, updatedAt: undefined, id: undefined },
        {
          id: undefined,
          name: 'Acme Okta',
          type: 'saml',
          status: 'Created',
          externalName: null,
          externalID: null,
          environment: t.config.region,
          tenantID: tenant,
          createdAt: undefined,
          updatedAt: undefined,
          certName: null,
          expiresAt: null,
          notBefore: null,
          issuer: null,
          subject: null,
          domains: ['acme.example', 'xn--mnchen-3ya.example'],
          testers: ['it-admin@acme.example'],
          certificateExpiresSoon: false,
          metadataURL: null,
          metadataRefreshedAt: null,
          metadataRefreshError: null,
          ssoConnectionParameters: { postBackURL: `${root}/acs`, entityID: root, metadataURL: `${root}/metadata`, callbackURL: `${root}/login` },
          ssoConnectionIDPConfig: { samlConnectionConfiguration: { signingCert: null, signInEndpoint: null }, azureADConnectionConfiguration: null },
          certificates: [],
        },
      );
      const events = await t.db.kysely.selectFrom('audit_events').select('action').where('target_id', '=', c.id).execute();
      assert.deepEqual(
        events.map((e) => e.action),
        ['sso.created'],
      );
      // this service's SP metadata for it, at metadataURL
      const md = await t.request({ method: 'GET', url: `/sso/saml/${c.id}/metadata` });
      assert.equal(md.status, 200);
      assert.match(String(md.headers['content-type']), /^application\/samlmetadata\+xml/);
      assert.match(md.text, new RegExp(`entityID="${root}"`));
      assert.match(md.text, new RegExp(`Location="${root}/acs"`));
    });

    it('refuses a connection without domains, with a malformed domain or tester, or of another type, writing nothing', async () => {
      const input = (c: Record<string, unknown>) => ({ c: { name: 'x', type: 'saml', domains: [domain()], ...c } });
      await refused(CREATE, input({ domains: [] }), 'BAD_USER_INPUT', /at least one e-mail domain/);
      for (const bad of ['example', 'https://example.com', 'a@example.com', '10.0.0.1', 'exa mple.com', '-x.example.com']) {
        await refused(CREATE, input({ domains: [bad] }), 'BAD_USER_INPUT', /is not an e-mail domain/);
      }
      await refused(CREATE, input({ testers: ['not-an-address'] }), 'BAD_USER_INPUT');
      // addresses are compared case-folded: a domain folding turns into another name is refused
      await refused(
        CREATE,
        input({ domains: ['straße.de'] }),
        'BAD_USER_INPUT',
        /changes under case folding \(into strasse\.de\).*claim strasse\.de instead/,
      );
      await refused(
        CREATE,
        input({ domains: ['acme.test'], testers: ['bob@elsewhere.test'] }),
        'BAD_USER_INPUT',
        /in one of the connection's domains/,
      );
      await refused(CREATE, { c: { name: 'x', type: 'oidc', domains: [domain()] } }, 'BAD_USER_INPUT');
    });

    it('a domain claimed by one tenant does not block another (both pending: only a proof by DNS decides, domain-proofs.test.ts)', async () => {
      const d = domain();
      const first = await create({ domains: [d] });
      const second = await call(CREATE, { c: { name: 'mine too', type: 'saml', domains: [d.toUpperCase()] } }, other);
      assert.equal(second.body.errors, undefined, second.text);
      assert.deepEqual(second.body.data.createSSOConnection.domains, [d]);
      const raced = domain();
      const results = await Promise.all(
        [tenant, other].map((inTenant) => call(CREATE, { c: { name: 'race', type: 'saml', domains: [raced] } }, inTenant)),
      );
      assert.deepEqual(
        results.map((r) => (r.body.errors ? errorCode(r) : 'ok')),
        ['ok', 'ok'],
      );
      const rows = await t.db.kysely.selectFrom('sso_connection_domains').selectAll().where('domain', 'in', [d, raced]).execute();
      assert.deepEqual(
        rows.map((r) => r.status),
        ['pending', 'pending', 'pending', 'pending'],
      );
      assert.equal(await t.service.store.sso.connectionForDomain(d), undefined, 'a pending domain routes nobody');
      assert.ok(first.id);
    });

    it("configured by the IdP's metadata URL, moves to Testing with the IdP's entity id, endpoint and certificate", async () => {
      const c = await create();
      const configured = await byMetadata(c.id);
      const x509 = new X509Certificate(idp.certificatePem);
      assert.equal(configured.status, 'Testing');
      assert.equal(configured.externalID, idp.entityId);
      assert.equal(configured.metadataURL, idp.metadataUrl);
      assert.equal(configured.ssoConnectionIDPConfig.samlConnectionConfiguration.signInEndpoint, idp.ssoUrl);
      assert.equal(configured.expiresAt, new Date(x509.validTo).toISOString());
      assert.equal(configured.notBefore, new Date(x509.validFrom).toISOString());
      assert.equal(configured.certificates.length, 1);
      assert.equal(configured.certificates[0].fingerprintSHA256, x509.fingerprint256);
      assert.equal(configured.certificates[0].fromMetadata, true);
      assert.match(configured.subject, /CN=idp\.test/);
      assert.equal(
        new X509Certificate(configured.ssoConnectionIDPConfig.samlConnectionConfiguration.signingCert).fingerprint256,
        x509.fingerprint256,
      );
    });

    it('moves between statuses only as docs/sso.md tabulates, changing nothing on a refused move', async () => {
      const c = await create();
      await refused(UPDATE, { u: { id: c.id, status: 'Testing' } }, 'BAD_USER_INPUT', /not configured yet/);
      await refused(UPDATE, { u: { id: c.id, status: 'Enabled' } }, 'BAD_USER_INPUT', /not configured yet/);
      await refused(
        UPDATE,
        { u: { id: c.id, status: 'Enabled', connectionConfiguration: { samlConfiguration: { metadataURL: idp.metadataUrl } } } },
        'BAD_USER_INPUT',
        /enabled from Testing/,
      );
      assert.equal((await byMetadata(c.id)).status, 'Testing');
      await refused(UPDATE, { u: { id: c.id, status: 'Created' } }, 'BAD_USER_INPUT', /cannot be set back to Created/);
      assert.equal((await update({ id: c.id, status: 'Testing' })).status, 'Testing', 'asking for the current status is accepted');
      const moves: [string, string][] = [
        ['Enabled', 'Enabled'],
        ['Testing', 'Testing'],
        ['Enabled', 'Enabled'],
        ['Disabled', 'Disabled'],
        ['Enabled', 'Enabled'],
        ['Disabled', 'Disabled'],
        ['Testing', 'Testing'],
      ];
      for (const [to, expected] of moves) assert.equal((await update({ id: c.id, status: to })).status, expected);
      const events = await t.db.kysely
        .selectFrom('audit_events')
        .select('details')
        .where('target_id', '=', c.id)
        .where('action', '=', 'sso.updated')
        .execute();
      const moved = events.map((e) => (e.details as { status?: { from: string; to: string } }).status).filter((x) => x !== undefined);
      // every move is audited with where it came from (as a set: events of one instant have no order)
      const seen = moved.map((m) => `${m.from}->${m.to}`).sort();
      assert.deepEqual(seen, ['Created->Testing', ...moves.map(([to], i) => `${i === 0 ? 'Testing' : moves[i - 1]![0]}->${to}`)].sort());
      // a fresh connection may be disabled before it was ever configured
      const fresh = await create();
      assert.equal((await update({ id: fresh.id, status: 'Disabled' })).status, 'Disabled');
      await refused(UPDATE, { u: { id: fresh.id, status: 'Enabled' } }, 'BAD_USER_INPUT', /no usable IdP configuration/);
    });

    it('takes the IdP side by hand in either input shape, certName or signingCertName, in one update or two', async () => {
      const c = await create();
      const first = await update({ id: c.id, samlConfiguration: { signingCert: idp.certificatePem }, certName: 'okta-2026' });
      assert.equal(first.status, 'Created', 'a certificate alone is not a configuration');
      assert.equal(first.certName, 'okta-2026');
      const second = await update({
        id: c.id,
        connectionConfiguration: { samlConfiguration: { signInEndpoint: idp.ssoUrl, entityID: idp.entityId } },
      });
      assert.equal(second.status, 'Testing');
      assert.equal(second.externalID, idp.entityId);
      const both = await create();
      const once = await update({
        id: both.id,
        samlConfiguration: { signingCert: idp.certificateBase64, signingCertName: 'b64', signInEndpoint: idp.ssoUrl },
      });
      assert.deepEqual([once.status, once.certName], ['Testing', 'b64']);
      await refused(
        UPDATE,
        {
          u: {
            id: both.id,
            samlConfiguration: { signInEndpoint: idp.ssoUrl },
            connectionConfiguration: { samlConfiguration: { signInEndpoint: idp.ssoUrl } },
          },
        },
        'BAD_USER_INPUT',
        /give samlConfiguration once/,
      );
      await refused(
        UPDATE,
        { u: { id: both.id, samlConfiguration: { metadataURL: idp.metadataUrl, signInEndpoint: idp.ssoUrl } } },
        'BAD_USER_INPUT',
        /not both/,
      );
      await refused(
        UPDATE,
        { u: { id: both.id, samlConfiguration: { signInEndpoint: 'ftp://idp.example.com/sso' } } },
        'BAD_USER_INPUT',
        /signInEndpoint/,
      );
      await refused(UPDATE, { u: { id: both.id, samlConfiguration: { signingCert: 'not a certificate' } } }, 'BAD_USER_INPUT');
    });

    it('adds and removes domains and testers, refusing what it does not have or would leave empty', async () => {
      const [a, b] = [domain(), domain()];
      const c = await create({ domains: [a], testers: [`one@${a}`] });
      let now = await update({ id: c.id, addDomains: [b.toUpperCase()], addTesters: [`Two@${b}`] });
      assert.deepEqual([now.domains, now.testers], [[a, b].sort(), [`one@${a}`, `two@${b}`]]);
      now = await update({ id: c.id, removeDomains: [a], removeTesters: [`ONE@${a}`] });
      assert.deepEqual([now.domains, now.testers], [[b], [`two@${b}`]]);
      await refused(UPDATE, { u: { id: c.id, removeDomains: [a] } }, 'BAD_USER_INPUT', /does not serve/);
      await refused(UPDATE, { u: { id: c.id, removeTesters: [`one@${a}`] } }, 'BAD_USER_INPUT', /is not a tester/);
      await refused(UPDATE, { u: { id: c.id, removeDomains: [b], addDomains: [] } }, 'BAD_USER_INPUT', /keeps at least one domain/);
      await refused(UPDATE, { u: { id: c.id, addDomains: [a], removeDomains: [a] } }, 'BAD_USER_INPUT', /both name/);
      await refused(UPDATE, { u: { id: c.id, addTesters: [`three@elsewhere.test`] } }, 'BAD_USER_INPUT', /in one of the connection's domains/);
      await refused(UPDATE, { u: { id: c.id, addDomains: ['not a domain'] } }, 'BAD_USER_INPUT', /is not an e-mail domain/);
      // removing a domain its testers need would strand them: refused too
      await update({ id: c.id, addDomains: [a] });
      await refused(UPDATE, { u: { id: c.id, removeDomains: [b] } }, 'BAD_USER_INPUT', /in one of the connection's domains/);
    });

    it('holds up to three certificates for a rollover, and refuses an update that leaves none unexpired', async () => {
      const c = await create();
      const certs = [1, 2, 3, 4].map((i) => makeCertificate({ subject: `/CN=rollover-${i}.test`, days: 400 }).certPem);
      let current = await update({ id: c.id, samlConfiguration: { signingCert: certs[0], signInEndpoint: idp.ssoUrl } });
      current = await update({ id: c.id, samlConfiguration: { signingCert: certs[1] } });
      current = await update({ id: c.id, samlConfiguration: { signingCert: certs[2] } });
      assert.equal(current.certificates.length, 3);
      await refused(UPDATE, { u: { id: c.id, samlConfiguration: { signingCert: certs[3] } } }, 'BAD_USER_INPUT', /at most 3 signing certificates/);
      const oldest = current.certificates.at(-1);
      current = await update({ id: c.id, samlConfiguration: { signingCert: certs[3], removeCertificates: [oldest.id] } });
      assert.equal(current.certificates.length, 3);
      assert.ok(!current.certificates.some((x: { id: string }) => x.id === oldest.id));
      const expired = makeCertificate({ subject: '/CN=old.test', validity: { notBefore: '20200101000000Z', notAfter: '20210101000000Z' } }).certPem;
      await refused(UPDATE, { u: { id: c.id, samlConfiguration: { signingCert: expired } } }, 'BAD_USER_INPUT', /expired/);
      await refused(
        UPDATE,
        { u: { id: c.id, samlConfiguration: { removeCertificates: current.certificates.map((x: { id: string }) => x.id) } } },
        'BAD_USER_INPUT',
        /without a usable IdP configuration/,
      );
    });

    it('flags in the list a connection whose certificates all expire within 30 days', async () => {
      const soon = await create({ name: 'soon' });
      await update({ id: soon.id, samlConfiguration: { signingCert: makeCertificate({ days: 20 }).certPem, signInEndpoint: idp.ssoUrl } });
      const later = await create({ name: 'later' });
      await update({ id: later.id, samlConfiguration: { signingCert: makeCertificate({ days: 90 }).certPem, signInEndpoint: idp.ssoUrl } });
      const flags = async () =>
        Object.fromEntries(
          ((await ok(LIST)).ssoConnections as { id: string; certificateExpiresSoon: boolean }[])
            .filter((x) => x.id === soon.id || x.id === later.id)
            .map((x) => [x.id === soon.id ? 'soon' : 'later', x.certificateExpiresSoon]),
        );
      assert.deepEqual(await flags(), { soon: true, later: false });
      t.clock.advance(61 * 86_400_000);
      try {
        assert.deepEqual(await flags(), { soon: true, later: true });
      } finally {
        t.clock.advance(-61 * 86_400_000);
      }
    });

    it('reads every signing certificate of the metadata again on demand and on schedule, for a rollover', async () => {
      const c = await create();
      await byMetadata(c.id);
      const rollover = await idp.addSigningKey();
      try {
        const both = (await ok(REFRESH, { id: c.id })).refreshSSOConnectionMetadata;
        assert.deepEqual(
          both.certificates.map((x: { fingerprintSHA256: string }) => x.fingerprintSHA256).sort(),
          [new X509Certificate(idp.certificatePem).fingerprint256, new X509Certificate(rollover.certificatePem).fingerprint256].sort(),
        );
        idp.completeRollover();
        // the scheduled refresh: due once GATEHOUSE_SSO_METADATA_REFRESH_HOURS have passed
        assert.deepEqual(await t.service.services.sso.refreshDue(), { refreshed: 0, failed: 0 });
        t.clock.advance(25 * 3_600_000);
        const done = await t.service.services.sso.refreshDue();
        assert.ok(done.refreshed >= 1, JSON.stringify(done));
        const after = (await ok(ONE, { id: c.id })).ssoConnection;
        assert.deepEqual(
          after.certificates.map((x: { fingerprintSHA256: string }) => x.fingerprintSHA256),
          [new X509Certificate(rollover.certificatePem).fingerprint256],
        );
      } finally {
        t.clock.advance(-25 * 3_600_000);
      }
      const manual = await create();
      await refused(REFRESH, { id: manual.id }, 'BAD_USER_INPUT', /not configured by a metadata URL/);
    });

    it('metadata fetches asked for by hand are counted per tenant: 30 an hour, then RATE_LIMITED with the wait; other tenants unaffected', async () => {
      const busy = await createTenant(t, '1', { name: 'Fetches' });
      const c = await create({}, busy);
      const configure = { u: { id: c.id, connectionConfiguration: { samlConfiguration: { metadataURL: idp.metadataUrl } } } };
      await ok(UPDATE, configure, busy);
      for (let i = 1; i < 30; i++) await ok(REFRESH, { id: c.id }, busy);
      const over = await refused(REFRESH, { id: c.id }, 'RATE_LIMITED', /Too many IdP metadata fetches for this tenant.*Try again in/, busy);
      assert.ok(over.body.errors[0].extensions.retryAfter > 0);
      await refused(UPDATE, configure, 'RATE_LIMITED', /Too many IdP metadata fetches/, busy);
      const preview = await call(CONFIG, { m: idp.metadataUrl }, busy);
      assert.equal(errorCode(preview), 'RATE_LIMITED', 'getSSOConnectionConfig fetches too');
      assert.equal((await call(CONFIG, { c: idp.certificatePem }, busy)).body.errors, undefined, 'a certificate is read, not fetched: not counted');
      // another tenant's fetches are its own
      const elsewhere = await create({}, other);
      await ok(UPDATE, { u: { id: elsewhere.id, connectionConfiguration: { samlConfiguration: { metadataURL: idp.metadataUrl } } } }, other);
      t.clock.advance(3_600_000);
      try {
        await ok(REFRESH, { id: c.id }, busy);
      } finally {
        t.clock.advance(-3_600_000);
      }
    });

    it('a metadata URL that stops answering: the refresh says why and the certificates held keep working', async () => {
      const gone = await startTestIdp();
      const c = await create();
      const configured = await update({ id: c.id, samlConfiguration: { metadataURL: gone.metadataUrl } });
      assert.equal(configured.status, 'Testing');
      await gone.close();
      await refused(REFRESH, { id: c.id }, 'BAD_USER_INPUT', /The metadata URL could not be fetched: the server could not be reached/);
      t.clock.advance(25 * 3_600_000);
      try {
        const done = await t.service.services.sso.refreshDue();
        assert.ok(done.failed >= 1, JSON.stringify(done));
        const after = (await ok(ONE, { id: c.id })).ssoConnection;
        assert.match(after.metadataRefreshError, /could not be fetched/);
        assert.equal(after.status, 'Testing');
        assert.deepEqual(
          after.certificates.map((x: { id: string }) => x.id),
          configured.certificates.map((x: { id: string }) => x.id),
        );
        // tried again only after another interval, not on every run
        assert.deepEqual(await t.service.services.sso.refreshDue(), { refreshed: 0, failed: 0 });
      } finally {
        t.clock.advance(-25 * 3_600_000);
      }
    });

    it('refuses a refresh that would leave a Testing connection without a certificate valid now', async () => {
      // a metadata URL whose IdP moves on to publishing only its next certificate, valid from tomorrow
      let served = idp.metadata;
      const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/xml' }).end(served));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
        const c = await create();
        const configured = await update({ id: c.id, samlConfiguration: { metadataURL: url } });
        assert.equal(configured.status, 'Testing');
        const stamp = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
        const tomorrow = Date.now() + 86_400_000;
        const next = makeCertificate({
          validity: { notBefore: stamp(new Date(tomorrow)), notAfter: stamp(new Date(tomorrow + 365 * 86_400_000)) },
        }).certPem;
        const body = (pem: string) => pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
        served = served.replace(idp.certificateBase64.replace(/\s+/g, ''), body(next));
        assert.notEqual(served, idp.metadata);
        await refused(REFRESH, { id: c.id }, 'BAD_USER_INPUT', /no signing certificate valid now/);
        const after = (await ok(ONE, { id: c.id })).ssoConnection;
        assert.deepEqual(
          after.certificates.map((x: { id: string }) => x.id),
          configured.certificates.map((x: { id: string }) => x.id),
        );
      } finally {
        server.close();
      }
    });

    it('getSSOConnectionConfig reads metadata or a certificate and saves nothing', async () => {
      const before = await rowCounts(t);
      const md = (await ok(CONFIG, { m: idp.metadataUrl })).getSSOConnectionConfig;
      const x509 = new X509Certificate(idp.certificatePem);
      assert.equal(md.entityID, idp.entityId);
      assert.equal(md.ssoConnectionConfiguration.samlConnectionConfiguration.signInEndpoint, idp.ssoUrl);
      assert.equal(md.ssoConnectionConfiguration.azureADConnectionConfiguration, null);
      assert.equal(md.certificates[0].fingerprintSHA256, x509.fingerprint256);
      assert.equal(md.expiresAt, new Date(x509.validTo).toISOString());
      for (const cert of [idp.certificatePem, idp.certificateBase64, idp.certificateBase64.replace(/(.{64})/g, '$1\n')]) {
        const byCert = (await ok(CONFIG, { c: cert })).getSSOConnectionConfig;
        assert.deepEqual([byCert.issuer, byCert.subject, byCert.notBefore], [md.issuer, md.subject, new Date(x509.validFrom).toISOString()]);
        assert.equal(byCert.ssoConnectionConfiguration.samlConnectionConfiguration.signInEndpoint, null);
      }
      assert.deepEqual(await rowCounts(t), before);
      await refused(CONFIG, { c: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }, 'BAD_USER_INPUT');
      await refused(CONFIG, {}, 'BAD_USER_INPUT', /give metadataURL/);
      // an IdP that wants signed sign-in requests, which this service does not send, is refused with what to change
      const strict = await startTestIdp({ spSigningCertificate: makeCertificate().certPem });
      try {
        await refused(CONFIG, { m: strict.metadataUrl }, 'BAD_USER_INPUT', /WantAuthnRequestsSigned="true".*turn that off at the IdP/);
      } finally {
        await strict.close();
      }
      await refused(CONFIG, { m: `${idp.metadataUrl.replace('/metadata', '/no-such-path')}` }, 'BAD_USER_INPUT', /could not be fetched/);
    });

    it("deletes a connection, freeing its domains; another tenant's connection is not found", async () => {
      const d = domain();
      const c = await create({ domains: [d] });
      await refused(DELETE, { id: c.id }, 'NOT_FOUND', undefined, other);
      await refused(UPDATE, { u: { id: c.id, name: 'taken over' } }, 'NOT_FOUND', undefined, other);
      const res = await call(ONE, { id: c.id }, other);
      assert.equal(errorCode(res), 'NOT_FOUND');
      const deleted = (await ok(DELETE, { id: c.id })).deleteSSOConnection;
      assert.deepEqual(deleted, { id: c.id, name: 'Acme IdP', domains: [d] });
      assert.equal(errorCode(await call(ONE, { id: c.id })), 'NOT_FOUND');
      await create({ domains: [d] }, other);
    });
  });
}

describe('SSO metadata URLs without GATEHOUSE_SSO_ALLOW_PRIVATE_URLS', () => {
  it('refuses a loopback metadata URL and an http one before fetching', async () => {
    const [t, idp] = await Promise.all([startTestApp({ engine: 'pglite' }), startTestIdp()]);
    try {
      const root = await t.rootToken();
      for (const m of [idp.metadataUrl, idp.metadataUrl.replace('http:', 'https:')]) {
        const res = await t.gql(root, CONFIG, { m }, { path: '/public/query' });
        assert.equal(errorCode(res), 'BAD_USER_INPUT', res.text);
        assert.match(res.body.errors[0].message, /^The metadata URL could not be fetched: /);
      }
    } finally {
      await Promise.all([t.close(), idp.close()]);
    }
  });
});
