// The credentials console over HTTP (docs/users.md, "Console"), on both engines: the tenant
// picker; the list of a tenant's clients; create, rotate and delete as the roles allow, with the
// same authorization as the GraphQL API (an Analyst creates, an Auditor only reads, a tenant out
// of reach is refused without saying whether it exists); CSRF on every form; a secret shown once,
// in the answer to its form only (never in a URL or the session), and working at the token
// endpoint; each failure a page with its status.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, PASSWORD, setupLink, signedInUser } from '../helpers/pages.js';
import { servedRoutes } from '../helpers/routes.js';
import { createClient, rowCounts } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const { Administrator, Analyst, Auditor } = ROLE_IDS;

/** The client id and secret a secret page shows. */
function shownSecret(res: Response): { clientId: string; secret: string } {
  const clientId = /id="client_id"[^>]*value="([^"]+)"/.exec(res.text)?.[1];
  const secret = /id="client_secret"[^>]*value="([^"]+)"/.exec(res.text)?.[1];
  assert.ok(clientId && secret, `a secret page: ${res.text.slice(0, 500)}`);
  return { clientId, secret };
}

/** The checkboxes of a create form, by role name. */
const roleBoxes = (res: Response) => [...res.text.matchAll(/<label for="role-(\w+)">/g)].map((m) => m[1]);

