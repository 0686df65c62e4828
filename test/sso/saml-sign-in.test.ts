// Signing in through an SSO connection, over HTTP against a real SAML IdP running in the test
// (test/helpers/saml-idp.ts), on both engines: the /login branch, testers while Testing, everyone
// once Enabled, the user made on first sign-in, device login through the IdP, and the attacks of
// security-tests.md section G, each of which must sign nobody in and create nobody.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import type { TestApp } from '../helpers/app.js';
import { startTestApp } from '../helpers/app.js';
import { RunningClock } from '../helpers/browser.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, setupLink, signedInUser } from '../helpers/pages.js';
import { COMMENT_SUFFIX, FORGED_NAME_ID, startTestIdp, type Tamper, type TestIdp } from '../helpers/saml-idp.js';
import { markDomainProven } from '../helpers/sso-domains.js';
import { createTenant } from '../helpers/tenants.js';
import { proveAddress } from '../../src/store/email-proof.js';
import { disableExpiredTenants } from '../../src/tenants/expiry.js';

const TENANT_PATH = '/public/query';

for (const engine of transportEngines()) {
  describe(`SAML sign-in (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let tenant: string;
    let connection: string;
    const DOMAIN = 'corp.test';
    const TESTER = `tester@${DOMAIN}`;
    // the identity the forgeries put in a response (admin@corp.test) is a tester too: only the
    // checks on the response stand between a forgery and a sign-in as it
    const FORGED = FORGED_NAME_ID;

    before(async () => {
      // node-saml and the IdP read the real clock: the service's runs with it
      [t, idp] = await Promise.all([
        startTestApp({ engine, clock: new RunningClock(), env: { GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true' } }),
        startTestIdp(),
      ]);
      const root = await t.rootToken();
      tenant = await createTenant(t, '1', { name: 'Corp' });
      const created = await t.gql(
        root,
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
        { c: { name: 'Corp IdP', type: 'saml', domains: [DOMAIN], testers: [TESTER, FORGED] } },
        { path: TENANT_PATH, tenant },
      );
      connection = created.body.data.createSSOConnection.id;
      // not a test of the proof (domain-proofs.test.ts is): the domain is marked proven in the store
      await markDomainProven(t, connection, DOMAIN);
      const configured = await setStatus({ metadata: true });
      assert.equal(configured, 'Testing');
    });
    after(async () => {
      await Promise.all([t.close(), idp.close()]);
    });

    async function setStatus(opts: { status?: string; metadata?: boolean }): Promise<string> {
      const res = await t.gql(
        await t.rootToken(),
        'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }',
        {
          u: {
            id: connection,
            ...(opts.status ? { status: opts.status } : {}),
            ...(opts.metadata ? { samlConfiguration: { metadataURL: idp.metadataUrl } } : {}),
          },
        },
        { path: TENANT_PATH, tenant },
      );
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.updateSSOConnection.status;
    }

    /** /login with an address typed: the next sign-in page (GET /login after the redirect). */
    async function typeAddress(client: PageClient, email: string): Promise<string> {
      const page = await client.get('/login');
      const res = await client.post('/login', { _csrf: client.csrf(page), email });
      assert.equal(res.status, 303, res.text);
      assert.equal(res.headers.location, '/login');
      return (await client.get('/login')).text;
    }

    /** Where a sign-in page sends the browser on by itself (the SSO step's meta refresh), if anywhere. */
    const onwards = (page: string) => /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec(page)?.[1];

    /** From /login to the IdP: the AuthnRequest URL the browser is sent to. */
    async function toIdp(client: PageClient, email: string): Promise<string> {
      const next = onwards(await typeAddress(client, email));
      assert.equal(next, `/sso/saml/${connection}/login`);
      const res = await client.get(next!);
      assert.equal(res.status, 303, res.text);
      const location = String(res.headers.location);
      assert.ok(location.startsWith(`${idp.ssoUrl}?SAMLRequest=`), location);
      return location;
    }

    /** The IdP's answer posted to the ACS as the browser would; then /sso/saml/finish. */
    async function postBack(client: PageClient, post: { acsUrl: string; form: URLSearchParams }) {
      const acs = await client.post(new URL(post.acsUrl).pathname, Object.fromEntries(post.form));
      return acs;
    }

    async function signIn(client: PageClient, email: string, nameId = email) {
      const location = await toIdp(client, email);
      idp.setUser(nameId);
      const acs = await postBack(client, await idp.respond(location));
      assert.equal(acs.status, 303, refusals());
      const finish = await client.get(String(acs.headers.location));
      return finish;
    }

    /** why the service refused responses (its log: the page says only that it could not accept) */
    const refusals = () => t.logs.filter((l) => l.includes('SAML sign-in refused')).join('\n');
    const whoIsSignedIn = async (client: PageClient) => {
      const page = await client.get('/console');
      return page.status === 200 ? (/Signed in as <strong>([^<]+)<\/strong>/.exec(page.text)?.[1] ?? 'someone') : undefined;
    };
    const userRow = (email: string) => t.db.kysely.selectFrom('users').selectAll().where('email_normalized', '=', email).executeTakeFirst();

    it('while Testing: a tester signs in at the IdP and lands in the console as a new Analyst of the tenant', async () => {
      const client = PageClient.atOwnAddress(t);
      const finish = await signIn(client, TESTER);
      assert.equal(finish.status, 303, finish.text);
      assert.equal(finish.headers.location, '/console');
      assert.equal(await whoIsSignedIn(client), TESTER);
      const user = await userRow(TESTER);
      assert.ok(user);
      assert.deepEqual([String(user.tenant_id), user.password_hash, user.totp_secret_sealed], [tenant, null, null]);
      const roles = await t.db.kysely.selectFrom('role_assignments').select(['role_id', 'tenant_id']).where('principal_id', '=', user.id).execute();
      assert.deepEqual(
        roles.map((r) => [r.role_id, String(r.tenant_id)]),
        [[ROLE_IDS.Analyst, tenant]],
      );
      // what an administrator sees of them: no pending set-up, the IdP is their sign-in
      const seen = await t.gql(
        await t.rootToken(),
        'query($id: ID!) { user(id: $id) { roles setup_pending mfa_enrolled sso } }',
        { id: user.id },
        { tenant },
      );
      assert.deepEqual(seen.body.data.user, { roles: ['Analyst'], setup_pending: false, mfa_enrolled: false, sso: true });
      // a second sign-in is the same user, not a second one
      const again = PageClient.atOwnAddress(t);
      assert.equal((await signIn(again, TESTER)).status, 303);
      assert.equal((await t.db.kysely.selectFrom('users').select('id').where('email_normalized', '=', TESTER).execute()).length, 1);
      // each sign-in is an audit event of the user in the tenant, with the request and address
      const events = await t.db.kysely
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'user.signed_in')
        .where('actor_id', '=', user.id)
        .execute();
      assert.equal(events.length, 2);
      for (const e of events) {
        assert.deepEqual([String(e.tenant_id), String(e.actor_tenant_id), e.outcome], [tenant, tenant, 'success']);
        assert.ok(e.request_id && e.address, 'the request id and the address');
        const details = typeof e.details === 'string' ? JSON.parse(e.details) : e.details;
        assert.equal(details.method, 'sso');
      }
    });

    it('while Testing: anyone else in the domain signs in as before, and the IdP cannot sign a non-tester in', async () => {
      const client = PageClient.atOwnAddress(t);
      const page = await typeAddress(client, `someone@${DOMAIN}`);
      assert.match(page, /Enter your password/, 'the password step, not the IdP');
      assert.equal(onwards(page), undefined);
      // the IdP answers a tester's request for somebody else
      const location = await toIdp(PageClient.atOwnAddress(t), TESTER);
      idp.setUser(`intruder@${DOMAIN}`);
      const acs = await postBack(client, await idp.respond(location));
      assert.equal(acs.status, 403);
      assert.match(acs.text, /only its testers can sign in/);
      assert.equal(await userRow(`intruder@${DOMAIN}`), undefined);
      // the genuine response refused is an event of the connection's tenant, saying why
      const refused = await t.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', 'sso.sign_in_refused').execute();
      assert.equal(refused.length, 1);
      assert.deepEqual([String(refused[0]!.tenant_id), refused[0]!.outcome], [tenant, 'refused']);
      assert.match(JSON.stringify(refused[0]!.details), /only its testers/);
    });

    it('refuses every forged, tampered or replayed response, signing nobody in and creating nobody', async () => {
      const tampers: Tamper[] = [
        'unsigned',
        'attacker-key',
        'wrap-sibling',
        'wrap-extensions',
        'wrap-object',
        'comment-in-nameid',
        'wrong-audience',
        'extra-audience-restriction',
        'expired',
        'not-yet-valid',
        'unknown-in-response-to',
        'unsolicited',
        'other-acs',
        'wrong-issuer',
        'doctype',
        'two-roots',
        'comment-in-digest',
        'two-references',
        'xslt-transform',
      ];
      for (const tamper of tampers) {
        const client = PageClient.atOwnAddress(t);
        const location = await toIdp(client, TESTER);
        idp.setUser(TESTER);
        const acs = await postBack(client, await idp.respond(location, { tamper }));
        assert.ok(acs.status === 400 || acs.status === 403, `${tamper}: HTTP ${acs.status} ${acs.text.slice(0, 200)}`);
        assert.match(acs.text, /Single sign-on did not work/, tamper);
        assert.doesNotMatch(acs.text, /<samlp?:|xmlns/, `${tamper}: no XML echoed`);
        assert.equal(await whoIsSignedIn(client), undefined, tamper);
      }
      assert.equal(await userRow(`tester${COMMENT_SUFFIX}`), undefined);
      assert.equal(await userRow(FORGED), undefined, 'the forged identity (wrapped, or under a comment in DigestValue) was never created');
    });

    it('accepts a signature over the response or over the assertion, as IdPs differ', async () => {
      for (const signed of [
        { signResponse: true, signAssertion: false },
        { signResponse: false, signAssertion: true },
      ]) {
        const client = PageClient.atOwnAddress(t);
        const location = await toIdp(client, TESTER);
        idp.setUser(TESTER);
        const acs = await postBack(client, await idp.respond(location, signed));
        assert.equal(acs.status, 303, `${JSON.stringify(signed)}: ${refusals()}`);
        assert.equal((await client.get(String(acs.headers.location))).status, 303);
        assert.equal(await whoIsSignedIn(client), TESTER);
      }
    });

    it('accepts inclusive c14n and a lone enveloped-signature transform, as xml-crypto does (decided: docs/sso.md)', async () => {
      const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
      for (const transforms of [
        [ENVELOPED, 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315'],
        [ENVELOPED, 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments'],
        [ENVELOPED],
      ]) {
        for (const signed of [
          { signResponse: true, signAssertion: false },
          { signResponse: false, signAssertion: true },
        ]) {
          const what = `${transforms.join(' + ')}, ${JSON.stringify(signed)}`;
          const client = PageClient.atOwnAddress(t);
          const location = await toIdp(client, TESTER);
          idp.setUser(TESTER);
          const post = await idp.respond(location, { ...signed, transforms });
          for (const uri of transforms) assert.ok(post.xml.includes(`<ds:Transform Algorithm="${uri}"/>`), `${what}: signed with it`);
          assert.ok(
            !post.xml.includes('<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>'),
            `${what}: and not with exclusive c14n`,
          );
          const acs = await postBack(client, post);
          assert.equal(acs.status, 303, `${what}: ${refusals()}`);
          assert.equal((await client.get(String(acs.headers.location))).status, 303);
          assert.equal(await whoIsSignedIn(client), TESTER, what);
        }
      }
    });

    it('accepts a response once: the same one posted again signs nobody in', async () => {
      const client = PageClient.atOwnAddress(t);
      const location = await toIdp(client, TESTER);
      idp.setUser(TESTER);
      const post = await idp.respond(location);
      const first = await postBack(client, post);
      assert.equal(first.status, 303);
      const thief = PageClient.atOwnAddress(t);
      const replay = await postBack(thief, post);
      assert.equal(replay.status, 400, 'the replay is refused');
      assert.equal((await client.get(String(first.headers.location))).status, 303, 'the first one still finishes');
    });

    it('allows the IdP’s clock 3 minutes off, no more: 2½ minutes past NotOnOrAfter or before NotBefore signs in, 3½ minutes signs nobody in', async () => {
      const MINUTE = 60_000;
      const cases = [
        {
          off: 'expired 2½ minutes ago',
          accepted: true,
          times: (now: number) => ({ issueInstant: now - 7 * MINUTE, notBefore: now - 7 * MINUTE, notOnOrAfter: now - 2.5 * MINUTE }),
        },
        {
          off: 'expired 3½ minutes ago',
          accepted: false,
          times: (now: number) => ({ issueInstant: now - 7 * MINUTE, notBefore: now - 7 * MINUTE, notOnOrAfter: now - 3.5 * MINUTE }),
        },
        {
          off: 'valid in 2½ minutes',
          accepted: true,
          times: (now: number) => ({ issueInstant: now, notBefore: now + 2.5 * MINUTE, notOnOrAfter: now + 7 * MINUTE }),
        },
        {
          off: 'valid in 3½ minutes',
          accepted: false,
          times: (now: number) => ({ issueInstant: now, notBefore: now + 3.5 * MINUTE, notOnOrAfter: now + 7 * MINUTE }),
        },
      ];
      for (const { off, accepted, times } of cases) {
        const client = PageClient.atOwnAddress(t);
        const location = await toIdp(client, TESTER);
        idp.setUser(TESTER);
        const at = Object.fromEntries(Object.entries(times(Date.now())).map(([k, v]) => [k, new Date(v)]));
        const acs = await postBack(client, await idp.respond(location, at));
        if (accepted) {
          assert.equal(acs.status, 303, `${off}: ${refusals()}`);
          assert.equal((await client.get(String(acs.headers.location))).status, 303);
          assert.equal(await whoIsSignedIn(client), TESTER, off);
        } else {
          assert.equal(acs.status, 400, off);
          assert.match(acs.text, /Single sign-on did not work/, off);
          assert.equal(await whoIsSignedIn(client), undefined, off);
        }
      }
    });

    it('finishes only in the browser that began the sign-in (no login CSRF with a stolen answer)', async () => {
      const attacker = PageClient.atOwnAddress(t);
      const location = await toIdp(attacker, TESTER);
      idp.setUser(TESTER);
      const acs = await postBack(attacker, await idp.respond(location));
      const victim = PageClient.atOwnAddress(t);
      await victim.get('/login');
      const finish = await victim.get(String(acs.headers.location));
      assert.equal(finish.status, 403);
      assert.match(finish.text, /started in another browser/);
      assert.equal(await whoIsSignedIn(victim), undefined);
    });

    it('refuses a response made for another connection of the same IdP', async () => {
      const root = await t.rootToken();
      const other = await t.gql(
        root,
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
        { c: { name: 'Other', type: 'saml', domains: ['other-corp.test'], testers: ['tester@other-corp.test'] } },
        { path: TENANT_PATH, tenant },
      );
      const otherId = other.body.data.createSSOConnection.id;
      await t.gql(
        root,
        'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }',
        { u: { id: otherId, samlConfiguration: { metadataURL: idp.metadataUrl } } },
        { path: TENANT_PATH, tenant },
      );
      const client = PageClient.atOwnAddress(t);
      const location = await toIdp(client, TESTER);
      idp.setUser(TESTER);
      const post = await idp.respond(location);
      const res = await client.post(`/sso/saml/${otherId}/acs`, Object.fromEntries(post.form));
      assert.equal(res.status, 400);
      assert.equal(await whoIsSignedIn(client), undefined);
    });

    it('once Enabled: anyone in the domain signs in at the IdP; an account of another tenant keeps its password', async () => {
      assert.equal(await setStatus({ status: 'Enabled' }), 'Enabled');
      try {
        const client = PageClient.atOwnAddress(t);
        assert.equal((await signIn(client, `new.person@${DOMAIN}`)).status, 303);
        assert.equal(await whoIsSignedIn(client), `new.person@${DOMAIN}`);
        // an account made elsewhere with an address in the domain, proven (a mailed link), is not
        // taken over by the connection
        await signedInUser(t, `outsider@${DOMAIN}`);
        await t.db.kysely.updateTable('users').set({ email_verified_at: new Date() }).where('email_normalized', '=', `outsider@${DOMAIN}`).execute();
        const outsider = PageClient.atOwnAddress(t);
        assert.match(await typeAddress(outsider, `outsider@${DOMAIN}`), /Enter your password/);
        const location = await toIdp(PageClient.atOwnAddress(t), `colleague@${DOMAIN}`);
        idp.setUser(`outsider@${DOMAIN}`);
        const acs = await postBack(outsider, await idp.respond(location));
        assert.equal(acs.status, 403);
        assert.match(acs.text, /exists in another organisation/);
      } finally {
        await setStatus({ status: 'Testing' });
      }
    });

    it("a squatter's unproven account elsewhere keeps nobody from the domain's IdP: the sign-in makes the connection's tenant its own account, proven by the domain, and the squatter's gives way", async () => {
      assert.equal(await setStatus({ status: 'Enabled' }), 'Enabled');
      try {
        const squatters = await createTenant(t, '1', { name: 'SSO squatters' });
        const squatter = await signedInUser(t, `squatted@${DOMAIN}`, { tenant: squatters });
        const client = new PageClient(t, 'gatehouse_session', '203.0.113.165');
        // signIn: /login sends the address on to the IdP (toIdp asserts it), the ACS accepts
        assert.equal((await signIn(client, `squatted@${DOMAIN}`)).status, 303);
        assert.equal(await whoIsSignedIn(client), `squatted@${DOMAIN}`);
        const accounts = await t.db.kysely
          .selectFrom('users')
          .select(['id', 'tenant_id', 'email_verified_at', 'email_superseded_at'])
          .where('email_normalized', '=', `squatted@${DOMAIN}`)
          .orderBy('created_at')
          .execute();
        assert.deepEqual(
          accounts.map((a) => [String(a.tenant_id), a.email_verified_at !== null, a.email_superseded_at !== null]),
          [
            [squatters, false, true],
            [tenant, true, false],
          ],
          "the sign-in made one in the connection's tenant, proven (its tenant proved the domain); the squatter's gave way",
        );
        assert.equal(await whoIsSignedIn(squatter.client), undefined, "the squatter's session ended");
        const proof = await t.db.kysely
          .selectFrom('audit_events')
          .select(['action', 'details'])
          .where(
            'target_id',
            'in',
            accounts.map((a) => a.id),
          )
          .where('action', 'in', ['user.email_verified', 'user.email_claimed_elsewhere'])
          .orderBy('action')
          .execute();
        assert.deepEqual(
          proof.map((e) => [e.action, (typeof e.details === 'string' ? JSON.parse(e.details) : e.details).by ?? null]),
          [
            ['user.email_claimed_elsewhere', null],
            ['user.email_verified', 'sso'],
          ],
        );
      } finally {
        await setStatus({ status: 'Testing' });
      }
    });

    it('an account linked to the IdP that gave way to a proof elsewhere signs in no more through it', async () => {
      assert.equal(await setStatus({ status: 'Enabled' }), 'Enabled');
      try {
        const email = `gaveway@${DOMAIN}`;
        assert.equal((await signIn(new PageClient(t, 'gatehouse_session', '203.0.113.164'), email)).status, 303);
        const linked = (await userRow(email))!;
        // an account linked before sign-ins proved addresses: unproven; another proves the address
        await t.db.kysely.updateTable('users').set({ email_verified_at: null }).where('id', '=', linked.id).execute();
        const elsewhere = await createTenant(t, '1', { name: 'Proven elsewhere' });
        const other = await t.service.services.users.createAsOperator({ kind: 'operator', id: 'root' }, elsewhere, { email });
        await proveAddress(t.db.kysely, other.user.id, email, new Date());
        // /login sends the address to its proven account's password now; the connection's own
        // sign-in link (an IdP tile, a bookmark) still reaches the IdP, which vouches as before
        const client = new PageClient(t, 'gatehouse_session', '203.0.113.164');
        assert.equal(onwards(await typeAddress(client, email)), undefined);
        const tile = await client.get(`/sso/saml/${connection}/login`);
        const begun = await client.post(`/sso/saml/${connection}/login`, { _csrf: client.csrf(tile) });
        assert.equal(begun.status, 303, begun.text);
        assert.equal(begun.headers.location, '/login');
        const onward = onwards((await client.get('/login')).text);
        assert.equal(onward, `/sso/saml/${connection}/login`);
        const location = String((await client.get(onward!)).headers.location);
        idp.setUser(email);
        const acs = await postBack(client, await idp.respond(location));
        assert.equal(acs.status, 403, acs.text);
        assert.match(acs.text, /Another account proved this address, so this one no longer signs in/);
        assert.equal(await whoIsSignedIn(client), undefined);
      } finally {
        await setStatus({ status: 'Testing' });
      }
    });

    it("the tenant's own account that gave way, its prover gone since: the sign-in is refused in words that say why, and nothing is written", async () => {
      assert.equal(await setStatus({ status: 'Enabled' }), 'Enabled');
      try {
        const email = `orphan@${DOMAIN}`;
        await setupLink(t, email, { tenant, roles: [ROLE_IDS.Analyst] });
        // it gave way to an account elsewhere, which was deleted since (or moved to another address)
        await t.db.kysely.updateTable('users').set({ email_superseded_at: new Date() }).where('email_normalized', '=', email).execute();
        const users = async () =>
          Number(
            (
              await t.db.kysely
                .selectFrom('users')
                .select((eb) => eb.fn.countAll().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          );
        const before = await users();
        const client = new PageClient(t, 'gatehouse_session', '203.0.113.161');
        const location = await toIdp(client, email);
        idp.setUser(email);
        const acs = await postBack(client, await idp.respond(location));
        assert.equal(acs.status, 400, acs.text);
        assert.match(acs.text, /An account with this address exists but cannot sign in through this connection now/);
        assert.equal(await users(), before, 'nobody created');
        assert.equal(await whoIsSignedIn(client), undefined);
      } finally {
        await setStatus({ status: 'Testing' });
      }
    });

    it('the finish refuses an account that gave way between the ACS and the finish', async () => {
      assert.equal(await setStatus({ status: 'Enabled' }), 'Enabled');
      try {
        const email = `between@${DOMAIN}`;
        const client = new PageClient(t, 'gatehouse_session', '203.0.113.162');
        const location = await toIdp(client, email);
        idp.setUser(email);
        const acs = await postBack(client, await idp.respond(location));
        assert.equal(acs.status, 303, refusals());
        // meanwhile the account gives way (as when another proves the address first)
        await t.db.kysely
          .updateTable('users')
          .set({ email_verified_at: null, email_superseded_at: new Date() })
          .where('email_normalized', '=', email)
          .execute();
        const finish = await client.get(String(acs.headers.location));
        assert.equal(finish.status, 403);
        assert.match(finish.text, /Another account proved this address, so this one no longer signs in/);
        assert.equal(await whoIsSignedIn(client), undefined);
      } finally {
        await setStatus({ status: 'Testing' });
      }
    });

    it('linking an account of the tenant proves its address; a later sign-in of an account whose address is not the NameID proves nothing', async () => {
      assert.equal(await setStatus({ status: 'Enabled' }), 'Enabled');
      try {
        const email = `linked-proof@${DOMAIN}`;
        const invited = await signedInUser(t, email, { tenant });
        assert.equal((await userRow(email))!.email_verified_at, null, 'an invitation shown, not mailed: unproven');
        const client = new PageClient(t, 'gatehouse_session', '203.0.113.163');
        assert.equal((await signIn(client, email)).status, 303);
        assert.equal(await whoIsSignedIn(client), email);
        assert.notEqual((await userRow(email))!.email_verified_at, null, 'the sign-in through the proven domain proved it');
        assert.equal(await whoIsSignedIn(invited.client), email, 'the account is the same one: its own session goes on');

        // an identity linked to an account whose address is elsewhere: signing in proves nothing
        const moved = 'moved-away@elsewhere.test';
        await signedInUser(t, moved, { tenant });
        const movedId = (await userRow(moved))!.id;
        await t.db.kysely
          .insertInto('sso_identities')
          .values({ connection_id: connection, name_id: `old-name@${DOMAIN}`, user_id: movedId, created_at: new Date(), last_sign_in_at: null })
          .execute();
        const other = new PageClient(t, 'gatehouse_session', '203.0.113.163');
        const tile = await other.get(`/sso/saml/${connection}/login`);
        assert.equal((await other.post(`/sso/saml/${connection}/login`, { _csrf: other.csrf(tile) })).status, 303);
        const onward = onwards((await other.get('/login')).text);
        const location = String((await other.get(onward!)).headers.location);
        idp.setUser(`old-name@${DOMAIN}`);
        const acs = await postBack(other, await idp.respond(location));
        assert.equal((await other.get(String(acs.headers.location))).status, 303);
        assert.equal(await whoIsSignedIn(other), moved);
        assert.equal((await userRow(moved))!.email_verified_at, null, 'its own address is not the one the IdP vouched for');
      } finally {
        await setStatus({ status: 'Testing' });
      }
    });

    it('device login: the account the CLI named signs in through the IdP, then approves, and the CLI gets its token', async () => {
      const started = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/device/code',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: TESTER }).toString(),
      });
      const { user_code, device_code } = started.body as { user_code: string; device_code: string };
      const browser = PageClient.atOwnAddress(t);
      const confirm = await browser.get(`/device?user_code=${user_code}`);
      const sent = await browser.post('/device', { _csrf: browser.csrf(confirm), user_code });
      assert.equal(sent.headers.location, '/login');
      const signInPage = await browser.get('/login');
      assert.equal(onwards(signInPage.text), `/sso/saml/${connection}/login`, 'straight on to the IdP: its MFA, not a password');
      const toIdp = await browser.get(`/sso/saml/${connection}/login`);
      idp.setUser(TESTER);
      const acs = await postBack(browser, await idp.respond(String(toIdp.headers.location)));
      const finish = await browser.get(String(acs.headers.location));
      assert.equal(finish.headers.location, `/device/approve?user_code=${user_code.replace('-', '')}`);
      const approvePage = await browser.get(String(finish.headers.location));
      assert.equal(approvePage.status, 200, approvePage.text);
      const approved = await browser.post('/device/approve', { _csrf: browser.csrf(approvePage), user_code, decision: 'approve' });
      assert.ok(approved.status === 200 || approved.status === 303, approved.text);
      const token = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code,
          client_id: 'gatehouse-cli',
        }).toString(),
      });
      assert.equal(token.status, 200, token.text);
      assert.ok(token.body.access_token);
    });

    it('an expired certificate refuses sign-in with a message that says so; accounts with a password are asked for it', async () => {
      // an Administrator of the tenant with a password, who must be able to repair the connection
      await signedInUser(t, `admin@${DOMAIN}`, { tenant, roles: [ROLE_IDS.Administrator] });
      assert.equal(await setStatus({ status: 'Enabled' }), 'Enabled');
      // a genuine response, answered before the certificate expired and posted after
      const late = PageClient.atOwnAddress(t);
      const location = await toIdp(late, TESTER);
      idp.setUser(TESTER);
      const post = await idp.respond(location);
      t.clock.advance(3 * 86_400_000);
      try {
        const client = PageClient.atOwnAddress(t);
        const next = onwards(await typeAddress(client, TESTER));
        const res = await client.get(next!);
        assert.equal(res.status, 403);
        assert.match(res.text, /certificate expired on \d{4}-\d\d-\d\d/);
        assert.match(await typeAddress(PageClient.atOwnAddress(t), `admin@${DOMAIN}`), /Enter your password/);
        // the ACS fails closed: with no certificate to verify with, nothing is accepted (item 70)
        const acs = await postBack(late, post);
        assert.equal(acs.status, 403);
        assert.match(acs.text, /certificate expired on \d{4}-\d\d-\d\d/);
        assert.equal(await whoIsSignedIn(late), undefined);
      } finally {
        t.clock.advance(-3 * 86_400_000);
        await setStatus({ status: 'Testing' });
      }
    });

    it('one decision for the sign-in and its test (decide): read only; the identity linked before first, then the address; each refusal named', async () => {
      const sso = t.service.services.ssoSignIn;
      const stores = t.service.store;
      const found = await stores.sso.findConnectionForSignIn(connection);
      assert.ok(found);
      const enabled = { ...found, status: 'Enabled' as const };
      const testing = { ...found, status: 'Testing' as const, testers: [TESTER] };
      const idOf = async (email: string) =>
        (await t.db.kysely.selectFrom('users').select('id').where('email_normalized', '=', email).executeTakeFirstOrThrow()).id;
      const other = await createTenant(t, '1', { name: 'Other organisation' });
      await setupLink(t, `decide-member@${DOMAIN}`, { tenant, roles: [ROLE_IDS.Analyst] });
      await setupLink(t, `decide-taken@${DOMAIN}`, { tenant: other, roles: [ROLE_IDS.Analyst] });
      await setupLink(t, 'decide-renamed@elsewhere.test', { tenant, roles: [ROLE_IDS.Analyst] });
      const member = await idOf(`decide-member@${DOMAIN}`);
      const renamed = await idOf('decide-renamed@elsewhere.test');
      // decide-taken@ signed in through this connection before, as the account now called decide-renamed@
      await t.db.kysely
        .insertInto('sso_identities')
        .values({ connection_id: connection, name_id: `decide-taken@${DOMAIN}`, user_id: renamed, created_at: new Date(), last_sign_in_at: null })
        .execute();
      const count = async () =>
        Promise.all(
          (['users', 'sso_identities', 'audit_events'] as const).map(async (table) =>
            Number(
              (
                await t.db.kysely
                  .selectFrom(table)
                  .select((eb) => eb.fn.countAll().as('n'))
                  .executeTakeFirstOrThrow()
              ).n,
            ),
          ),
        );
      const before = await count();
      assert.deepEqual(await sso.decide(stores, enabled, 'not an address'), { kind: 'refused', why: 'not-an-address' });
      assert.deepEqual(await sso.decide(stores, enabled, 'someone@elsewhere.test'), { kind: 'refused', why: 'other-domain' });
      assert.deepEqual(await sso.decide(stores, testing, `decide-member@${DOMAIN}`), { kind: 'refused', why: 'not-a-tester' });
      assert.deepEqual(await sso.decide(stores, enabled, `decide-new@${DOMAIN}`), { kind: 'create', email: `decide-new@${DOMAIN}` });
      assert.deepEqual(await sso.decide(stores, enabled, `decide-member@${DOMAIN}`), {
        kind: 'link',
        userId: member,
        tenantId: tenant,
        email: `decide-member@${DOMAIN}`,
        provesAddress: true,
      });
      // the linked identity comes first: the account of another organisation with the address is not asked
      assert.deepEqual(await sso.decide(stores, enabled, `decide-taken@${DOMAIN}`), {
        kind: 'linked',
        userId: renamed,
        tenantId: tenant,
        email: 'decide-renamed@elsewhere.test',
        provesAddress: false,
      });
      await t.db.kysely.deleteFrom('sso_identities').where('name_id', '=', `decide-taken@${DOMAIN}`).execute();
      // an account of another organisation that nobody proved blocks nothing (docs/users.md, the
      // squatting rule): the connection's tenant gets its own; a proven one is never taken over
      assert.deepEqual(await sso.decide(stores, enabled, `decide-taken@${DOMAIN}`), { kind: 'create', email: `decide-taken@${DOMAIN}` });
      await t.db.kysely
        .updateTable('users')
        .set({ email_verified_at: new Date() })
        .where('email_normalized', '=', `decide-taken@${DOMAIN}`)
        .execute();
      assert.deepEqual(await sso.decide(stores, enabled, `decide-taken@${DOMAIN}`), { kind: 'refused', why: 'other-organisation' });
      await t.db.kysely.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', member).execute();
      assert.deepEqual(await sso.decide(stores, enabled, `decide-member@${DOMAIN}`), {
        kind: 'refused',
        why: 'disabled',
        userId: member,
        email: `decide-member@${DOMAIN}`,
      });
      const [users, identities, events] = await count();
      assert.deepEqual([users, events], [before[0], before[2]], 'decide wrote no user and no event');
      assert.equal(identities, Number(before[1]) - 1, 'nor any identity (one was deleted by the test itself)');
    });

    it("a sign-in started elsewhere (a link, an app tile) waits for a click with the session's CSRF token (no login CSRF)", async () => {
      const visitor = PageClient.atOwnAddress(t);
      const page = await visitor.get(`/sso/saml/${connection}/login`);
      assert.equal(page.status, 200, 'a page, not a redirect to the IdP');
      assert.match(page.text, /Sign in through <strong>Corp IdP<\/strong>/);
      const requests = idp.requests.length;
      const forged = await visitor.post(`/sso/saml/${connection}/login`, { _csrf: 'x'.repeat(43) });
      assert.equal(forged.status, 403);
      const clicked = await visitor.post(`/sso/saml/${connection}/login`, { _csrf: visitor.csrf(page) });
      assert.equal(clicked.headers.location, '/login');
      const next = onwards((await visitor.get('/login')).text);
      const toIdp = await visitor.get(next!);
      assert.ok(String(toIdp.headers.location).startsWith(`${idp.ssoUrl}?SAMLRequest=`));
      assert.equal(idp.requests.length, requests, 'the IdP saw nothing until then (the test answers for it)');
    });

    it('judges the connection again when the browser comes back: disabled meanwhile, nobody is signed in', async () => {
      const client = PageClient.atOwnAddress(t);
      const location = await toIdp(client, TESTER);
      idp.setUser(TESTER);
      const acs = await postBack(client, await idp.respond(location));
      assert.equal(acs.status, 303, refusals());
      assert.equal(await setStatus({ status: 'Disabled' }), 'Disabled');
      try {
        const finish = await client.get(String(acs.headers.location));
        assert.equal(finish.status, 403);
        assert.equal(await whoIsSignedIn(client), undefined);
      } finally {
        await setStatus({ status: 'Testing' });
      }
    });

    it('after the expiry job disables an expired tenant, its connection signs nobody in, not even a sign-in begun before the job', async () => {
      const root = await t.rootToken();
      const lapsed = await createTenant(t, '1', { name: 'Lapsed' });
      const made = await t.gql(
        root,
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
        { c: { name: 'Lapsed IdP', type: 'saml', domains: ['lapsed.test'], testers: ['t@lapsed.test'] } },
        { path: TENANT_PATH, tenant: lapsed },
      );
      const id = made.body.data.createSSOConnection.id;
      await markDomainProven(t, id, 'lapsed.test');
      const configured = await t.gql(
        root,
        'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }',
        { u: { id, samlConfiguration: { metadataURL: idp.metadataUrl } } },
        { path: TENANT_PATH, tenant: lapsed },
      );
      assert.equal(configured.body.errors, undefined, configured.text);
      /** /login with the address, on to the IdP: the AuthnRequest URL */
      const begin = async (client: PageClient) => {
        const next = onwards(await typeAddress(client, 't@lapsed.test'));
        assert.equal(next, `/sso/saml/${id}/login`);
        const res = await client.get(next!);
        assert.equal(res.status, 303, res.text);
        return String(res.headers.location);
      };
      // it works while the tenant is enabled: the tester signs in
      const before = PageClient.atOwnAddress(t);
      idp.setUser('t@lapsed.test');
      const acs = await postBack(before, await idp.respond(await begin(before)));
      assert.equal(acs.status, 303, refusals());
      await before.get(String(acs.headers.location));
      assert.equal(await whoIsSignedIn(before), 't@lapsed.test');

      // its expiry passes the grace period by the service's clock, and the job runs
      const grace = t.config.expiryGraceDays;
      const past = new Date(t.clock.now().getTime() - (grace + 1) * 86_400_000).toISOString();
      const expired = await t.gql(
        root,
        'mutation($id: ID!, $at: Time!) { updateTenant(tenantID: $id, tenantUpdate: {expiresAt: $at}) { id enabled } }',
        { id: lapsed, at: past },
        { path: TENANT_PATH },
      );
      assert.equal(expired.body.data.updateTenant.enabled, true, expired.text);
      const pending = PageClient.atOwnAddress(t);
      const begun = await idp.respond(await begin(pending)); // at the IdP while the job runs
      assert.deepEqual(await disableExpiredTenants(t.service.store, t.clock, grace), [lapsed]);

      // a new sign-in is refused at the first step, and says why
      const after = PageClient.atOwnAddress(t);
      const next = onwards(await typeAddress(after, 't@lapsed.test'));
      const refused = await after.get(next!);
      assert.equal(refused.status, 403);
      assert.match(refused.text, /access to this service is suspended/);
      assert.equal(await whoIsSignedIn(after), undefined);
      // the IdP's answer to the sign-in begun before the job signs nobody in either
      const late = await postBack(pending, begun);
      assert.equal(late.status, 403, late.text);
      assert.match(late.text, /access to this service is suspended/);
      assert.equal(await whoIsSignedIn(pending), undefined);
      // and the session of the sign-in before the job is over
      assert.equal(await whoIsSignedIn(before), undefined);
    });

    it("a disabled tenant's connection signs nobody in, and says why", async () => {
      const root = await t.rootToken();
      const suspended = await createTenant(t, '1', { name: 'Suspended' });
      const made = await t.gql(
        root,
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
        { c: { name: 'Suspended IdP', type: 'saml', domains: ['suspended.test'], testers: ['t@suspended.test'] } },
        { path: TENANT_PATH, tenant: suspended },
      );
      const id = made.body.data.createSSOConnection.id;
      await markDomainProven(t, id, 'suspended.test');
      await t.gql(
        root,
        'mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { status } }',
        { u: { id, samlConfiguration: { metadataURL: idp.metadataUrl } } },
        { path: TENANT_PATH, tenant: suspended },
      );
      const disabled = await t.gql(
        root,
        'mutation($id: ID!) { updateTenant(tenantID: $id, tenantUpdate: {disable: true}) { id } }',
        { id: suspended },
        { path: TENANT_PATH },
      );
      assert.equal(disabled.body.errors, undefined, disabled.text);
      const client = PageClient.atOwnAddress(t);
      const next = onwards(await typeAddress(client, 't@suspended.test'));
      const res = await client.get(next!);
      assert.equal(res.status, 403);
      assert.match(res.text, /access to this service is suspended/);
      assert.equal(await userRow('t@suspended.test'), undefined);
    });
  });
}
