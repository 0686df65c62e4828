// The users console over HTTP (src/http/pages/console/users.ts): the list with its filters; invite
// with the set-up link shown once (and working); a user's page with roles given (with an end) and
// removed; a partner's own user given a role in a tenant below from its page (`in`) and removed
// there, refused in a tenant above, beside, unknown or out of reach, and where the viewer's roles
// do not allow it; disable, enable, reset sign-in (a new link) and delete after a confirmation; bad input
// shown again in words, nothing written; CSRF on every form; signed out, the way to sign in; an
// Auditor sees, and is refused every change.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { sql } from 'kysely';
import { rowCounts } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const { Administrator, Analyst, Auditor, Responder } = ROLE_IDS;

/** The set-up link a page shows (path and query). */
function shownLink(res: Response): string {
  const m = /id="setup_url"[^>]*value="([^"]+)"/.exec(res.text);
  assert.ok(m, `a set-up link page: ${res.text.slice(0, 400)}`);
  const url = new URL(m[1]!.replace(/&amp;/g, '&'));
  return url.pathname + url.search;
}

/** Sets up an account through a link: password, authenticator; the signed-in browser. */
async function enrol(t: TestApp, link: string, password = PASSWORD): Promise<{ client: PageClient; key: string }> {
  const client = new PageClient(t);
  assert.equal((await client.get(link)).status, 303);
  let page = await client.get('/login');
  assert.equal((await client.post('/login', { _csrf: client.csrf(page), password, confirmation: password })).status, 303);
  page = await client.get('/login');
  const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(page.text)![1]!.replace(/ /g, '');
  const done = await client.post('/login', { _csrf: client.csrf(page), code: totpCodeAt(key, t.clock.now()) });
  assert.equal(done.status, 200, done.text.slice(0, 300));
  return { client, key };
}

const userIdIn = (res: Response) => /name="user" value="([0-9a-f-]{36})"/.exec(res.text)?.[1];

