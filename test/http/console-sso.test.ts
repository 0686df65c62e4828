// The single sign-on console pages over HTTP (src/http/pages/console/sso.ts): the list, the
// set-up wizard (name and domains; the values to paste at the IdP; the IdP's side by metadata URL
// from a real test IdP, or by a pasted PEM and a sign-in URL, with the live check shown before
// anything is saved), domains, testers, status, refresh, delete; bad input shown again in a
// person's words with nothing written; the expiry warning; CSRF; signed out.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { RunningClock } from '../helpers/browser.js';
import { transportEngines } from '../helpers/engines.js';
import { makeCertificate } from '../helpers/openssl.js';
import { PageClient, setupLink, signedInUser } from '../helpers/pages.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { markDomainProven } from '../helpers/sso-domains.js';
import { createTenant, tq } from '../helpers/tenants.js';

const { Administrator, Analyst } = ROLE_IDS;

/** The connection id of the page a creation redirected to. */
const connectionOf = (res: Response) => {
  const id = /connection=([0-9a-f-]{36})/.exec(String(res.headers.location))?.[1];
  assert.ok(id, `a redirect to the connection's page: ${res.status} ${res.headers.location} ${res.text.slice(0, 400)}`);
  return id;
};

for (const engine of transportEngines()) {
  describe(`console SSO pages (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let dns: TestDnsServer;
    let tenant: string;
    let admin: PageClient;
    let n = 0;

    before(async () => {
      // the IdP's certificates are made now (real time): the service's clock runs with it
      dns = await startDnsServer();
      t = await startTestApp({
        engine,
        clock: new RunningClock(),
        env: { GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true', GATEHOUSE_DNS_SERVERS: dns.address },
      });
      idp = await startTestIdp();
      tenant = await createTenant(t, '1', { name: 'Corp' });
      ({ client: admin } = await signedInUser(t, 'admin@corp-admins.test', { tenant, roles: [Administrator] }));
    });
    after(async () => {
      await idp?.close();
      await t?.close();
      await dns?.close();
    });

    const connections = async () =>
      (await tq(t, await t.rootToken(), '{ ssoConnections { id name status domains testers certificates { id } metadataURL } }', {}, tenant)).body
        .data.ssoConnections as { id: string; name: string; status: string; domains: string[]; testers: string[]; certificates: unknown[] }[];
    const connection = async (id: string) => (await connections()).find((c) => c.id === id);
    const connectionCerts = async (id: string): Promise<string[]> =>
      (await tq(t, await t.rootToken(), '{ ssoConnections { id certificates { id } } }', {}, tenant)).body.data.ssoConnections
        .find((c: { id: string }) => c.id === id)
        .certificates.map((c: { id: string }) => c.id);

    /** Step 1 of the wizard: a new connection with its domain; its id. The domain is marked
     *  proven in the store (these tests are not about the proof; the domains test below is) unless `proven` is false. */
    async function created(domain = `corp${++n}.test`, testers = '', { proven = true } = {}): Promise<string> {
      const form = await admin.get(`/console/sso/new?tenant=${tenant}`);
      assert.equal(form.status, 200, form.text);
      const res = await admin.post('/console/sso/new', { _csrf: admin.csrf(form), tenant, name: `Corp IdP ${domain}`, domains: domain, testers });
      assert.equal(res.status, 303, res.text);
      const id = connectionOf(res);
      if (proven) await markDomainProven(t, id, domain);
      return id;
    }

    const page = (id: string) => admin.get(`/console/sso/connection?tenant=${tenant}&connection=${id}`);
    const post = async (path: string, id: string, form: Record<string, string>) => {
      const shown = await page(id);
      return admin.post(path, { _csrf: admin.csrf(shown), tenant, connection: id, ...form });
    };

    it('the section tab and an empty list lead to the wizard', async () => {
      const res = await admin.get(`/console/sso?tenant=${tenant}`);
      assert.equal(res.status, 200, res.text);
      assert.match(res.text, /aria-current="page">Single sign-on</);
      assert.match(res.text, /has no single sign-on connection/);
      assert.match(res.text, /href="\/console\/sso\/new\?tenant=\d+"/);
    });

    it('step 1 creates the connection; its page shows the values to paste, with copy buttons and IdP instructions', async () => {
      const id = await created('corp.test', 'tester@corp.test');
      const c = await connection(id);
      assert.deepEqual([c?.status, c?.domains, c?.testers], ['Created', ['corp.test'], ['tester@corp.test']]);
      const res = await page(id);
      assert.equal(res.status, 200);
      assert.match(res.text, /Connection Corp IdP corp\.test created/);
      for (const value of [`/sso/saml/${id}"`, `/sso/saml/${id}/acs"`, `/sso/saml/${id}/metadata"`]) assert.ok(res.text.includes(value), value);
      assert.equal((res.text.match(/data-copy="sp-/g) ?? []).length, 3);
      assert.match(res.text, /<script src="\/ui\/copy\.js" defer>/);
      for (const idpName of ['Okta', 'Microsoft Entra ID', 'Google Workspace']) assert.match(res.text, new RegExp(`<summary>${idpName}</summary>`));
    });

    it('the live check shows the metadata’s issuer, subject and validity, and saves nothing; Save configures it: Testing', async () => {
      const id = await created();
      const checked = await post('/console/sso/check', id, { method: 'metadata', metadataURL: idp.metadataUrl });
      assert.equal(checked.status, 200, checked.text);
      assert.match(checked.text, /Nothing is saved yet/);
      assert.match(checked.text, /<dt>Issuer<\/dt><dd>[^<]+<\/dd>/);
      assert.match(checked.text, /<dt>Subject<\/dt><dd>[^<]+<\/dd>/);
      assert.match(checked.text, /<dt>Valid until<\/dt><dd><time/);
      assert.ok(checked.text.includes(idp.ssoUrl), 'the sign-in URL read from the metadata');
      assert.ok(checked.text.includes(`value="${idp.metadataUrl}"`), 'the URL is kept in the form');
      assert.equal((await connection(id))?.status, 'Created', 'nothing saved');

      const saved = await post('/console/sso/edit', id, { change: 'idp', method: 'metadata', metadataURL: idp.metadataUrl });
      assert.equal(saved.status, 303, saved.text);
      assert.equal((await connection(id))?.status, 'Testing');
      const after = await page(id);
      assert.match(after.text, /the connection is Testing/);
      assert.match(after.text, /Read the metadata again now/);
      assert.match(after.text, /Test sign-in/);
      // refresh metadata
      const refreshed = await post('/console/sso/refresh', id, {});
      assert.equal(refreshed.status, 303, refreshed.text);
      assert.match((await page(id)).text, /The metadata was read again/);
    });

    it('by certificate: a pasted PEM is checked (issuer, subject, validity), then saved with the sign-in URL', async () => {
      const id = await created();
      const cert = makeCertificate({ subject: '/CN=pasted-idp.example/O=Corp', days: 365 });
      const checked = await post('/console/sso/check', id, {
        method: 'certificate',
        signingCert: cert.certPem,
        signInEndpoint: 'https://idp.example/sso',
      });
      assert.equal(checked.status, 200, checked.text);
      assert.match(checked.text, /<dt>Subject<\/dt><dd>CN=pasted-idp\.example, O=Corp<\/dd>/);
      assert.match(checked.text, /<dt>Issuer<\/dt><dd>CN=pasted-idp\.example, O=Corp<\/dd>/);
      assert.equal((await connection(id))?.certificates.length, 0, 'nothing saved');
      const saved = await post('/console/sso/edit', id, {
        change: 'idp',
        method: 'certificate',
        signingCert: cert.certPem,
        signInEndpoint: 'https://idp.example/sso',
      });
      assert.equal(saved.status, 303, saved.text);
      const c = await connection(id);
      assert.deepEqual([c?.status, c?.certificates.length], ['Testing', 1]);
      const list = await admin.get(`/console/sso?tenant=${tenant}`);
      const row = list.text.split('<tr>').find((r) => r.includes(id)) ?? '';
      assert.match(row, /Testing/);
      assert.doesNotMatch(row, /class="expiry"/, 'a certificate valid for a year is no warning');
    });

    it('bad input is shown again in words saying what to do, and nothing is written', async () => {
      const id = await created();
      const before = JSON.stringify(await connection(id));
      const cases: [Record<string, string>, RegExp][] = [
        [
          { change: 'idp', method: 'certificate', signingCert: 'not a certificate', signInEndpoint: 'https://idp.example/sso' },
          /This is not a certificate/,
        ],
        [
          { change: 'idp', method: 'certificate', signingCert: makeCertificate({ days: 30 }).certPem, signInEndpoint: 'http:// nope' },
          /The sign-in URL must be an absolute URL/,
        ],
        [
          { change: 'idp', method: 'metadata', metadataURL: 'ftp://idp.example/metadata' },
          /The metadata URL could not be read: only https URLs are accepted/,
        ],
        [
          { change: 'idp', method: 'metadata', metadataURL: 'https://127.0.0.1:1/metadata' },
          /The metadata URL could not be read: the server could not be reached/,
        ],
        [{ change: 'idp', method: 'metadata', metadataURL: '' }, /Enter the metadata URL/],
        [{ change: 'addDomain', value: 'https://corp.example/' }, /&quot;https:\/\/corp\.example\/&quot; is not an e-mail domain/],
        [{ change: 'addTester', value: 'someone@elsewhere.test' }, /someone@elsewhere\.test is not in the connection’s domains/],
        [{ change: 'removeDomain', value: `corp${n}.test` }, /A connection keeps at least one domain/],
        [{ change: 'status', status: 'Enabled' }, /cannot change status before the identity provider’s side is saved/],
      ];
      for (const [form, words] of cases) {
        const res = await post('/console/sso/edit', id, form);
        assert.equal(res.status, 400, `${JSON.stringify(form)}: ${res.text.slice(0, 300)}`);
        assert.match(res.text, words, JSON.stringify(form));
        assert.match(res.text, /role="alert"/);
      }
      // the live check words its failures too
      const check = await post('/console/sso/check', id, { method: 'metadata', metadataURL: 'ftp://idp.example/metadata' });
      assert.equal(check.status, 400);
      assert.match(check.text, /starts with https:\/\//);
      // step 1's own bad domain: the form again, the values kept
      const form = await admin.get(`/console/sso/new?tenant=${tenant}`);
      const bad = await admin.post('/console/sso/new', { _csrf: admin.csrf(form), tenant, name: 'Bad', domains: 'not a domain@', testers: '' });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /is not an e-mail domain/);
      assert.match(bad.text, /value="Bad"/);
      assert.equal(JSON.stringify(await connection(id)), before, 'nothing written');
      assert.ok(!(await connections()).some((c) => c.name === 'Bad'));
    });

    /** The IdP's URL a test sign-in's page goes on to (its meta refresh; its link says the same). */
    const idpUrlOf = (res: Response) => {
      assert.equal(res.status, 200, res.text);
      const refresh = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(res.text)?.[1];
      assert.ok(refresh, 'the page goes on by itself');
      const url = refresh.replaceAll('&amp;', '&');
      assert.ok(res.text.includes(`<a class="button" href="${refresh}">Continue to the identity provider</a>`), 'and links there');
      return url;
    };
    const openRequests = async () =>
      Number(
        (
          await t.db.kysely
            .selectFrom('saml_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('the test sign-in goes to the IdP in a new tab, and the ACS shows the attributes received, or what was wrong, signing nobody in', async () => {
      const id = await created('testrun.test', 'tester@testrun.test');
      assert.equal((await post('/console/sso/edit', id, { change: 'idp', method: 'metadata', metadataURL: idp.metadataUrl })).status, 303);
      const shown = await page(id);
      // a form (a POST with the session's CSRF token) opening a new tab; no script needed
      assert.match(
        shown.text,
        new RegExp(
          `<form method="post" action="/console/sso/test" target="_blank" class="inline-form"><input type="hidden" name="_csrf" value="[^"]+"><input type="hidden" name="tenant" value="${tenant}"><input type="hidden" name="connection" value="${id}"><button type="submit">Test sign-in`,
        ),
      );
      // a GET (a link, an old bookmark) starts nothing: it leads to the connection's page
      const before = await openRequests();
      const byLink = await admin.get(`/console/sso/test?tenant=${tenant}&connection=${id}`);
      assert.equal(byLink.status, 303);
      assert.equal(byLink.headers.location, `/console/sso/connection?tenant=${tenant}&connection=${id}#test`);
      assert.equal(await openRequests(), before, 'no SAML request opened by a GET');
      // without the session's CSRF token: refused, nothing opened
      const forged = await admin.post('/console/sso/test', { tenant, connection: id });
      assert.equal(forged.status, 403);
      assert.equal(await openRequests(), before, 'no SAML request opened without the CSRF token');
      const run = async (email: string) => {
        const location = idpUrlOf(await post('/console/sso/test', id, {}));
        assert.ok(location.startsWith(idp.ssoUrl), 'on to the IdP');
        idp.setUser(email, { displayName: 'Tess Ter', groups: ['admins', 'staff'] });
        const answer = await idp.respond(location);
        return t.request({
          method: 'POST',
          url: new URL(answer.acsUrl).pathname,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: answer.form.toString(),
        });
      };
      const answerAcs = (answer: { acsUrl: string; form: URLSearchParams }) =>
        t.request({
          method: 'POST',
          url: new URL(answer.acsUrl).pathname,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: answer.form.toString(),
        });
      const ok = await run('tester@testrun.test');
      assert.equal(ok.status, 200, ok.text);
      // a test is answered once: another response to the same request (a fresh assertion) is refused
      {
        const location = idpUrlOf(await post('/console/sso/test', id, {}));
        idp.setUser('tester@testrun.test', { displayName: 'Tess Ter' });
        assert.equal((await answerAcs(await idp.respond(location))).status, 200, 'the first answer is shown');
        const again = await answerAcs(await idp.respond(location));
        assert.notEqual(again.status, 200, 'the second answer to the same test is refused');
        assert.doesNotMatch(again.text, /Test sign-in worked/);
      }
      assert.match(ok.text, /<h1>Test sign-in worked<\/h1>/);
      assert.match(ok.text, /would be signed in with a new account, created at their first sign-in/);
      assert.match(ok.text, /<dt>displayName<\/dt><dd>Tess Ter<\/dd>/);
      assert.match(ok.text, /<dt>groups<\/dt><dd>admins, staff<\/dd>/);
      assert.equal(ok.headers['set-cookie'], undefined, 'nobody signed in');
      const users = await t.gql(await t.rootToken(), '{ users(email: "tester@testrun.test") { id } }', {}, { tenant });
      assert.deepEqual(users.body.data?.users, [], 'no account was made');
      const notTester = await run('someone@testrun.test');
      assert.equal(notTester.status, 200);
      assert.match(notTester.text, /Test sign-in: not yet/);
      assert.match(notTester.text, /someone@testrun\.test is not a tester of this connection, which is Testing: add them as a tester/);
      // a connection that is not configured cannot be tested: said in words
      const fresh = await created();
      const refused = await post('/console/sso/test', fresh, {});
      assert.equal(refused.status, 400);
      assert.match(refused.text, /not available/);
    });

    it('the test sign-in runs the sign-in’s own decision (a tester linked by identity is found as the sign-in finds them); its audit event names the tester and the outcome, never the assertion', async () => {
      const id = await created('linkrun.test', 'linked@linkrun.test');
      assert.equal((await post('/console/sso/edit', id, { change: 'idp', method: 'metadata', metadataURL: idp.metadataUrl })).status, 303);
      // an account of the tenant that signed in through this connection before, under an address
      // since changed (no account has the NameID as its address)
      await setupLink(t, 'renamed@elsewhere.test', { tenant, roles: [Analyst] });
      const linked = await t.db.kysely
        .selectFrom('users')
        .select('id')
        .where('email_normalized', '=', 'renamed@elsewhere.test')
        .executeTakeFirstOrThrow();
      await t.db.kysely
        .insertInto('sso_identities')
        .values({ connection_id: id, name_id: 'linked@linkrun.test', user_id: linked.id, created_at: new Date(), last_sign_in_at: null })
        .execute();
      const run = async () => {
        idp.setUser('linked@linkrun.test', { displayName: 'Lin Ked' });
        const answer = await idp.respond(idpUrlOf(await post('/console/sso/test', id, {})));
        return t.request({
          method: 'POST',
          url: new URL(answer.acsUrl).pathname,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: answer.form.toString(),
        });
      };
      const ok = await run();
      assert.match(ok.text, /<h1>Test sign-in worked<\/h1>/);
      assert.match(ok.text, /would be signed in as <strong>renamed@elsewhere\.test<\/strong>, the account they signed in as before/);
      // the linked account disabled: the sign-in would refuse it, and so does the test, in words
      await t.db.kysely.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', linked.id).execute();
      const disabled = await run();
      assert.match(disabled.text, /<h1>Test sign-in: not yet<\/h1>/);
      assert.match(disabled.text, /linked@linkrun\.test signed in before as renamed@elsewhere\.test, and that account is disabled here\./);
      assert.equal(
        (await t.db.kysely.selectFrom('users').select('id').where('email_normalized', '=', 'linked@linkrun.test').execute()).length,
        0,
        'no account was made',
      );
      // one event per test, in the connection's tenant, by the Administrator who ran it
      const me = await t.db.kysely
        .selectFrom('users')
        .select('id')
        .where('email_normalized', '=', 'admin@corp-admins.test')
        .executeTakeFirstOrThrow();
      const events = await t.db.kysely
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'sso.test_sign_in')
        .where('target_id', '=', id)
        .orderBy('occurred_at')
        .execute();
      assert.deepEqual(
        events.map((e) => [String(e.tenant_id), e.actor_kind, e.actor_id, e.target_kind, e.outcome]),
        [
          [tenant, 'user', me.id, 'sso_connection', 'success'],
          [tenant, 'user', me.id, 'sso_connection', 'success'],
        ],
      );
      const details = events.map((e) => (typeof e.details === 'string' ? JSON.parse(e.details) : e.details));
      assert.deepEqual(details, [
        { connection_id: id, name_id: 'linked@linkrun.test', outcome: 'linked', user_id: linked.id },
        { connection_id: id, name_id: 'linked@linkrun.test', outcome: 'refused', reason: 'disabled', user_id: linked.id },
      ]);
      // never the assertion: no XML, no SAML response, no assertion id
      for (const e of events) assert.doesNotMatch(JSON.stringify(e.details), /<|SAML|assertion|_[0-9a-f]{20,}/i);
    });

    it('a notice left while another request of the session writes its own key keeps both; of two tabs loading at once, one shows it', async () => {
      const id = await created();
      const sessions = t.service.services.sessions;
      const find = sessions.find;
      /** the session rows holding the other request's key, as the database has them */
      const holding = async () =>
        (await t.db.kysely.selectFrom('sessions').select('state').execute())
          .map((r) => (typeof r.state === 'string' ? JSON.parse(r.state) : r.state) as Record<string, unknown>)
          .filter((state) => state.returnTo === '/console/elsewhere');
      const shown = await page(id);
      // between the form's read of its session and the notice it leaves, another request of the
      // same session (another tab, a sign-in step) writes a key of its own
      let interleaved = false;
      sessions.find = async (secret) => {
        const found = await find.call(sessions, secret);
        if (found?.userId && !interleaved) {
          interleaved = true;
          await sessions.patchState(found, { set: { returnTo: '/console/elsewhere' } });
        }
        return found;
      };
      let res: Response;
      try {
        res = await admin.post('/console/sso/edit', {
          _csrf: admin.csrf(shown),
          tenant,
          connection: id,
          change: 'addDomain',
          value: `kept-${n}.test`,
        });
      } finally {
        sessions.find = find;
      }
      assert.equal(res.status, 303, res.text);
      assert.ok(interleaved);
      assert.deepEqual(
        (await holding()).map((state) => state.notice),
        [`Saved: added kept-${n}.test.`],
        'the notice and the other request’s key, both',
      );
      // two tabs of the session load a page at once: the notice is taken once, the other key stays
      const [one, two] = await Promise.all([page(id), page(id)]);
      const notices = [one, two].filter((r) => r.text.includes(`Saved: added kept-${n}.test.`));
      assert.equal(notices.length, 1, 'shown once');
      assert.deepEqual(await holding(), [{ returnTo: '/console/elsewhere' }]);
      await sql`update sessions set state = state - 'returnTo' where state ->> 'returnTo' = '/console/elsewhere'`.execute(t.db.kysely);
    });

    it('domains and testers are added and removed; the status moves to Enabled and back', async () => {
      const id = await created();
      const cert = makeCertificate({ days: 365 });
      await post('/console/sso/edit', id, {
        change: 'idp',
        method: 'certificate',
        signingCert: cert.certPem,
        signInEndpoint: 'https://idp.example/sso',
      });
      assert.equal((await post('/console/sso/edit', id, { change: 'addDomain', value: 'Extra-Corp.test' })).status, 303);
      assert.equal((await post('/console/sso/edit', id, { change: 'addTester', value: 'T@extra-corp.test' })).status, 303);
      let c = await connection(id);
      assert.deepEqual([c?.domains.sort(), c?.testers], [[`corp${n}.test`, 'extra-corp.test'].sort(), ['t@extra-corp.test']]);
      assert.match((await page(id)).text, /Saved: added T@extra-corp\.test/);
      assert.equal((await post('/console/sso/edit', id, { change: 'removeTester', value: 't@extra-corp.test' })).status, 303);
      assert.equal((await post('/console/sso/edit', id, { change: 'name', value: 'Corp Okta' })).status, 303);
      assert.equal((await connection(id))?.name, 'Corp Okta');
      // the last certificate of a Testing connection cannot go; a second one can
      const [only] = (await connectionCerts(id)) as string[];
      const last = await post('/console/sso/edit', id, { change: 'removeCertificate', value: only! });
      assert.equal(last.status, 400);
      assert.match(last.text, /it would be left without a certificate valid now/);
      const next = makeCertificate({ days: 200 });
      await post('/console/sso/edit', id, { change: 'idp', method: 'certificate', signingCert: next.certPem });
      assert.equal((await connectionCerts(id)).length, 2);
      assert.equal((await post('/console/sso/edit', id, { change: 'removeCertificate', value: only! })).status, 303);
      assert.equal((await connectionCerts(id)).length, 1);
      const badName = await post('/console/sso/edit', id, { change: 'name', value: '   ' });
      assert.equal(badName.status, 400);
      assert.match(badName.text, /Enter a name/);
      const longName = await post('/console/sso/edit', id, { change: 'name', value: 'x'.repeat(101) });
      assert.equal(longName.status, 400);
      assert.match(longName.text, /The name must be 1 to 100 characters\..*like “Acme Okta”/s);
      assert.equal((await connection(id))?.name, 'Corp Okta');
      assert.equal((await post('/console/sso/edit', id, { change: 'status', status: 'Enabled' })).status, 303);
      c = await connection(id);
      assert.deepEqual([c?.testers, c?.status], [[], 'Enabled']);
      const shown = await page(id);
      assert.match(shown.text, /everyone in its domains now signs in/);
      assert.match(shown.text, />Back to testing</);
      assert.match(shown.text, />Disable</);
    });

    it('a certificate expiring within 30 days is a warning on the list and the connection’s page', async () => {
      const id = await created();
      const cert = makeCertificate({ days: 10 });
      await post('/console/sso/edit', id, {
        change: 'idp',
        method: 'certificate',
        signingCert: cert.certPem,
        signInEndpoint: 'https://idp.example/sso',
      });
      const list = await admin.get(`/console/sso?tenant=${tenant}`);
      const row = list.text.split('<tr>').find((r) => r.includes(id)) ?? '';
      assert.match(row, /class="expiry">Certificate expires <time/);
      assert.match(list.text, /identity-provider certificate expires within 30 days/);
      assert.match((await page(id)).text, /add the identity provider’s new certificate before then/);
    });

    it('delete asks first, then deletes', async () => {
      const id = await created();
      const confirm = await admin.get(`/console/sso/delete?tenant=${tenant}&connection=${id}`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, /This cannot be undone/);
      const res = await admin.post('/console/sso/delete', { _csrf: admin.csrf(confirm), tenant, connection: id });
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, `/console/sso?tenant=${tenant}`);
      assert.equal(await connection(id), undefined);
      assert.match((await admin.get(String(res.headers.location))).text, /was deleted/);
      const gone = await page(id);
      assert.equal(gone.status, 404);
      assert.match(gone.text, /No single sign-on connection with this id/);
    });

    it('a form without the CSRF token is refused (403) and writes nothing', async () => {
      const id = await created();
      for (const [path, form] of [
        ['/console/sso/new', { tenant, name: 'No CSRF', domains: 'nocsrf.test' }],
        ['/console/sso/edit', { tenant, connection: id, change: 'addDomain', value: 'nocsrf.test' }],
        ['/console/sso/check', { tenant, connection: id, method: 'metadata', metadataURL: idp.metadataUrl }],
        ['/console/sso/refresh', { tenant, connection: id }],
        ['/console/sso/delete', { tenant, connection: id }],
      ] as const) {
        const res = await admin.post(path, form);
        assert.equal(res.status, 403, path);
      }
      const c = await connection(id);
      assert.deepEqual(c?.domains, [`corp${n}.test`]);
      assert.ok(!(await connections()).some((x) => x.name === 'No CSRF'));
    });

    it('signed out, every page leads to sign-in; an Analyst is refused', async () => {
      const id = await created();
      const anonymous = new PageClient(t);
      for (const path of [
        `/console/sso?tenant=${tenant}`,
        `/console/sso/new?tenant=${tenant}`,
        `/console/sso/connection?tenant=${tenant}&connection=${id}`,
        `/console/sso/delete?tenant=${tenant}&connection=${id}`,
      ]) {
        const res = await anonymous.get(path);
        assert.equal(res.status, 303, path);
        assert.equal(res.headers.location, `/login?return_to=${encodeURIComponent(path)}`);
      }
      const { client: analyst } = await signedInUser(t, 'analyst@corp-admins.test', { tenant, roles: [Analyst] });
      const home = await analyst.get(`/console/credentials?tenant=${tenant}`);
      assert.doesNotMatch(home.text, />Single sign-on</, 'no tab');
      const res = await analyst.get(`/console/sso?tenant=${tenant}`);
      assert.equal(res.status, 403);
      const denied = await analyst.post('/console/sso/edit', {
        _csrf: analyst.csrf(home),
        tenant,
        connection: id,
        change: 'addDomain',
        value: 'x-analyst.test',
      });
      assert.equal(denied.status, 403);
      assert.deepEqual((await connection(id))?.domains, [`corp${n}.test`]);
    });

    it('domains: each pending until its DNS record is found; a new value is shown once with the record to publish; check now proves it', async () => {
      const domain = `proof${++n}.test`;
      const id = await created(domain, '', { proven: false });
      let shown = await page(id);
      assert.match(shown.text, new RegExp(`<code>${domain.replace('.', '\\.')}</code></th><td data-label="Status"><strong>pending</strong>`));
      assert.ok(!shown.text.includes('Publish this DNS record'), 'no value on the page by itself');
      assert.ok((await admin.get(`/console/sso?tenant=${tenant}`)).text.includes(`${domain} (pending)`), 'the list says it too');
      const renewed = await post('/console/sso/edit', id, { change: 'regenerateDomain', value: domain });
      assert.equal(renewed.status, 200, 'shown in this answer, not left in the session');
      assert.match(renewed.text, /Publish this DNS record/);
      assert.ok(renewed.text.includes(`value="_gatehouse-challenge.${domain}"`), 'the record name');
      assert.match(renewed.text, /Type: <strong>TXT<\/strong>/);
      const value = new RegExp(`id="txt-value-${domain.replace('.', '\\.')}" type="text" class="mono" readonly value="([A-Za-z0-9_-]{43})"`).exec(
        renewed.text,
      )?.[1];
      assert.ok(value, 'the value');
      shown = await page(id);
      assert.ok(!shown.text.includes(value), 'shown once');
      // a check before the record exists says what DNS answered
      assert.equal((await post('/console/sso/edit', id, { change: 'checkDomain', value: domain })).status, 303);
      assert.match((await page(id)).text, /is not proven \(pending\): _gatehouse-challenge\.proof\d+\.test does not exist in DNS \(NXDOMAIN\)/);
      dns.setTxt(`_gatehouse-challenge.${domain}`, [value]);
      assert.equal((await post('/console/sso/edit', id, { change: 'checkDomain', value: domain })).status, 303);
      shown = await page(id);
      assert.match(shown.text, new RegExp(`${domain.replace('.', '\\.')} is proven: people in it sign in through this connection`));
      assert.match(shown.text, /<strong>proven<\/strong>/);
      assert.ok(!(await admin.get(`/console/sso?tenant=${tenant}`)).text.includes(`${domain} (pending)`));
    });
  });
}