for (const engine of transportEngines()) {
  describe(`console pages (${engine})`, () => {
    let t: TestApp;
    let partner: string;
    let child: string;
    let other: string;
    let admin: PageClient;
    let adminKey: string;

    before(async () => {
      t = await startTestApp({ engine });
      partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
      child = await createTenant(t, partner, { name: 'Acme Child' });
      other = await createTenant(t, '1', { name: 'Elsewhere Ltd' });
      ({ client: admin, key: adminKey } = await signedInUser(t, 'admin@acme.test', { tenant: partner, roles: [Administrator] }));
    });
    after(() => t.close());

    const tokenStatus = async (clientId: string, secret: string) => (await t.tokenResponse(clientId, secret)).status;

    async function create(c: PageClient, tenant: string, name: string, roles: string[]): Promise<Response> {
      const form = await c.get(`/console/credentials/new?tenant=${tenant}`);
      assert.equal(form.status, 200, form.text);
      return c.post('/console/credentials/new', {
        _csrf: c.csrf(form),
        tenant,
        name,
        ...Object.fromEntries(roles.map((id) => [`role_${id}`, id])),
      });
    }

    it('the authenticator secret is shown only during enrolment: afterwards no page, GraphQL answer or log line holds it', async () => {
      const email = 'enrolled-once@acme.test';
      const person = new PageClient(t);
      assert.equal((await person.get(await setupLink(t, email, { tenant: partner, roles: [Administrator] }))).status, 303);
      let page = await person.get('/login');
      assert.equal((await person.post('/login', { _csrf: person.csrf(page), password: PASSWORD, confirmation: PASSWORD })).status, 303);
      const enrolment = await person.get('/login');
      const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(enrolment.text)![1]!.replace(/ /g, '');
      /** the key in the text, however it is spaced or cased (a QR code's otpauth URI included) */
      const holds = (text: string) =>
        text
          .replace(/\s|%20/g, '')
          .toUpperCase()
          .includes(key);
      assert.ok(holds(enrolment.text), 'the enrolment page shows it (the control: the search finds it)');
      assert.equal((await person.post('/login', { _csrf: person.csrf(enrolment), code: totpCodeAt(key, t.clock.now()) })).status, 200);
      const logsBefore = t.logs.length;

      // every page a signed-in person can open (no path parameters), in each tenant the person reaches
      const pages = servedRoutes(t)
        .filter((r) => r.methods.includes('GET') && !/[:*]/.test(r.path))
        .map((r) => r.path);
      assert.ok(pages.includes('/login') && pages.some((p) => p.startsWith('/console')), pages.join(' '));
      for (const path of pages) {
        for (const url of [path, `${path}?tenant=${partner}`]) {
          page = await person.get(url);
          assert.ok(!holds(page.text), `${url} (${page.status}) holds the authenticator secret`);
        }
      }
      // every field of the user, as an Administrator reads it
      const fields = await t.gql(
        await t.rootToken(),
        '{ __type(name: "User") { fields { name args { name } type { kind ofType { kind ofType { kind } } } } } }',
      );
      const scalar = (ty: { kind: string; ofType?: { kind: string; ofType?: { kind: string } } }): boolean =>
        ty.kind === 'SCALAR' || ty.kind === 'ENUM' || (!!ty.ofType && scalar(ty.ofType as typeof ty));
      const names = (fields.body.data.__type.fields as { name: string; args: unknown[]; type: Parameters<typeof scalar>[0] }[])
        .filter((f) => f.args.length === 0 && scalar(f.type))
        .map((f) => f.name);
      assert.ok(names.includes('mfa_enrolled'), names.join(' '));
      const user = await t.gql(await t.rootToken(), `{ users(email: "${email}") { ${names.join(' ')} } }`, undefined, { tenant: partner });
      assert.equal(user.body.errors, undefined, user.text);
      assert.equal(user.body.data.users[0].mfa_enrolled, true, user.text);
      assert.ok(!holds(user.text), 'the users query holds the authenticator secret');
      // nor the log, since the enrolment
      assert.ok(!holds(t.logs.slice(logsBefore).join('\n')), 'a log line holds the authenticator secret');
    });

    it('any console page, signed out, leads to sign-in and back to it', async () => {
      const anonymous = new PageClient(t);
      for (const path of [
        '/console',
        `/console/credentials?tenant=${child}`,
        `/console/credentials/new?tenant=${child}`,
        `/console/credentials/rotate?tenant=${child}&client=x`,
        `/console/credentials/delete?tenant=${child}&client=x`,
      ]) {
        const res = await anonymous.get(path);
        assert.equal(res.status, 303, path);
        assert.equal(res.headers.location, `/login?return_to=${encodeURIComponent(path)}`);
      }
      // sign in from there: e-mail, password, code, and back to the credentials
      let res = await anonymous.get(`/login?return_to=${encodeURIComponent(`/console/credentials?tenant=${child}`)}`);
      res = await anonymous.post('/login', { _csrf: anonymous.csrf(res), email: 'admin@acme.test' });
      res = await anonymous.post('/login', { _csrf: anonymous.csrf(await anonymous.get('/login')), password: PASSWORD });
      t.clock.advance(30_000);
      res = await anonymous.post('/login', { _csrf: anonymous.csrf(await anonymous.get('/login')), code: totpCodeAt(adminKey, t.clock.now()) });
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, `/console/credentials?tenant=${child}`);
      assert.equal((await anonymous.get(res.headers.location as string)).status, 200);
    });

    it('the tenant picker lists the tenants where the user holds a role, and those below them', async () => {
      const res = await admin.get('/console');
      assert.equal(res.status, 200);
      assert.match(res.text, /Signed in as <strong>admin@acme\.test<\/strong>/);
      assert.match(res.text, /<form class="account" method="post" action="\/logout"><input type="hidden" name="_csrf"/);
      assert.match(
        res.text,
        new RegExp(`<a href="/console/tenant\\?tenant=${partner}">Acme Partners</a></th><td>${partner}</td><td>Administrator</td>`),
      );
      assert.match(res.text, new RegExp(`<a href="/console/tenant\\?tenant=${child}">Acme Child</a></th><td>${child}</td><td>Administrator</td>`));
      assert.doesNotMatch(res.text, /Elsewhere Ltd/);
      assert.doesNotMatch(res.text, /tenant=1"/, 'not the root tenant');

      // a role in the child only: the child, not its partner
      const { client: childOnly } = await signedInUser(t, 'child-only@acme.test', { tenant: child, roles: [Auditor] });
      const only = await childOnly.get('/console');
      assert.match(only.text, /Acme Child<\/a><\/th><td>\d+<\/td><td>Auditor<\/td>/);
      assert.doesNotMatch(only.text, /Acme Partners/);
      assert.match(only.text, /1 tenant</);

      // Support staff: the tenants that allow support access, and nothing else (not even tenant 1)
      const consenting = await createTenant(t, partner, { name: 'Consenting', supportEnabled: true });
      const { client: support } = await signedInUser(t, 'support@example.com', { tenant: '1', roles: [ROLE_IDS.Support] });
      const seen = await support.get('/console');
      assert.deepEqual(
        [...seen.text.matchAll(/<th scope="row"><a href="[^"]+">([^<]+)<\/a><\/th><td>(\d+)<\/td><td>([^<]*)<\/td>/g)].map((m) => m.slice(1)),
        [['Consenting', consenting, 'Support']],
      );
    });

    it("the list shows the tenant's clients: name, client id, role names, creation and last use", async () => {
      const seeded = await createClient(t, await t.rootToken(), 'Nightly export', { tenant: child, roles: [Analyst, Auditor] });
      let res = await admin.get(`/console/credentials?tenant=${child}`);
      assert.equal(res.status, 200);
      assert.match(res.text, /<title>API credentials of Acme Child · /);
      assert.match(
        res.text,
        /<th scope="col">Name<\/th><th scope="col">Client ID<\/th><th scope="col">Roles<\/th><th scope="col">Created<\/th><th scope="col">Last used<\/th>/,
      );
      const row = new RegExp(
        `<th scope="row">Nightly export</th>\\s*<td data-label="Client ID"><code>${seeded.clientId}</code></td>\\s*<td data-label="Roles">Analyst, Auditor</td>\\s*<td data-label="Created"><time datetime="([^"]+)">[^<]+ UTC</time></td>\\s*<td data-label="Last used">never</td>`,
      );
      assert.match(res.text, row);
      assert.equal(row.exec(res.text)![1], t.clock.now().toISOString());

      t.clock.advance(60_000);
      assert.equal(await tokenStatus(seeded.clientId, seeded.secret), 200);
      await t.service.lastUsed.flush();
      res = await admin.get(`/console/credentials?tenant=${child}`);
      assert.match(
        res.text,
        new RegExp(`<td data-label="Last used"><time datetime="${t.clock.now().toISOString()}">[^<]+ UTC</time></td>\\s*<td data-label="Secrets">`),
      );
    });

    it('an Administrator creates a credential: the secret is shown once, not cached, and works', async () => {
      const form = await admin.get(`/console/credentials/new?tenant=${child}`);
      assert.deepEqual(roleBoxes(form), ['Administrator', 'Analyst', 'Responder', 'Auditor'], 'the tenant roles, no vendor roles');
      assert.match(form.text, /<fieldset>\s*<legend>Roles<\/legend>/);
      assert.match(form.text, /<label for="name">Name<\/label>/);
      assert.match(form.text, /id="role-Analyst" name="role_[^"]+" value="[^"]+" checked>/, 'Analyst by default');

      const res = await create(admin, child, 'Ingest pipeline', [Administrator, Auditor]);
      assert.equal(res.status, 200);
      assert.equal(res.headers.location, undefined, 'no redirect: the secret is in this answer only');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'.*script-src 'self'; require-trusted-types-for 'script'$/);
      assert.match(res.text, /<script src="\/ui\/copy\.js" defer><\/script>/);
      assert.match(res.text, /<button type="button" class="copy" data-copy="client_secret" hidden>Copy secret<\/button>/);
      assert.match(res.text, /shown only on this page/);
      assert.doesNotMatch(res.text, /previous secret/, 'a new client has no previous secret');
      assert.doesNotMatch(res.text, /<script>|style="/, 'nothing inline');
      const { clientId, secret } = shownSecret(res);
      assert.match(secret, /^gatehouse_cs_[0-9A-Za-z]{49}$/);
      const token = await t.tokenResponse(clientId, secret);
      assert.equal(token.status, 200, token.text);
      assert.equal(token.body.scope, 'Administrator Auditor');
      // its audit event names the person, the request and the address, as the API's do
      const events = await sql<{ actor_kind: string; request_id: string | null; address: string | null; details: unknown }>`
        select actor_kind, request_id, address, details from audit_events where action = 'client.created' and tenant_id = ${child}`.execute(
        t.db.kysely,
      );
      const made = events.rows.find((e) => JSON.stringify(e.details).includes(`"Ingest pipeline"`));
      assert.ok(made, JSON.stringify(events.rows));
      assert.equal(made.actor_kind, 'user');
      assert.ok(made.request_id && made.request_id.length > 0, 'the request id');
      assert.ok(made.address && made.address.length > 0, 'the address');

      const list = await admin.get(`/console/credentials?tenant=${child}`);
      assert.match(
        list.text,
        new RegExp(
          `<th scope="row">Ingest pipeline</th>\\s*<td data-label="Client ID"><code>${clientId}</code></td>\\s*<td data-label="Roles">Administrator, Auditor</td>`,
        ),
      );
      assert.ok(!list.text.includes(secret), 'never shown again');
      assert.ok(list.text.includes(`gatehouse_cs_…${secret.slice(-4)}`), 'named by its hint only');
      assert.doesNotMatch(list.text, /gatehouse_cs_[0-9A-Za-z]{5}/, 'no more of any secret than its hint');
      const states = await sql<{ state: unknown }>`select state from sessions`.execute(t.db.kysely);
      assert.doesNotMatch(JSON.stringify(states.rows), /gatehouse_cs_/, 'no secret in any session');

      const script = await t.request({ method: 'GET', url: '/ui/copy.js' });
      assert.equal(script.status, 200);
      assert.match(String(script.headers['content-type']), /^text\/javascript/);
      assert.equal(script.headers['cache-control'], 'public, max-age=3600');
      // every other page keeps the CSP without scripts
      assert.doesNotMatch(String(list.headers['content-security-policy']), /script-src/);
      assert.doesNotMatch(list.text, /<script/);
    });

    it('an Analyst creates a credential with the roles it holds, and no more', async () => {
      const { client: analyst } = await signedInUser(t, 'analyst@acme.test', { tenant: child, roles: [Analyst] });
      const form = await analyst.get(`/console/credentials/new?tenant=${child}`);
      assert.deepEqual(roleBoxes(form), ['Analyst'], 'only the roles it may give');
      const res = await create(analyst, child, 'Analyst tool', [Analyst]);
      assert.equal(res.status, 200, res.text);
      const { clientId, secret } = shownSecret(res);
      assert.equal(await tokenStatus(clientId, secret), 200);

      const before = await rowCounts(t);
      const forged = await analyst.post('/console/credentials/new', {
        _csrf: analyst.csrf(form),
        tenant: child,
        name: 'Escalation',
        [`role_${Administrator}`]: Administrator,
      });
      assert.equal(forged.status, 403);
      assert.match(
        forged.text,
        /role="alert">You cannot give a credential the role Administrator: you may give only roles you could hold yourself\./,
      );
      assert.doesNotMatch(forged.text, /roles query|assignable/, 'no API wording');
      assert.deepEqual(await rowCounts(t), before, 'nothing written (but the refusal event: rowCounts leaves it out)');
    });

    it('an Auditor sees the list, no forms, and every change is refused', async () => {
      const tenant = await createTenant(t, partner, { name: 'Audited' });
      const seeded = await createClient(t, await t.rootToken(), 'Audited client', { tenant });
      const { client: auditor } = await signedInUser(t, 'auditor@acme.test', { tenant, roles: [Auditor] });
      const list = await auditor.get(`/console/credentials?tenant=${tenant}`);
      assert.equal(list.status, 200);
      assert.match(list.text, /Audited client/);
      assert.doesNotMatch(list.text, /Create a credential|Rotate secret|>Delete</);
      assert.match(list.text, /let you see its credentials, not change them/);
      const refused = { new: 'create API clients', rotate: 'rotate client secrets', delete: 'delete API clients' };
      for (const [path, what] of Object.entries(refused)) {
        const res = await auditor.get(`/console/credentials/${path}?tenant=${tenant}&client=${seeded.clientId}`);
        assert.equal(res.status, 403, path);
        assert.match(res.text, new RegExp(`role="alert">Your roles in Audited do not allow you to ${what}\\.`));
        assert.match(res.text, /ask an Administrator of Audited for a role that allows it/);
        assert.match(res.text, /Signed in as <strong>auditor@acme\.test<\/strong>/, 'the header stays');
      }
      const before = await rowCounts(t);
      const csrf = auditor.csrf(list);
      const posts: [string, Record<string, string>][] = [
        ['new', { name: 'Nope', [`role_${Auditor}`]: Auditor }],
        ['rotate', { client: seeded.clientId, secret: seeded.secret }],
        ['delete', { client: seeded.clientId }],
      ];
      for (const [path, form] of posts) {
        const res = await auditor.post(`/console/credentials/${path}`, { _csrf: csrf, tenant, ...form });
        assert.equal(res.status, 403, path);
        assert.match(res.text, /role="alert">Your roles in Audited do not allow you to /);
      }
      // nothing changed (rowCounts leaves refusal events out); each refusal is an audit event of
      // the tenant, naming the form
      assert.deepEqual(await rowCounts(t), before);
      const refusals = await sql<{ target_id: string; actor_kind: string; outcome: string; details: { via: string } }>`
        select target_id, actor_kind, outcome, details from audit_events
         where action = 'authorization.refused' and tenant_id = ${tenant} order by target_id`.execute(t.db.kysely);
      assert.deepEqual(
        refusals.rows.map((r) => [r.target_id, r.actor_kind, r.outcome, r.details.via]),
        ['delete', 'new', 'rotate'].map((path) => [`POST /console/credentials/${path}`, 'user', 'refused', 'console']),
      );
      assert.equal(await tokenStatus(seeded.clientId, seeded.secret), 200);
    });

    it('a tenant out of reach is refused alike whether it exists or not', async () => {
      const { client: childAdmin } = await signedInUser(t, 'child-admin@acme.test', { tenant: child, roles: [Administrator] });
      assert.equal((await childAdmin.get(`/console/credentials?tenant=${child}`)).status, 200);
      const answers: string[] = [];
      for (const tenant of [other, partner, '1', '987654321']) {
        const res = await childAdmin.get(`/console/credentials?tenant=${tenant}`);
        assert.equal(res.status, 403, tenant);
        assert.match(res.text, /<h1>Tenant not found<\/h1>/);
        assert.match(
          res.text,
          new RegExp(`role="alert">No tenant ${tenant} is visible to you\\.</p>\\s*<p>Check the id, or pick a tenant from your list\\.</p>`),
        );
        answers.push(res.text.replace(`No tenant ${tenant} `, 'No tenant ID ').replace(/name="_csrf" value="[^"]+"/, ''));
      }
      assert.equal(new Set(answers).size, 1, 'the same page, but for the id asked for');
      assert.doesNotMatch(answers[0]!, /Elsewhere|Acme Partners/);
      assert.match(answers[0]!, /Signed in as <strong>child-admin@acme\.test<\/strong>/, 'the header stays');

      const before = await rowCounts(t);
      const list = await childAdmin.get(`/console/credentials?tenant=${child}`);
      const res = await childAdmin.post('/console/credentials/new', {
        _csrf: childAdmin.csrf(list),
        tenant: other,
        name: 'x',
        [`role_${Analyst}`]: Analyst,
      });
      assert.equal(res.status, 403);
      assert.deepEqual(await rowCounts(t), before);

      const malformed = await childAdmin.get('/console/credentials?tenant=abc');
      assert.equal(malformed.status, 400);
      assert.match(malformed.text, /role="alert">&quot;abc&quot; is not a tenant id: tenant ids are numbers\./);
      assert.match(malformed.text, /Signed in as <strong>child-admin@acme\.test<\/strong>/);
    });

    it('a tenant that does not exist is, for the root Administrator too, one not visible: no advice to ask its Administrator', async () => {
      const { client: root } = await signedInUser(t, 'root-admin@example.com', { tenant: '1', roles: [Administrator] });
      const res = await root.get('/console/credentials?tenant=999');
      assert.equal(res.status, 403);
      assert.match(res.text, /role="alert">No tenant 999 is visible to you\.<\/p>\s*<p>Check the id, or pick a tenant from your list\.<\/p>/);
      assert.doesNotMatch(res.text, /Administrator of/);
      assert.match(res.text, /Signed in as <strong>root-admin@example\.com<\/strong>/);
      assert.match(res.text, /<form class="account" method="post" action="\/logout">/, 'sign out is there');
      assert.match(res.text, /<a href="\/console">Back to your tenants<\/a>/);
    });

    it('an address under /console that does not exist is a page saying so', async () => {
      const res = await admin.get('/console/nothing-here');
      assert.equal(res.status, 404);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.text, /<h1>Page not found<\/h1>/);
      assert.match(res.text, /Signed in as <strong>admin@acme\.test<\/strong>/, 'under the header');
      // signed out: the same page, without the header
      const anonymous = await new PageClient(t).get('/console/nothing-here');
      assert.equal(anonymous.status, 404);
      assert.match(anonymous.text, /<h1>Page not found<\/h1>/);
      assert.doesNotMatch(anonymous.text, /Signed in as/);
    });

    it('a form larger than the pages read is a page naming the limit, under the header; nothing is made', async () => {
      const before = await rowCounts(t);
      const form = await admin.get(`/console/credentials/new?tenant=${partner}`);
      const res = await admin.post('/console/credentials/new', { _csrf: admin.csrf(form), tenant: partner, name: 'x'.repeat(20_000) });
      assert.equal(res.status, 413);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.text, /The request body is larger than 16 KiB/, "the limit the pages apply, not the API's");
      assert.match(res.text, /Signed in as <strong>admin@acme\.test<\/strong>/, 'under the header');
      assert.deepEqual(await rowCounts(t), before);
    });

    it("every console form needs the session's CSRF token; without it nothing changes", async () => {
      const tenant = await createTenant(t, partner, { name: 'Forms' });
      const seeded = await createClient(t, await t.rootToken(), 'Guarded', { tenant });
      const before = await rowCounts(t);
      const forms: [string, Record<string, string>][] = [
        ['/console/credentials/new', { tenant, name: 'Forged', [`role_${Analyst}`]: Analyst }],
        ['/console/credentials/rotate', { tenant, client: seeded.clientId, secret: seeded.secret }],
        ['/console/credentials/delete', { tenant, client: seeded.clientId }],
        ['/logout', {}],
      ];
      for (const [path, form] of forms) {
        for (const csrf of [undefined, 'x'.repeat(43), '']) {
          const res = await admin.post(path, csrf === undefined ? form : { ...form, _csrf: csrf });
          assert.equal(res.status, 403, `${path} with ${csrf === undefined ? 'no' : 'a wrong'} token`);
          assert.match(res.text, /This form has expired/);
        }
      }
      assert.deepEqual(await rowCounts(t), before);
      assert.equal(await tokenStatus(seeded.clientId, seeded.secret), 200);
      assert.equal((await admin.get('/console')).status, 200, 'still signed in');
    });

    it('rotate asks for the current secret; the new one works and the old one stops', async () => {
      const tenant = await createTenant(t, partner, { name: 'Rotation' });
      const { clientId, secret: first } = shownSecret(await create(admin, tenant, 'Rotating', [Analyst]));
      const list = await admin.get(`/console/credentials?tenant=${tenant}`);
      assert.match(list.text, new RegExp(`<a href="/console/credentials/rotate\\?tenant=${tenant}&amp;client=${clientId}">Rotate secret`));
      const form = await admin.get(`/console/credentials/rotate?tenant=${tenant}&client=${clientId}`);
      assert.equal(form.status, 200);
      assert.match(form.text, /<label for="secret">Current secret<\/label>\s*<input id="secret" name="secret" type="password"/);
      assert.match(form.text, /<label for="grace">/);

      const before = await rowCounts(t);
      const wrong = await admin.post('/console/credentials/rotate', {
        _csrf: admin.csrf(form),
        tenant,
        client: clientId,
        secret: 'not it',
        grace: '86400',
      });
      assert.equal(wrong.status, 400);
      assert.match(wrong.text, /role="alert"><p>That is not the current secret of this client\.<\/p><p>Paste the secret the client uses now/);
      assert.doesNotMatch(wrong.text, /secret is not the current secret/, 'not the API wording');
      assert.match(wrong.text, /<input id="secret"/, 'the form again');
      assert.match(wrong.text, /<option value="86400" selected>/, 'with the grace period chosen');
      assert.deepEqual(await rowCounts(t), before);

      const rotated = await admin.post('/console/credentials/rotate', {
        _csrf: admin.csrf(form),
        tenant,
        client: clientId,
        secret: first,
        grace: '0',
      });
      assert.equal(rotated.status, 200, rotated.text);
      assert.equal(rotated.headers.location, undefined);
      assert.equal(rotated.headers['cache-control'], 'no-store');
      const second = shownSecret(rotated);
      assert.equal(second.clientId, clientId, 'the same client');
      assert.match(rotated.text, /The previous secret no longer obtains tokens\./);
      assert.notEqual(second.secret, first);
      assert.equal(await tokenStatus(clientId, first), 401, 'the old secret stops');
      assert.equal(await tokenStatus(clientId, second.secret), 200, 'the new one works');

      // with a grace period the old one keeps working until it ends, and the page says until when
      const graced = await admin.post('/console/credentials/rotate', {
        _csrf: admin.csrf(form),
        tenant,
        client: clientId,
        secret: second.secret,
        grace: '3600',
      });
      const third = shownSecret(graced);
      assert.match(graced.text, new RegExp(`keeps working until <time datetime="${new Date(t.clock.now().getTime() + 3600_000).toISOString()}"`));
      assert.equal(await tokenStatus(clientId, second.secret), 200);
      assert.equal(await tokenStatus(clientId, third.secret), 200);
    });

    it('delete asks first, then the client is gone and its secret stops', async () => {
      const tenant = await createTenant(t, partner, { name: 'Deletion' });
      const { clientId, secret } = shownSecret(await create(admin, tenant, 'Doomed', [Analyst]));
      const confirm = await admin.get(`/console/credentials/delete?tenant=${tenant}&client=${clientId}`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, /<h1>Delete client Doomed\?<\/h1>/);
      assert.match(confirm.text, /This cannot be undone/);
      assert.equal(await tokenStatus(clientId, secret), 200, 'asking changes nothing');

      const done = await admin.post('/console/credentials/delete', { _csrf: admin.csrf(confirm), tenant, client: clientId });
      assert.equal(done.status, 303);
      assert.equal(done.headers.location, `/console/credentials?tenant=${tenant}`);
      let list = await admin.get(done.headers.location as string);
      assert.match(list.text, new RegExp(`<p class="notice" role="status">Client Doomed \\(${clientId}\\) was deleted\\.`));
      assert.doesNotMatch(list.text, /<th scope="row">Doomed<\/th>/);
      assert.match(list.text, /This tenant has no API clients/);
      assert.equal(await tokenStatus(clientId, secret), 401);
      list = await admin.get(done.headers.location as string);
      assert.doesNotMatch(list.text, /class="notice"/, 'the notice shows once');

      const again = await admin.post('/console/credentials/delete', { _csrf: admin.csrf(confirm), tenant, client: clientId });
      assert.equal(again.status, 404);
      assert.match(again.text, /<h1>Client not found<\/h1>/);
      assert.match(again.text, /role="alert">No client with this id exists in Deletion\./);
      assert.match(again.text, new RegExp(`<li><a href="/console/tenant\\?tenant=${tenant}">Deletion</a></li>`), 'the header names the tenant');
      assert.equal((await admin.get(`/console/credentials/rotate?tenant=${tenant}&client=${clientId}`)).status, 404);
    });

    it('a form that fails shows what went wrong: 400, 409, 429 with Retry-After', async () => {
      const tenant = await createTenant(t, partner, { name: 'Failures' });
      const empty = await create(admin, tenant, '   ', [Analyst]);
      assert.equal(empty.status, 400);
      assert.match(empty.text, /role="alert"><p>The name must not be empty\.<\/p>/);
      const none = await create(admin, tenant, 'No roles', []);
      assert.equal(none.status, 400);
      assert.match(none.text, /Choose at least one role/);
      assert.match(none.text, /value="No roles"/, 'what was typed is kept');

      assert.equal((await create(admin, tenant, 'Twin', [Analyst])).status, 200);
      const twin = await create(admin, tenant, 'TWIN', [Analyst]);
      assert.equal(twin.status, 409);
      assert.match(
        twin.text,
        /role="alert"><p>Another client of Failures already has this name \(names are compared ignoring case\)\.<\/p><p>Choose another name\.<\/p>/,
      );
      assert.doesNotMatch(twin.text, /Existing client/, 'not the API wording');

      for (let i = 0; i < t.config.clientCreateLimit - 1; i++) await createClient(t, await t.rootToken(), `filler ${i}`, { tenant });
      const limited = await create(admin, tenant, 'One too many', [Analyst]);
      assert.equal(limited.status, 429);
      assert.match(String(limited.headers['retry-after']), /^\d+$/);
      assert.match(limited.text, /<h1>Too many new credentials<\/h1>/);
      assert.match(limited.text, /At most \d+ clients may be created per tenant per hour, and Failures has reached that\./);
      assert.match(limited.text, /Try again in 60 minutes\./);
      assert.match(limited.text, /Signed in as <strong>admin@acme\.test<\/strong>/);
    });

    it('vendor roles are offered only in the root tenant', async () => {
      const { client: vendor } = await signedInUser(t, 'vendor-admin@example.com', { tenant: '1', roles: [Administrator] });
      assert.deepEqual(roleBoxes(await vendor.get('/console/credentials/new?tenant=1')), [
        'Administrator',
        'Analyst',
        'Responder',
        'Auditor',
        'Operations',
        'Support',
      ]);
      assert.deepEqual(roleBoxes(await vendor.get(`/console/credentials/new?tenant=${child}`)), ['Administrator', 'Analyst', 'Responder', 'Auditor']);
    });
  });
}