for (const engine of transportEngines()) {
  describe(`console users pages (${engine})`, () => {
    let t: TestApp;
    let partner: string;
    let child: string;
    let admin: PageClient;

    before(async () => {
      t = await startTestApp({ engine });
      partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
      child = await createTenant(t, partner, { name: 'Acme Child' });
      ({ client: admin } = await signedInUser(t, 'admin@acme.test', { tenant: partner, roles: [Administrator] }));
    });
    after(() => t.close());

    async function invite(tenant: string, email: string, role: string = Analyst): Promise<Response> {
      const form = await admin.get(`/console/users/invite?tenant=${tenant}`);
      assert.equal(form.status, 200, form.text);
      return admin.post('/console/users/invite', { _csrf: admin.csrf(form), tenant, email, display_name: '', role });
    }

    const gqlUser = async (id: string) => {
      const res = await t.gql(
        await t.rootToken(),
        'query($id: ID!) { user(id: $id) { email disabled_at role_assignments { id tenant_id role_id expires_at } } }',
        { id },
      );
      return res.body.data?.user;
    };

    it('signed out, every page leads to sign-in, and every form too', async () => {
      const anonymous = new PageClient(t);
      for (const path of [
        `/console/users?tenant=${child}`,
        `/console/users/invite?tenant=${child}`,
        `/console/users/user?tenant=${child}&user=x`,
        `/console/users/delete?tenant=${child}&user=x`,
      ]) {
        const res = await anonymous.get(path);
        assert.equal(res.status, 303, path);
        assert.equal(res.headers.location, `/login?return_to=${encodeURIComponent(path)}`);
      }
    });

    it('the header has the Users tab and the way to your account', async () => {
      const res = await admin.get(`/console/users?tenant=${child}`);
      assert.equal(res.status, 200);
      assert.match(res.text, /<a href="\/console\/users\?tenant=\d+" aria-current="page">Users<\/a>/);
      assert.match(res.text, /<a href="\/console\/account">Your account<\/a>/);
      assert.match(res.text, /Invite a user/);
    });

    it('invites a user: bad input shown again, the link shown once, and it works', async () => {
      const before = await rowCounts(t);
      let res = await invite(child, 'not an address');
      assert.equal(res.status, 400);
      assert.match(res.text, /role="alert"><p>&quot;not an address&quot; is not an e-mail address\.<\/p><p>Enter one address/);
      assert.match(res.text, /value="not an address"/, 'what was typed is kept');
      assert.deepEqual(await rowCounts(t), before, 'nothing written');

      res = await invite(child, 'new.person@acme.test', Responder);
      assert.equal(res.status, 200, res.text);
      assert.match(res.text, /shown only on this page/);
      assert.match(res.text, /data-copy="setup_url"/);
      assert.match(res.text, /<script src="\/ui\/copy\.js"/);
      const link = shownLink(res);
      // nowhere else: not on the list, nor the user's page
      const list = await admin.get(`/console/users?tenant=${child}`);
      assert.match(list.text, /new\.person@acme\.test/);
      assert.match(list.text, /Set-up pending/);
      assert.doesNotMatch(list.text, /token=/);
      // the same address again: taken
      res = await invite(child, 'New.Person@acme.test');
      assert.equal(res.status, 409);
      assert.match(res.text, /A user with this e-mail address exists already/);
      // the link sets the account up, and the person signs in
      const { client } = await enrol(t, link);
      const home = await client.get('/console');
      assert.match(home.text, /Signed in as <strong>new\.person@acme\.test<\/strong>/);
      assert.notEqual((await new PageClient(t).get(link)).status, 303, 'the link worked once');
    });

    it('a user’s page: a role with an end, refused in the past, then removed; disable, enable', async () => {
      const made = await invite(child, 'roles@acme.test');
      const link = shownLink(made);
      const { client: person } = await enrol(t, link);
      const list = await admin.get(`/console/users?tenant=${child}&email=roles%40acme.test`);
      const id = /href="\/console\/users\/user\?tenant=\d+&amp;user=([0-9a-f-]{36})">roles@acme\.test/.exec(list.text)?.[1];
      assert.ok(id, list.text);
      let page = await admin.get(`/console/users/user?tenant=${child}&user=${id}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /Analyst/);
      assert.equal(userIdIn(page), id);

      // an end in the past: the form again, nothing written
      const before = await rowCounts(t);
      let res = await admin.post('/console/users/roles', {
        _csrf: admin.csrf(page),
        tenant: child,
        user: id,
        role: Auditor,
        expires: '2000-01-01T00:00',
      });
      assert.equal(res.status, 400);
      assert.match(res.text, /The end of the role is in the past\./);
      assert.match(res.text, /value="2000-01-01T00:00"/);
      res = await admin.post('/console/users/roles', { _csrf: admin.csrf(page), tenant: child, user: id, role: Auditor, expires: 'tomorrow' });
      assert.equal(res.status, 400);
      assert.match(res.text, /The end of the role is not a date and time\./);
      res = await admin.post('/console/users/roles', { _csrf: admin.csrf(page), tenant: child, user: id, role: 'bogus', expires: '' });
      assert.equal(res.status, 400);
      assert.match(res.text, /Choose one of the roles the form offers\./);
      assert.deepEqual(await rowCounts(t), before);

      const end = new Date(t.clock.now().getTime() + 7 * 86_400_000).toISOString().slice(0, 16);
      res = await admin.post('/console/users/roles', { _csrf: admin.csrf(page), tenant: child, user: id, role: Auditor, expires: end });
      assert.equal(res.status, 303, res.text);
      page = await admin.get(res.headers.location as string);
      assert.match(page.text, /roles@acme\.test now holds Auditor in Acme Child until the time given\./);
      let read = await gqlUser(id);
      const auditor = read.role_assignments.find((a: { role_id: string }) => a.role_id === Auditor);
      assert.equal(auditor.expires_at, `${end}:00.000Z`);

      // remove it
      const assignment = new RegExp(`name="assignment" value="${auditor.id}"`);
      assert.match(page.text, assignment);
      res = await admin.post('/console/users/roles/remove', { _csrf: admin.csrf(page), tenant: child, user: id, assignment: auditor.id });
      assert.equal(res.status, 303);
      read = await gqlUser(id);
      assert.equal(
        read.role_assignments.some((a: { role_id: string }) => a.role_id === Auditor),
        false,
      );

      // disable: the person's session ends; enable: they may sign in again
      assert.equal((await person.get('/console')).status, 200);
      res = await admin.post('/console/users/disable', { _csrf: admin.csrf(page), tenant: child, user: id });
      assert.equal(res.status, 303);
      page = await admin.get(res.headers.location as string);
      assert.match(page.text, /is disabled/);
      assert.match(page.text, /<dd>Disabled<\/dd>/);
      assert.notEqual((await gqlUser(id)).disabled_at, null);
      assert.equal((await person.get('/console')).status, 303, 'signed out');
      const filtered = await admin.get(`/console/users?tenant=${child}&status=disabled`);
      assert.match(filtered.text, /roles@acme\.test/);
      assert.doesNotMatch(filtered.text, /new\.person@acme\.test/);
      res = await admin.post('/console/users/enable', { _csrf: admin.csrf(page), tenant: child, user: id });
      assert.equal(res.status, 303);
      assert.equal((await gqlUser(id)).disabled_at, null);
    });

    it('resets a user’s sign-in (a new link, once) and deletes a user after confirming', async () => {
      const made = await invite(child, 'reset@acme.test');
      await enrol(t, shownLink(made));
      const list = await admin.get(`/console/users?tenant=${child}&email=reset%40acme.test`);
      const id = /user=([0-9a-f-]{36})">reset@acme\.test/.exec(list.text)![1]!;
      const page = await admin.get(`/console/users/user?tenant=${child}&user=${id}`);
      let res = await admin.post('/console/users/reset', { _csrf: admin.csrf(page), tenant: child, user: id });
      assert.equal(res.status, 200);
      assert.match(res.text, /were cleared/);
      const again = shownLink(res);
      t.clock.advance(30_000);
      await enrol(t, again, 'another long unusual passphrase');

      const confirm = await admin.get(`/console/users/delete?tenant=${child}&user=${id}`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, /This cannot be undone/);
      res = await admin.post('/console/users/delete', { _csrf: admin.csrf(confirm), tenant: child, user: id });
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, `/console/users?tenant=${child}`);
      const after = await admin.get(res.headers.location as string);
      assert.match(after.text, /reset@acme\.test was deleted/);
      assert.equal(await gqlUser(id), null);
      const gone = await admin.get(`/console/users/user?tenant=${child}&user=${id}`);
      assert.equal(gone.status, 404);
      assert.match(gone.text, /No user with this id belongs to Acme Child\./);
    });

    it('filters by role, sign-in and last sign-in', async () => {
      await invite(child, 'never@acme.test', Responder);
      const byRole = await admin.get(`/console/users?tenant=${child}&role=${Responder}&last=never`);
      assert.match(byRole.text, /never@acme\.test/);
      assert.doesNotMatch(byRole.text, /roles@acme\.test/);
      const sso = await admin.get(`/console/users?tenant=${child}&signin=sso`);
      assert.match(sso.text, /No user matches the filters/);
      const pending = await admin.get(`/console/users?tenant=${child}&status=pending`);
      assert.match(pending.text, /never@acme\.test/);
      assert.doesNotMatch(pending.text, /roles@acme\.test/);
      const bogus = await admin.get(`/console/users?tenant=${child}&status=bogus&role=nope`);
      assert.equal(bogus.status, 200, 'an unknown choice is no filter');
      assert.match(bogus.text, /roles@acme\.test/);
      const recent = await admin.get(`/console/users?tenant=${child}&last=30d`);
      assert.match(recent.text, /roles@acme\.test/);
      assert.doesNotMatch(recent.text, /never@acme\.test/);
    });

    it('a partner’s own user is given a role in a tenant below from its page, and it is removed there', async () => {
      const made = await invite(partner, 'mssp@acme.test', Auditor);
      assert.equal(made.status, 200, made.text);
      const list = await admin.get(`/console/users?tenant=${partner}&email=mssp%40acme.test`);
      const id = /user=([0-9a-f-]{36})">mssp@acme\.test/.exec(list.text)![1]!;
      let page = await admin.get(`/console/users/user?tenant=${partner}&user=${id}`);
      assert.equal(page.status, 200);
      // where the role is given: this tenant unless a tenant below is named (its children offered)
      assert.match(page.text, /<input id="in" name="in" type="text"[^>]* list="in-below">/);
      assert.match(page.text, new RegExp(`<option value="${child}">Acme Child</option>`));
      assert.match(page.text, /Leave it empty to give the role in Acme Partners, the user’s home tenant\./);

      let res = await admin.post('/console/users/roles', {
        _csrf: admin.csrf(page),
        tenant: partner,
        user: id,
        role: Analyst,
        expires: '',
        in: child,
      });
      assert.equal(res.status, 303, res.text.slice(0, 600));
      assert.equal(res.headers.location, `/console/users/user?tenant=${partner}&user=${id}`);
      page = await admin.get(res.headers.location as string);
      assert.match(page.text, /mssp@acme\.test now holds Analyst in Acme Child\./);
      // the role in the child, named by its name, with its own Remove form (acting there)
      let read = await gqlUser(id);
      const given = read.role_assignments.find((a: { tenant_id: string }) => a.tenant_id === child);
      assert.equal(given?.role_id, Analyst);
      assert.match(page.text, /<th scope="row">Analyst<\/th>\s*<td data-label="Tenant">Acme Child<\/td>/);
      assert.match(page.text, new RegExp(`name="in" value="${child}"><input type="hidden" name="assignment" value="${given.id}">`));
      // the principal the user's token would carry acts as an Analyst in the child
      const principal = await t.service.store.principals.findUserPrincipal(id);
      assert.ok(principal, 'the user’s principal');
      assert.ok(
        principal.assignments.some((a) => a.tenantId === child && a.roleId === Analyst),
        'Analyst in the child',
      );

      res = await admin.post('/console/users/roles/remove', { _csrf: admin.csrf(page), tenant: partner, user: id, assignment: given.id, in: child });
      assert.equal(res.status, 303, res.text.slice(0, 600));
      page = await admin.get(res.headers.location as string);
      assert.match(page.text, /The role was removed from mssp@acme\.test in Acme Child\./);
      read = await gqlUser(id);
      assert.deepEqual(
        read.role_assignments.map((a: { tenant_id: string; role_id: string }) => [a.tenant_id, a.role_id]),
        [[partner, Auditor]],
      );
    });

    it('a role is refused in a tenant above, beside, unknown or out of reach, in words, writing nothing', async () => {
      const made = await invite(partner, 'where@acme.test', Analyst);
      assert.equal(made.status, 200, made.text);
      const list = await admin.get(`/console/users?tenant=${partner}&email=where%40acme.test`);
      const id = /user=([0-9a-f-]{36})">where@acme\.test/.exec(list.text)![1]!;
      const beside = await createTenant(t, '1', { name: 'Beside' });
      const page = await admin.get(`/console/users/user?tenant=${partner}&user=${id}`);
      const { client: vendor } = await signedInUser(t, 'vendor-admin@vendor.test', { tenant: '1', roles: [Administrator] });
      const vendorPage = await vendor.get(`/console/users/user?tenant=${partner}&user=${id}`);
      assert.equal(vendorPage.status, 200, vendorPage.text.slice(0, 600));
      const before = await rowCounts(t);
      const post = (client: PageClient, form: Response, given: string) =>
        client.post('/console/users/roles', { _csrf: client.csrf(form), tenant: partner, user: id, role: Responder, expires: '', in: given });
      /** what went wrong, on the problem page or above the form */
      const words = (res: Response) => /class="error" role="alert">(?:<p>)?([^<]*)<\/p>/.exec(res.text)?.[1];

      // the partner's Administrator: a tenant its roles do not reach, or none, is one it cannot see
      for (const given of [beside, '1', '999999']) {
        const res = await post(admin, page, given);
        assert.equal(res.status, 403, given);
        assert.equal(words(res), `No tenant ${given} is visible to you.`, given);
      }
      // not a tenant id: the form again, with what was entered
      let res = await post(admin, page, 'acme');
      assert.equal(res.status, 400);
      assert.match(res.text, /&quot;acme&quot; is not a tenant id: tenant ids are numbers\./);
      assert.match(res.text, /<input id="in" name="in"[^>]* value="acme"/);

      // the vendor's Administrator reaches every tenant: above and beside are the user's rule
      for (const given of ['1', beside]) {
        res = await post(vendor, vendorPage, given);
        assert.equal(res.status, 400, given);
        assert.equal(words(res), 'Roles can be given only in Acme Partners and the tenants below it.', given);
        assert.match(res.text, new RegExp(`<input id="in" name="in"[^>]* value="${given}"`));
      }
      // removal acts in the tenant named too: an assignment of the child is not one of the partner's
      const own = (await gqlUser(id)).role_assignments[0].id as string;
      res = await vendor.post('/console/users/roles/remove', {
        _csrf: vendor.csrf(vendorPage),
        tenant: partner,
        user: id,
        assignment: own,
        in: child,
      });
      assert.equal(res.status, 404);
      assert.match(res.text, /The user does not hold this role in Acme Child \(any more\)\./);
      assert.deepEqual(await rowCounts(t), before);
      assert.equal((await gqlUser(id)).role_assignments.length, 1);
    });

    it('a viewer whose roles do not allow changing users where the role would be given is refused there, and it is audited there', async () => {
      // an Auditor of the vendor's tenant who administers the partner
      const { client: mixed } = await signedInUser(t, 'mixed@vendor.test', { tenant: '1', roles: [Auditor] });
      const me = (await t.gql(await t.rootToken(), 'query { users(email: "mixed@vendor.test") { id } }')).body.data.users[0].id as string;
      const granted = await t.gql(
        await t.rootToken(),
        'mutation($u: ID!, $r: ID!) { assignUserRole(user_id: $u, role_id: $r) { id } }',
        { u: me, r: Administrator },
        { tenant: partner },
      );
      assert.equal(granted.body.errors, undefined, JSON.stringify(granted.body));
      const made = await invite(partner, 'refused@acme.test', Analyst);
      assert.equal(made.status, 200, made.text);
      const id = /user=([0-9a-f-]{36})">refused@acme\.test/.exec(
        (await admin.get(`/console/users?tenant=${partner}&email=refused%40acme.test`)).text,
      )![1]!;
      const page = await mixed.get(`/console/users/user?tenant=${partner}&user=${id}`);
      assert.equal(page.status, 200, page.text.slice(0, 600));
      const refusals = async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from audit_events where action = 'authorization.refused' and tenant_id = '1'`.execute(
            t.db.kysely,
          )
        ).rows[0]!.n;
      const before = { rows: await rowCounts(t), refused: await refusals() };
      const res = await mixed.post('/console/users/roles', {
        _csrf: mixed.csrf(page),
        tenant: partner,
        user: id,
        role: Analyst,
        expires: '',
        in: '1',
      });
      assert.equal(res.status, 403, res.text.slice(0, 600));
      assert.match(res.text, /do not allow you to manage users\./);
      assert.deepEqual(await rowCounts(t), before.rows);
      assert.equal(await refusals(), before.refused + 1, 'the refusal is in the trail of the tenant where it was judged');
    });

    it('every form refuses a post without the CSRF token, and writes nothing', async () => {
      const before = await rowCounts(t);
      const id = '00000000-0000-4000-8000-000000000000';
      for (const path of ['invite', 'roles', 'roles/remove', 'disable', 'enable', 'reset', 'delete']) {
        const res = await admin.post(`/console/users/${path}`, { tenant: child, user: id, email: 'csrf@acme.test', role: Analyst });
        assert.equal(res.status, 403, path);
      }
      assert.deepEqual(await rowCounts(t), before);
    });

    it('a user whose home is a tenant below is not one of this tenant’s: its pages and every form refuse it, writing nothing', async () => {
      const made = await invite(child, 'below@acme.test', Responder);
      assert.equal(made.status, 200, made.text);
      const list = await admin.get(`/console/users?tenant=${child}&email=below%40acme.test`);
      const id = /user=([0-9a-f-]{36})">below@acme\.test/.exec(list.text)![1]!;
      const assignment = (await gqlUser(id)).role_assignments[0].id as string;
      // a user out of the admin's reach, and none at all: the same answer
      const elsewhere = await createTenant(t, '1', { name: 'Elsewhere' });
      const stranger = await t.gql(
        await t.rootToken(),
        'mutation($e: String!) { createUser(email: $e) { user { id } } }',
        { e: 'stranger@elsewhere.test' },
        { tenant: elsewhere },
      );
      const strangerId = stranger.body.data.createUser.user.id as string;
      const none = '00000000-0000-4000-8000-000000000000';

      /** the stored user, and every row and audit event (refusals' too) */
      const state = async () => ({
        user: await t.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),
        rows: await rowCounts(t),
        audit: (await sql<{ n: number }>`select count(*)::int as n from audit_events`.execute(t.db.kysely)).rows[0]!.n,
      });
      /** the problem page's words */
      const refusal = (res: Response) => {
        assert.equal(res.status, 404, res.text.slice(0, 600));
        assert.match(res.text, /User not found/);
        const words = /<p class="error" role="alert">([^<]*)<\/p>\s*<p>([^<]*)<\/p>/.exec(res.text);
        assert.ok(words, res.text);
        return `${words[1]} ${words[2]}`;
      };
      const WORDS =
        'No user with this id belongs to Acme Partners. It may have been deleted, or belong to another tenant: ' +
        'go back to the list of Acme Partners, or open it from the tenant it belongs to.';

      const page = await admin.get(`/console/users?tenant=${partner}`);
      const before = await state();
      for (const user of [id, strangerId, none]) {
        assert.equal(refusal(await admin.get(`/console/users/user?tenant=${partner}&user=${user}`)), WORDS, `the user page, ${user}`);
        assert.equal(refusal(await admin.get(`/console/users/delete?tenant=${partner}&user=${user}`)), WORDS, `the confirmation, ${user}`);
      }
      const forms: [string, Record<string, string>][] = [
        ['roles', { role: Auditor, expires: '' }],
        ['roles/remove', { assignment }],
        ['disable', {}],
        ['enable', {}],
        ['reset', {}],
        ['delete', {}],
      ];
      for (const [path, more] of forms) {
        for (const user of [id, strangerId, none]) {
          const res = await admin.post(`/console/users/${path}`, { _csrf: admin.csrf(page), tenant: partner, user, ...more });
          assert.equal(refusal(res), WORDS, `${path}, ${user}`);
        }
      }
      assert.deepEqual(await state(), before, 'nothing written, not even a refusal’s event');

      // from its own tenant's pages, the same forms change it
      const own = await admin.get(`/console/users/user?tenant=${child}&user=${id}`);
      assert.equal(own.status, 200);
      let res = await admin.post('/console/users/disable', { _csrf: admin.csrf(own), tenant: child, user: id });
      assert.equal(res.status, 303, res.text);
      assert.notEqual((await gqlUser(id)).disabled_at, null);
      res = await admin.post('/console/users/delete', { _csrf: admin.csrf(own), tenant: child, user: id });
      assert.equal(res.status, 303, res.text);
      assert.equal(await gqlUser(id), null);
    });

    it('nobody changes their own account here', async () => {
      const list = await admin.get(`/console/users?tenant=${partner}&email=admin%40acme.test`);
      const id = /user=([0-9a-f-]{36})">admin@acme\.test/.exec(list.text)![1]!;
      const page = await admin.get(`/console/users/user?tenant=${partner}&user=${id}`);
      assert.match(page.text, /This is you/);
      assert.doesNotMatch(page.text, /action="\/console\/users\/disable"/);
      const res = await admin.post('/console/users/disable', { _csrf: admin.csrf(page), tenant: partner, user: id });
      assert.equal(res.status, 400);
      assert.match(res.text, /You cannot disable your own account here\./);
    });

    it('an Auditor sees the users, no forms, and every change is refused', async () => {
      const tenant = await createTenant(t, partner, { name: 'Audited' });
      const { client: auditor } = await signedInUser(t, 'auditor@acme.test', { tenant, roles: [Auditor] });
      const list = await auditor.get(`/console/users?tenant=${tenant}`);
      assert.equal(list.status, 200);
      assert.match(list.text, /auditor@acme\.test/);
      assert.doesNotMatch(list.text, /Invite a user/);
      assert.match(list.text, /let you see its users, not change them/);
      const form = await auditor.get(`/console/users/invite?tenant=${tenant}`);
      assert.equal(form.status, 403);
      assert.match(form.text, /Your roles in Audited do not allow you to manage users\./);
      const before = await rowCounts(t);
      const res = await auditor.post('/console/users/invite', { _csrf: auditor.csrf(list), tenant, email: 'x@acme.test', role: Analyst });
      assert.equal(res.status, 403);
      assert.deepEqual(await rowCounts(t), before);
    });
  });
}
