// The statements each main flow sends to the database, on both engines, listed one by one: a
// token request, a password sign-in, a device approval, an SSO sign-in and the `clients` query.
// A change in any list (a read added, repeated, or saved) is a decision someone makes on
// purpose, here, with the reason next to it. Each statement is written `<verb> <table>`
// (test/helpers/statements.ts); "begin" and "commit" are the round trips of a transaction.
// Warm: after a first run filled the caches (store/read-cache.ts); cold: with every cache void,
// as after a change. On PostgreSQL the notifications of earlier writes are waited for first
// (settle), so that none arrives in the middle of a measured request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes, randomUUID } from 'node:crypto';
import { generateSecret, hashSecret } from '../../src/credentials/secret.js';
import { createStore } from '../../src/store/index.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { RunningClock } from '../helpers/browser.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { createClient } from '../helpers/seed.js';
import { loggedTestDb, type StatementLog } from '../helpers/statements.js';
import { connectIdp } from '../sso/saml-flow.js';

for (const engine of engines()) {
  describe(`statements of each flow (${engine})`, () => {
    let t: TestApp;
    let log: StatementLog;
    let settle: () => Promise<void>;
    before(async () => {
      const logged = await loggedTestDb(engine);
      ({ log, settle } = logged);
      t = await startTestApp({ engine, db: logged.db });
    });
    after(() => t.close());

    /** every cache void, as after a change */
    const cold = async () => {
      await settle();
      t.db.changes.bump();
    };
    /** the statements of one request, and its response */
    const sent = async (request: () => Promise<Response>): Promise<[string[], Response]> => {
      let res: Response | undefined;
      const statements = await log.of(async () => {
        res = await request();
      });
      return [statements, res!];
    };

    it('a token request (client credentials): none when warm', async () => {
      const client = await createClient(t, await t.rootToken(), 'counted');
      await cold();
      const [first, issued] = await sent(() => t.tokenResponse(client.clientId, client.secret));
      assert.equal(issued.status, 200, issued.text);
      assert.deepEqual(first, [
        // the pair (client id, address) is new to this process: its attempt is counted, under
        // the pair's and the address's limits, before the secret is checked (oauth/failure-throttle.ts)
        'insert token_failures',
        'insert token_failures',
        // the client with its secrets, and its roles (cached from here on)
        'select clients',
        'select role_assignments',
        // the secret held: the pair's count is cleared, the address's attempt given back, and
        // the pair's success recorded for the other processes
        'delete token_failures',
        'update token_failures',
        'insert token_trust',
        // the signing keys, read again by the key ring once per change (a retirement by another
        // process must be seen at once: docs/tokens.md, "Emergency retirement"), before signing
        'select signing_keys',
      ]);
      // ARCHITECTURE.md: a token path with no SQL when warm (the secret's last use is buffered)
      const [warm, again] = await sent(() => t.tokenResponse(client.clientId, client.secret));
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(warm, []);
    });

    it('a token request with a mangled secret: no client or secret is read, only the guessing throttle counts it', async () => {
      const client = await createClient(t, await t.rootToken(), 'mangled');
      const at = 30;
      const mangled = client.secret.slice(0, at) + (client.secret[at] === 'A' ? 'B' : 'A') + client.secret.slice(at + 1);
      const refused = async (secret: string) => {
        await cold();
        return sent(async () => {
          const res = await t.tokenResponse(client.clientId, secret);
          await t.service.services.credentials.settled(); // the refusal's audit event, off the request path
          return res;
        });
      };
      const [statements, res] = await refused(mangled);
      assert.equal(res.status, 401, res.text);
      assert.deepEqual(statements, [
        // the attempt counted under the pair's and the address's limits (oauth/failure-throttle.ts),
        // and left counted: it failed
        'insert token_failures',
        'insert token_failures',
      ]);
      // the control: a wrong secret of the right form is looked up (and its refusal audited)
      const [wrong, wrongRes] = await refused(generateSecret());
      assert.equal(wrongRes.status, 401, wrongRes.text);
      assert.ok(wrong.includes('select clients'), wrong.join(', '));
    });

    it('a wrong secret for a known client and an unknown client_id send the same statements, cold and warm', async () => {
      const client = await createClient(t, await t.rootToken(), 'known');
      const unknown = randomBytes(16).toString('hex');
      let address = 0;
      /** a refused request from an address of its own (each pair new to the throttle), with its refusal's audit event */
      const refused = (clientId: string) =>
        sent(async () => {
          const res = await t.request({
            method: 'POST',
            url: '/auth/api/v2/auth/token',
            remoteAddress: `203.0.113.${++address}`,
            headers: { 'content-type': 'application/json' },
            payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: generateSecret() },
          });
          await t.service.services.credentials.settled();
          return res;
        });
      // the known client read once and kept, as its own successful requests keep it; the unknown
      // one refused once (both read, cold)
      await cold();
      const [coldKnown, a] = await refused(client.clientId);
      const [coldUnknown, b] = await refused(unknown);
      assert.deepEqual([a.status, b.status], [401, 401]);
      assert.equal((await t.tokenResponse(client.clientId, client.secret)).status, 200);
      const [warmKnown, c] = await refused(client.clientId);
      const [warmUnknown, d] = await refused(unknown);
      assert.deepEqual([c.status, d.status, c.text], [401, 401, d.text]);
      // the same reads either way: the unknown client_id is remembered as unknown, as the known
      // client is remembered (store/index.ts), until a change. The one difference is the known
      // client's audit event (client.credentials_refused), written after the answer was sent
      // (CredentialService.credentialsRefused), so it cannot delay the answer.
      const answered = (statements: string[]) => statements.filter((s) => s !== 'insert audit_events');
      assert.deepEqual(answered(coldKnown), ['insert token_failures', 'insert token_failures', 'select clients']);
      assert.deepEqual(answered(coldUnknown), answered(coldKnown));
      assert.deepEqual(answered(warmKnown), ['insert token_failures', 'insert token_failures']);
      assert.deepEqual(answered(warmUnknown), answered(warmKnown));
      assert.deepEqual([coldKnown.at(-1), warmKnown.at(-1)], ['insert audit_events', 'insert audit_events']);
      assert.ok(!coldUnknown.includes('insert audit_events') && !warmUnknown.includes('insert audit_events'));
    });

    it('a client_id remembered as unknown works at once when a client with it is written', async () => {
      const clientId = `late-${randomBytes(8).toString('hex')}`;
      const secret = generateSecret();
      await cold();
      assert.equal((await t.tokenResponse(clientId, secret)).status, 401);
      const [remembered, again] = await sent(() => t.tokenResponse(clientId, secret));
      assert.equal(again.status, 401);
      assert.ok(!remembered.includes('select clients'), remembered.join(', '));
      // written as a creation writes it (the client, then its secret), through the app's database:
      // its write watch tells the cache (on PostgreSQL other processes hear it from the triggers:
      // test/store/change-listener.test.ts)
      const store = createStore(t.db.kysely, t.clock);
      const id = randomUUID();
      const now = t.clock.now();
      await store.credentials.insertClient({
        id,
        tenantId: '1',
        clientId,
        name: clientId,
        nameNormalized: clientId,
        environment: t.config.region,
        createdAt: now,
        createdBy: 'test',
      });
      await store.credentials.insertSecret({ id: randomUUID(), clientId: id, tenantId: '1', hash: hashSecret(secret), hint: 'late', createdAt: now });
      const res = await t.tokenResponse(clientId, secret);
      assert.equal(res.status, 200, res.text);
    });

    it('the clients query: none when warm', async () => {
      const root = await t.rootToken();
      const query = () => t.gql(root, '{ clients { client_id name } }');
      await cold();
      const [first, listed] = await sent(query);
      assert.equal(listed.body.errors, undefined, listed.text);
      assert.ok(listed.body.data.clients.length >= 1);
      assert.deepEqual(first, [
        // the signing keys, read again by the key ring once per change, before the token is verified
        'select signing_keys',
        // whether the token's id was revoked (RFC 7009; cached, store/index.ts findRevocation)
        'select revoked_tokens',
        // the principal behind the Bearer token, and its roles
        'select clients',
        'select role_assignments',
        // the acting tenant's scope
        'select tenants',
        // the listing: the clients, their roles, their unrevoked secrets
        'select clients',
        'select role_assignments',
        'select client_secrets',
      ]);
      assert.deepEqual((await sent(query))[0], []);
    });

    it('a password sign-in, request by request (a browser not recognised, nothing of it cached)', async () => {
      const email = 'person@example.com';
      const { key } = await signedInUser(t, email);
      // the enrolment's code is used: the next one is a step later
      t.clock.advance(30_000);
      await settle();
      const browser = new PageClient(t);

      let [statements, page] = await sent(() => browser.get('/login'));
      assert.equal(page.status, 200);
      // a new anonymous session at the e-mail step
      assert.deepEqual(statements, ['insert sessions']);

      let res: Response;
      [statements, res] = await sent(() => browser.post('/login', { _csrf: browser.csrf(page), email }));
      assert.equal(res.headers.location, '/login');
      assert.deepEqual(statements, [
        // the form's session (its CSRF token)
        'select sessions',
        // the address's SSO connection (none), then its account
        'select sso_connections',
        'select users',
        // the session's step: password
        'update sessions',
      ]);

      [statements, page] = await sent(() => browser.get('/login'));
      assert.match(page.text, /Enter your password/);
      // the session, read once (it was read twice: once by the page, once more for the anonymous session)
      assert.deepEqual(statements, ['select sessions']);

      [statements, res] = await sent(() => browser.post('/login', { _csrf: browser.csrf(page), password: PASSWORD }));
      assert.equal(res.headers.location, '/login');
      assert.deepEqual(statements, [
        'select sessions',
        // the account of the step
        'select users',
        // the attempt counted under the address, the account from the address, and the account
        // from every unrecognised browser, in one statement (attempts/gate.ts), before the
        // password is checked (it was one statement per count)
        'insert sign_in_failures',
        // the password was right: the attempt given back under each, in one statement
        'update sign_in_failures',
        // trust raised: the session goes on under a new id
        'begin',
        'delete sessions',
        'insert sessions',
        'commit',
      ]);

      [statements, page] = await sent(() => browser.get('/login'));
      assert.match(page.text, /Enter your code/);
      // the session, read once (it was read twice: once by the page, once more for the anonymous session)
      assert.deepEqual(statements, ['select sessions']);

      [statements, res] = await sent(() => browser.post('/login', { _csrf: browser.csrf(page), code: totpCodeAt(key, t.clock.now()) }));
      assert.deepEqual([res.status, res.headers.location], [303, '/console'], res.text);
      assert.deepEqual(statements, [
        'select sessions',
        'select users',
        // the attempt counted under the address, the account's codes from the address, and its
        // codes from every unrecognised browser (one statement)
        'insert sign_in_failures',
        // the code's step, used (one code, one sign-in)
        'update users',
        // the attempt given back under each (one statement)
        'update sign_in_failures',
        // what others tried: the account-wide counts and this address's, of passwords and codes,
        // in one read (it was four)
        'select sign_in_failures',
        // the browser recognised from now on, and this address's counts cleared
        'insert recognised_browsers',
        'delete sign_in_failures',
        // the audit event of the sign-in (user.signed_in, with the request id and address)
        'insert audit_events',
        // the signed-in session under a new id, and the user's last sign-in
        'begin',
        'delete sessions',
        'insert sessions',
        'update users',
        'commit',
      ]);
    });

    it('a device approval (the approve POST)', async () => {
      const email = 'approver@example.com';
      const { client: browser } = await signedInUser(t, email);
      const started = await t.request({
        method: 'POST',
        url: '/auth/api/v2/auth/device/code',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: email }).toString(),
      });
      const userCode = String(started.body.user_code);
      const page = await browser.get(`/device/approve?user_code=${userCode}`);
      assert.match(page.text, /Approve this device\?/);
      await settle();
      const [statements, res] = await sent(() =>
        browser.post('/device/approve', { _csrf: browser.csrf(page), user_code: userCode, decision: 'approve' }),
      );
      assert.equal(res.status, 200, res.text);
      assert.match(res.text, /Device approved/);
      assert.deepEqual(statements, [
        // the form's session, and who is signed in
        'select sessions',
        'select users',
        // the code looked up as typed codes are: counted against the address, found, given back
        'insert sign_in_failures',
        'select device_authorizations',
        'update sign_in_failures',
        // the decision, written only if the code is still pending (the code found above is
        // passed on: it was looked up again), and its audit event (device.approved) in the
        // same transaction
        'begin',
        'update device_authorizations',
        'insert audit_events',
        // its notice to the person (docs/users.md "Notices"), queued with it: the tenant's name
        // for the message, and the outbox row
        'select tenants',
        'insert mail_outbox',
        'commit',
      ]);
    });
  });

  describe(`statements of an SSO sign-in (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let log: StatementLog;
    let settle: () => Promise<void>;
    before(async () => {
      const logged = await loggedTestDb(engine);
      ({ log, settle } = logged);
      // node-saml and the IdP read the real clock: the service's runs with it
      [t, idp] = await Promise.all([
        startTestApp({ engine, db: logged.db, clock: new RunningClock(), env: { GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true' } }),
        startTestIdp(),
      ]);
    });
    after(async () => {
      await Promise.all([t.close(), idp.close()]);
    });

    /** The statements of each request of one sign-in through the IdP: the address typed, the way
     *  to the IdP, the ACS, the finish; the browser signed in at the end. */
    async function signIn(email: string, acsPath: string): Promise<Record<'email' | 'login' | 'acs' | 'finish', string[]>> {
      const browser = new PageClient(t);
      const page = await browser.get('/login');
      await settle();
      const email_ = await log.of(() => browser.post('/login', { _csrf: browser.csrf(page), email }));
      const next = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec((await browser.get('/login')).text)?.[1];
      assert.ok(next?.startsWith('/sso/saml/'), `on to the IdP, not ${next}`);
      let toIdp: Response | undefined;
      const login = await log.of(async () => {
        toIdp = await browser.get(next!);
      });
      assert.equal(toIdp!.status, 303, toIdp!.text);
      idp.setUser(email);
      const post = await idp.respond(String(toIdp!.headers.location));
      let acs: Response | undefined;
      const acs_ = await log.of(async () => {
        acs = await browser.post(acsPath, Object.fromEntries(post.form));
      });
      assert.equal(acs!.status, 303, acs!.text);
      let finished: Response | undefined;
      const finish = await log.of(async () => {
        finished = await browser.get(String(acs!.headers.location));
      });
      assert.deepEqual([finished!.status, finished!.headers.location], [303, '/console'], finished!.text);
      return { email: email_, login, acs: acs_, finish };
    }

    /** one load of the connection, with its domains, testers and certificates (it was four
     *  statements: the row, then each of the three; four loads in a sign-in, 16 statements) */
    const CONNECTION = 'select sso_connections';

    it('the first sign-in (the user is made) and a later one', async () => {
      const connection = await connectIdp(t, idp, 'corp.test', 'Enabled');
      const acsPath = new URL(connection.acsUrl).pathname;
      const first = await signIn('sam@corp.test', acsPath);
      assert.deepEqual(first.email, [
        'select sessions',
        // the address's connection, and whether an account has the address (none yet)
        CONNECTION,
        'select users',
        // the session's step: on to the connection
        'update sessions',
      ]);
      assert.deepEqual(first.login, [
        // the session, read once (it was read twice)
        'select sessions',
        // the connection, judged usable (its tenant enabled)
        CONNECTION,
        'select tenants',
        // the AuthnRequest's id, kept for the ACS; the session back at the e-mail step
        'insert saml_requests',
        'update sessions',
      ]);
      const acsFirst = [
        CONNECTION,
        'select tenants',
        // the request the response answers, read once (it was read three times: by node-saml for
        // the Response's InResponseTo and again for the SubjectConfirmationData's, then by the
        // service from signed content)
        'select saml_requests',
        'begin',
        // the assertion used up (no replay), then who the NameID is
        'insert saml_assertions_used',
        'select sso_identities',
      ];
      assert.deepEqual(first.acs, [
        ...acsFirst,
        // nobody yet: a new Analyst of the connection's tenant, linked to the NameID (after
        // checking that no account elsewhere proved the address: docs/users.md)
        'select users',
        'select users',
        'insert users',
        'insert role_assignments',
        'insert audit_events',
        'insert sso_identities',
        // the domain is proven: so is the address (docs/users.md), and any account elsewhere
        // that nobody proved gives way (none here), with the proof's audit event
        'update users',
        'update users',
        'insert audit_events',
        // the request answered, with the ticket for the finish
        'update saml_requests',
        'commit',
      ]);
      const finish = [
        'select sessions',
        // the ticket's request, taken
        'delete saml_requests',
        // the user, and the connection judged again
        'select users',
        'select role_assignments',
        CONNECTION,
        'select tenants',
        // the audit event of the sign-in (user.signed_in, method sso)
        'insert audit_events',
        // the signed-in session under a new id, and the user's last sign-in
        'begin',
        'delete sessions',
        'insert sessions',
        'update users',
        'commit',
      ];
      assert.deepEqual(first.finish, finish);

      const later = await signIn('sam@corp.test', acsPath);
      // the account exists now: its tenant and roles are read with it
      assert.deepEqual(later.email, ['select sessions', CONNECTION, 'select users', 'select role_assignments', 'update sessions']);
      assert.deepEqual(later.login, first.login);
      assert.deepEqual(later.acs, [
        ...acsFirst,
        // the NameID's user, still enabled; its identity's last sign-in
        'select users',
        'select role_assignments',
        'update sso_identities',
        'update saml_requests',
        'commit',
      ]);
      assert.deepEqual(later.finish, finish);
    });
  });
}
