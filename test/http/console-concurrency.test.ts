// The console's forms attacked as a hostile tenant would, with many requests in flight at once,
// on both engines: races are the store's (one connection under a mutex on PGlite, a pool and row
// locks on PostgreSQL), so a transport-only run would prove little. Each form is posted 20-40
// times together through app.inject, and each case asserts what a person would notice (one
// success, or idempotent successes; the others a 4xx page in words; never a 5xx) and reads the
// database back: one client of a name, and the hourly creation limit exact under a burst; one
// deletion of a client; rotation storms leaving one current secret and at most one in its grace
// period, force-rotations one current secret, and rotations racing deletions no live secret; one
// user of an address; a user disabled, enabled and deleted at once; two administrators disabling
// each other, or removing each other's Administrator role (one keeps it, the other is refused);
// one label of a name; child tenants of one name (names are not unique: each one whole); one
// service and one subscription assignment of a partner; one SSO connection for a domain two
// tenants claim; a role given 20 times held once, removed 20 times removed once; one renewal of
// recovery codes per authenticator code; one password change from one current password, and one
// of two new authenticators confirmed at once, each the one kept; 40 different forms on one
// tenant without a deadlock;
// forged posts (a tenant out of reach, a child's object from its parent's page, a missing or
// another session's CSRF token) among legitimate ones, refused and writing nothing; and a notice
// left by a change shown once to 30 page loads of the same session.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { hashSecret } from '../../src/credentials/secret.js';
import { verifyPassword } from '../../src/users/password.js';
import { hashRecoveryCode } from '../../src/users/recovery-codes.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { createClient, rowCounts } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const { Administrator, Analyst, Auditor } = ROLE_IDS;

/** `n` requests at once. */
const atOnce = <T>(n: number, make: (i: number) => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

/** How many answers had each status, e.g. { 303: 1, 404: 19 }. */
const tally = (answers: Response[]) => {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
};

/** The words of what went wrong: above a form shown again or on the console's error page (its
 *  alert), or the heading of a page of its own (a form whose session's CSRF token it lacks). */
const alertOf = (res: Response) => (/role="alert">(?:<p>)?([^<]+)/.exec(res.text) ?? /<h1>([^<]+)<\/h1>/.exec(res.text))?.[1];

/** A refusal a person can read: the status, an HTML page under the console, the words. */
function refusedInWords(res: Response, status: number, words: RegExp | string, what = '') {
  assert.equal(res.status, status, `${what}: ${res.status} ${res.text.slice(0, 400)}`);
  assert.match(String(res.headers['content-type']), /^text\/html/, what);
  const said = alertOf(res);
  assert.ok(said, `${what}: words saying what went wrong: ${res.text.slice(0, 400)}`);
  if (typeof words === 'string') assert.equal(said, words, what);
  else assert.match(said, words, what);
}

const noServerError = (answers: Response[]) => {
  for (const a of answers) assert.ok(a.status < 500, `a ${a.status}: ${a.text.slice(0, 600)}`);
};

/** The client id and secret a secret page shows. */
function shownSecret(res: Response): { clientId: string; secret: string } {
  const clientId = /id="client_id"[^>]*value="([^"]+)"/.exec(res.text)?.[1];
  const secret = /id="client_secret"[^>]*value="([^"]+)"/.exec(res.text)?.[1];
  assert.ok(clientId && secret, `a secret page: ${res.text.slice(0, 500)}`);
  return { clientId, secret };
}

const count = async (t: TestApp, query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(t.db.kysely)).rows[0]!.n;

for (const engine of engines()) {
  describe(`console forms under concurrent posts (${engine})`, () => {
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

    /** The id of the user with this address. */
    const userId = async (email: string) =>
      (await t.db.kysely.selectFrom('users').select('id').where('email_normalized', '=', email).executeTakeFirstOrThrow()).id;

    /** A user made by the root Administrator in `tenant` (set-up pending), its id. */
    const newUser = async (tenant: string, email: string, roles: string[] = [Analyst]) => {
      const res = await t.gql(
        await t.rootToken(),
        'mutation($e: String!, $r: [ID!]) { createUser(email: $e, roles: $r) { user { id } } }',
        { e: email, r: roles },
        { tenant },
      );
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.createUser.user.id as string;
    };

    const tokenStatus = async (clientId: string, secret: string) => (await t.tokenResponse(clientId, secret)).status;

    it('the same new client name 30 times at once: one client, 29 forms shown again saying the name is taken', async () => {
      const tenant = await createTenant(t, partner, { name: 'Twins' });
      const form = await admin.get(`/console/credentials/new?tenant=${tenant}`);
      const answers = await atOnce(30, () =>
        admin.post('/console/credentials/new', { _csrf: admin.csrf(form), tenant, name: 'Nightly export', [`role_${Analyst}`]: Analyst }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 200: 1, 409: 29 });
      for (const a of answers.filter((a) => a.status === 409)) {
        refusedInWords(a, 409, 'Another client of Twins already has this name (names are compared ignoring case).');
        assert.match(a.text, /value="Nightly export"/, 'the form again, with the name typed');
      }
      const made = shownSecret(answers.find((a) => a.status === 200)!);
      assert.equal(await tokenStatus(made.clientId, made.secret), 200);
      // one client, one secret, one role, one creation counted, one event
      const clients = await t.db.kysely.selectFrom('clients').select('id').where('tenant_id', '=', tenant).execute();
      assert.equal(clients.length, 1);
      const id = clients[0]!.id;
      assert.equal(await count(t, sql`select count(*)::int as n from client_secrets where client_id = ${id}`), 1);
      assert.equal(await count(t, sql`select count(*)::int as n from role_assignments where principal_id = ${id}`), 1);
      assert.equal(await count(t, sql`select count(*)::int as n from client_creations where tenant_id = ${tenant}`), 1);
      assert.equal(await count(t, sql`select count(*)::int as n from audit_events where tenant_id = ${tenant} and action = 'client.created'`), 1);
    });

    it('30 new clients of different names at once: the hourly creation limit holds, the rest told when to try again', async () => {
      const tenant = await createTenant(t, partner, { name: 'Burst' });
      const form = await admin.get(`/console/credentials/new?tenant=${tenant}`);
      const answers = await atOnce(30, (i) =>
        admin.post('/console/credentials/new', { _csrf: admin.csrf(form), tenant, name: `Burst ${i}`, [`role_${Analyst}`]: Analyst }),
      );
      noServerError(answers);
      const limit = t.config.clientCreateLimit;
      assert.deepEqual(tally(answers), { 200: limit, 429: 30 - limit });
      for (const a of answers.filter((a) => a.status === 429)) {
        refusedInWords(a, 429, `At most ${limit} clients may be created per tenant per hour, and Burst has reached that.`);
        assert.match(String(a.headers['retry-after']), /^\d+$/);
      }
      assert.equal(await count(t, sql`select count(*)::int as n from clients where tenant_id = ${tenant}`), limit);
      assert.equal(await count(t, sql`select count(*)::int as n from client_creations where tenant_id = ${tenant}`), limit);
    });

    it('one client deleted 20 times at once: one "deleted", 19 pages saying it is not found; its secrets all end', async () => {
      const tenant = await createTenant(t, partner, { name: 'Deletions' });
      const seeded = await createClient(t, await t.rootToken(), 'Doomed', { tenant, roles: [Analyst] });
      const confirm = await admin.get(`/console/credentials/delete?tenant=${tenant}&client=${seeded.clientId}`);
      assert.equal(confirm.status, 200);
      const answers = await atOnce(20, () =>
        admin.post('/console/credentials/delete', { _csrf: admin.csrf(confirm), tenant, client: seeded.clientId }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 1, 404: 19 });
      assert.equal(answers.find((a) => a.status === 303)!.headers.location, `/console/credentials?tenant=${tenant}`);
      for (const a of answers.filter((a) => a.status === 404)) refusedInWords(a, 404, 'No client with this id exists in Deletions.');
      const row = await t.db.kysely.selectFrom('clients').select(['revoked_at']).where('id', '=', seeded.id).executeTakeFirstOrThrow();
      assert.notEqual(row.revoked_at, null);
      assert.equal(await count(t, sql`select count(*)::int as n from client_secrets where client_id = ${seeded.id} and revoked_at is null`), 0);
      assert.equal(await count(t, sql`select count(*)::int as n from audit_events where target_id = ${seeded.id} and action = 'client.deleted'`), 1);
      assert.equal(await tokenStatus(seeded.clientId, seeded.secret), 401);
    });

    /** The secrets of a client as the rules count them: live ones, the current one, those in a grace period. */
    const secretsOf = async (id: string) => {
      const now = t.clock.now();
      const rows = await t.db.kysely.selectFrom('client_secrets').select(['expires_at', 'revoked_at']).where('client_id', '=', id).execute();
      const live = rows.filter((r) => r.revoked_at === null && (r.expires_at === null || new Date(r.expires_at) > now));
      return {
        all: rows.length,
        current: live.filter((r) => r.expires_at === null).length,
        inGrace: live.filter((r) => r.expires_at !== null).length,
      };
    };

    it('a secret rotated 20 times at once: one new secret; the client keeps one current secret and at most one in its grace period', async () => {
      const tenant = await createTenant(t, partner, { name: 'Rotations' });
      const seeded = await createClient(t, await t.rootToken(), 'Spinning', { tenant, roles: [Analyst] });
      const form = await admin.get(`/console/credentials/rotate?tenant=${tenant}&client=${seeded.clientId}`);
      assert.equal(form.status, 200);
      const rotate = (secret: string) =>
        admin.post('/console/credentials/rotate', { _csrf: admin.csrf(form), tenant, client: seeded.clientId, secret, grace: '3600' });

      let answers = await atOnce(20, () => rotate(seeded.secret));
      noServerError(answers);
      assert.deepEqual(tally(answers), { 200: 1, 400: 19 });
      for (const a of answers.filter((a) => a.status === 400)) refusedInWords(a, 400, 'That is not the current secret of this client.');
      const second = shownSecret(answers.find((a) => a.status === 200)!).secret;
      assert.deepEqual(await secretsOf(seeded.id), { all: 2, current: 1, inGrace: 1 });
      assert.equal(await tokenStatus(seeded.clientId, seeded.secret), 200, 'the first in its grace period');
      assert.equal(await tokenStatus(seeded.clientId, second), 200);

      // again, half with the current secret and half with the one in its grace period (refused: not the current one)
      answers = await atOnce(20, (i) => rotate(i % 2 === 0 ? second : seeded.secret));
      noServerError(answers);
      assert.deepEqual(tally(answers), { 200: 1, 400: 19 });
      const third = shownSecret(answers.find((a) => a.status === 200)!).secret;
      assert.deepEqual(await secretsOf(seeded.id), { all: 3, current: 1, inGrace: 1 }, 'rotating in a grace period ends the older secret');
      assert.equal(await tokenStatus(seeded.clientId, seeded.secret), 401);
      assert.equal(await tokenStatus(seeded.clientId, second), 200);
      assert.equal(await tokenStatus(seeded.clientId, third), 200);
      assert.equal(
        await count(t, sql`select count(*)::int as n from audit_events where target_id = ${seeded.id} and action = 'client.secret_rotated'`),
        2,
      );
    });

    it('a secret force-rotated 20 times at once: one current secret, and of the 20 shown exactly one works', async () => {
      const tenant = await createTenant(t, partner, { name: 'Leaked' });
      const seeded = await createClient(t, await t.rootToken(), 'Leaky', { tenant, roles: [Analyst] });
      const form = await admin.get(`/console/credentials/force-rotate?tenant=${tenant}&client=${seeded.clientId}`);
      assert.equal(form.status, 200, form.text.slice(0, 400));
      const answers = await atOnce(20, () =>
        admin.post('/console/credentials/force-rotate', { _csrf: admin.csrf(form), tenant, client: seeded.clientId }),
      );
      noServerError(answers);
      // each is a force rotation in turn (every earlier secret ends): the last one's secret is the one
      assert.deepEqual(tally(answers), { 200: 20 });
      assert.deepEqual(await secretsOf(seeded.id), { all: 21, current: 1, inGrace: 0 });
      // (read in the database: trying 19 dead secrets at the token endpoint would meet its guessing throttle)
      const current = await t.db.kysely
        .selectFrom('client_secrets')
        .select('secret_hash')
        .where('client_id', '=', seeded.id)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      const shown = answers.map((a) => shownSecret(a).secret);
      const live = shown.filter((secret) => hashSecret(secret).equals(Buffer.from(current.secret_hash)));
      assert.equal(live.length, 1);
      assert.equal(await tokenStatus(seeded.clientId, live[0]!), 200);
      assert.equal(await tokenStatus(seeded.clientId, seeded.secret), 401);
    });

    it('rotations and deletions of one client at once: one deletion, and no secret of the deleted client lives on', async () => {
      const tenant = await createTenant(t, partner, { name: 'Rotate or delete' });
      const seeded = await createClient(t, await t.rootToken(), 'Contested', { tenant, roles: [Analyst] });
      const form = await admin.get(`/console/credentials/rotate?tenant=${tenant}&client=${seeded.clientId}`);
      const answers = await atOnce(20, (i) =>
        i % 2 === 0
          ? admin.post('/console/credentials/rotate', {
              _csrf: admin.csrf(form),
              tenant,
              client: seeded.clientId,
              secret: seeded.secret,
              grace: '3600',
            })
          : admin.post('/console/credentials/delete', { _csrf: admin.csrf(form), tenant, client: seeded.clientId }),
      );
      noServerError(answers);
      const rotations = answers.filter((_, i) => i % 2 === 0);
      const deletions = answers.filter((_, i) => i % 2 === 1);
      assert.equal(deletions.filter((a) => a.status === 303).length, 1, JSON.stringify(tally(deletions)));
      for (const a of deletions.filter((a) => a.status !== 303)) refusedInWords(a, 404, 'No client with this id exists in Rotate or delete.');
      assert.ok(rotations.filter((a) => a.status === 200).length <= 1, JSON.stringify(tally(rotations)));
      for (const a of rotations.filter((a) => a.status !== 200)) {
        assert.ok([400, 404].includes(a.status), `${a.status}: ${a.text.slice(0, 300)}`);
        assert.ok(alertOf(a), 'in words');
      }
      const shown = rotations.filter((a) => a.status === 200).map((a) => shownSecret(a).secret);
      assert.equal(await count(t, sql`select count(*)::int as n from client_secrets where client_id = ${seeded.id} and revoked_at is null`), 0);
      for (const secret of [seeded.secret, ...shown]) assert.equal(await tokenStatus(seeded.clientId, secret), 401);
    });

    it('the same address invited 30 times at once: one user, 29 forms shown again saying the address is taken', async () => {
      const form = await admin.get(`/console/users/invite?tenant=${child}`);
      const answers = await atOnce(30, (i) =>
        admin.post('/console/users/invite', {
          _csrf: admin.csrf(form),
          tenant: child,
          email: i % 2 === 0 ? 'twin@acme.test' : 'TWIN@Acme.test',
          display_name: '',
          role: Analyst,
        }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 200: 1, 409: 29 });
      for (const a of answers.filter((a) => a.status === 409)) {
        refusedInWords(a, 409, 'A user with this e-mail address exists already (in this tenant or another).');
      }
      const id = await userId('twin@acme.test');
      assert.equal(await count(t, sql`select count(*)::int as n from role_assignments where principal_id = ${id}`), 1);
      assert.equal(await count(t, sql`select count(*)::int as n from audit_events where target_id = ${id} and action = 'user.created'`), 1);
    });

    it('a user disabled, enabled and deleted at once: one deletion, the rest done before it or not found; nothing of the user left', async () => {
      const id = await newUser(partner, 'contested@acme.test');
      const page = await admin.get(`/console/users/user?tenant=${partner}&user=${id}`);
      assert.equal(page.status, 200);
      const paths = ['disable', 'enable', 'delete'];
      const answers = await atOnce(30, (i) => admin.post(`/console/users/${paths[i % 3]}`, { _csrf: admin.csrf(page), tenant: partner, user: id }));
      noServerError(answers);
      const deletions = answers.filter((_, i) => i % 3 === 2);
      assert.deepEqual(tally(deletions), { 303: 1, 404: 9 });
      for (const [i, a] of answers.entries()) {
        // gone before the page read it, or before the service locked it
        if (a.status === 404) refusedInWords(a, 404, /^No user with this id belongs to Acme Partners\.$/, paths[i % 3]);
        else
          assert.equal(
            a.headers.location,
            i % 3 === 2 ? `/console/users?tenant=${partner}` : `/console/users/user?tenant=${partner}&user=${id}`,
            paths[i % 3],
          );
      }
      assert.equal(await t.db.kysely.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst(), undefined);
      assert.equal(await count(t, sql`select count(*)::int as n from role_assignments where principal_id = ${id}`), 0);
      // the trail tells one story: from active, disabled and enabled in turn (each event a change
      // of state, never a second disabling in a row), then deleted, once
      const trail = await sql<{ action: string; n: number }>`
        select action, count(*)::int as n from audit_events where target_id = ${id} group by action`.execute(t.db.kysely);
      const n = Object.fromEntries(trail.rows.map((r) => [r.action, r.n]));
      assert.equal(n['user.deleted'], 1, JSON.stringify(n));
      const [disabled, enabled] = [n['user.disabled'] ?? 0, n['user.enabled'] ?? 0];
      assert.ok(disabled === enabled || disabled === enabled + 1, JSON.stringify(n));
    });

    it('two administrators disabling each other at once: one is disabled, the other is refused', async () => {
      const mutual = await createTenant(t, partner, { name: 'Mutual' });
      const { client: a } = await signedInUser(t, 'a@mutual.test', { tenant: mutual, roles: [Administrator] });
      const { client: b } = await signedInUser(t, 'b@mutual.test', { tenant: mutual, roles: [Administrator] });
      const [aId, bId] = [await userId('a@mutual.test'), await userId('b@mutual.test')];
      const [aPage, bPage] = [await a.get(`/console/users?tenant=${mutual}`), await b.get(`/console/users?tenant=${mutual}`)];
      // each posts its form ten times, the twenty interleaved
      const answers = await atOnce(20, (i) =>
        i % 2 === 0
          ? a.post('/console/users/disable', { _csrf: a.csrf(aPage), tenant: mutual, user: bId })
          : b.post('/console/users/disable', { _csrf: b.csrf(bPage), tenant: mutual, user: aId }),
      );
      noServerError(answers);
      const disabled = await t.db.kysely
        .selectFrom('users')
        .select(['id'])
        .where('id', 'in', [aId, bId])
        .where('disabled_at', 'is not', null)
        .execute();
      assert.equal(disabled.length, 1, 'exactly one of the two is disabled');
      const loserIsA = disabled[0]!.id === aId;
      const won = answers.filter((_, i) => (i % 2 === 0) !== loserIsA);
      const lost = answers.filter((_, i) => (i % 2 === 0) === loserIsA);
      for (const r of won) assert.equal(r.status, 303, r.text.slice(0, 300));
      for (const r of lost) {
        // refused by the service (the account was disabled meanwhile), or, once its session ended,
        // its form refused (the CSRF token of a session that is gone) or the way to sign in
        if (r.status === 303) assert.match(String(r.headers.location), /^\/login/);
        else refusedInWords(r, 403, /disabled or deleted meanwhile|^This form has expired$/);
      }
      assert.equal(
        await count(t, sql`select count(*)::int as n from audit_events where action = 'user.disabled' and target_id in (${aId}, ${bId})`),
        1,
      );
      assert.equal((await (loserIsA ? a : b).get('/console')).status, 303, 'the disabled one is signed out');
      assert.equal((await (loserIsA ? b : a).get('/console')).status, 200);
    });

    it('two administrators removing each other’s Administrator role at once: one keeps it, the other is refused', async () => {
      const mutual = await createTenant(t, partner, { name: 'Mutual roles' });
      const { client: a } = await signedInUser(t, 'a@roles.test', { tenant: mutual, roles: [Administrator] });
      const { client: b } = await signedInUser(t, 'b@roles.test', { tenant: mutual, roles: [Administrator] });
      const [aId, bId] = [await userId('a@roles.test'), await userId('b@roles.test')];
      const adminOf = async (id: string) =>
        (
          await t.db.kysely
            .selectFrom('role_assignments')
            .select('id')
            .where('principal_id', '=', id)
            .where('role_id', '=', Administrator)
            .executeTakeFirstOrThrow()
        ).id;
      const [aRole, bRole] = [await adminOf(aId), await adminOf(bId)];
      const [aPage, bPage] = [await a.get(`/console/users?tenant=${mutual}`), await b.get(`/console/users?tenant=${mutual}`)];
      const answers = await atOnce(20, (i) =>
        i % 2 === 0
          ? a.post('/console/users/roles/remove', { _csrf: a.csrf(aPage), tenant: mutual, user: bId, assignment: bRole })
          : b.post('/console/users/roles/remove', { _csrf: b.csrf(bPage), tenant: mutual, user: aId, assignment: aRole }),
      );
      noServerError(answers);
      const left = await t.db.kysely
        .selectFrom('role_assignments')
        .select('principal_id')
        .where('principal_id', 'in', [aId, bId])
        .where('role_id', '=', Administrator)
        .execute();
      assert.equal(left.length, 1, 'the tenant keeps one Administrator');
      const keeperIsA = left[0]!.principal_id === aId;
      const kept = answers.filter((_, i) => (i % 2 === 0) === keeperIsA);
      const lost = answers.filter((_, i) => (i % 2 === 0) !== keeperIsA);
      // the keeper's first removal did it; the others find the role gone
      assert.equal(kept.filter((r) => r.status === 303).length, 1, JSON.stringify(tally(kept)));
      for (const r of kept.filter((r) => r.status !== 303)) refusedInWords(r, 404, 'The user does not hold this role in Mutual roles (any more).');
      for (const r of lost) refusedInWords(r, 403, /^Your roles in Mutual roles do not allow you to manage users\.$/);
      assert.equal(
        await count(t, sql`select count(*)::int as n from audit_events where action = 'user.role_removed' and target_id in (${aId}, ${bId})`),
        1,
      );
    });

    it('a role removed 20 times at once: one removal, 19 pages saying the user does not hold it any more', async () => {
      const id = await newUser(partner, 'removed@acme.test', [Analyst, Auditor]);
      const assignment = (
        await t.db.kysely
          .selectFrom('role_assignments')
          .select('id')
          .where('principal_id', '=', id)
          .where('role_id', '=', Auditor)
          .executeTakeFirstOrThrow()
      ).id;
      const page = await admin.get(`/console/users/user?tenant=${partner}&user=${id}`);
      const answers = await atOnce(20, () =>
        admin.post('/console/users/roles/remove', { _csrf: admin.csrf(page), tenant: partner, user: id, assignment }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 1, 404: 19 });
      for (const a of answers.filter((a) => a.status === 404))
        refusedInWords(a, 404, 'The user does not hold this role in Acme Partners (any more).');
      assert.equal(await count(t, sql`select count(*)::int as n from role_assignments where principal_id = ${id}`), 1);
    });

    it('a partner’s offerings at once: the same service name 20 times is one service; a subscription assigned 20 times is one assignment', async () => {
      let page = await admin.get(`/console/tenant/offerings?tenant=${partner}`);
      assert.equal(page.status, 200);
      let answers = await atOnce(20, () =>
        admin.post('/console/tenant/offerings', { _csrf: admin.csrf(page), tenant: partner, action: 'service', service_name: 'Managed detection' }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 1, 409: 19 });
      for (const a of answers.filter((a) => a.status === 409)) {
        refusedInWords(a, 409, 'There is already a service named Managed detection (names are compared ignoring case).');
      }
      const service = (await t.db.kysely.selectFrom('services').select('id').where('owner_tenant_id', '=', partner).executeTakeFirstOrThrow()).id;
      page = await admin.get(`/console/tenant/offerings?tenant=${partner}`);
      answers = await atOnce(20, () =>
        admin.post('/console/tenant/offerings', { _csrf: admin.csrf(page), tenant: partner, action: 'subscription', service, sub_name: 'Gold' }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 1, 409: 19 });
      const subscription = (
        await t.db.kysely.selectFrom('partner_subscriptions').select('id').where('partner_tenant_id', '=', partner).executeTakeFirstOrThrow()
      ).id;
      page = await admin.get(`/console/tenant/subscriptions?tenant=${child}`);
      answers = await atOnce(20, () =>
        admin.post('/console/tenant/subscriptions', { _csrf: admin.csrf(page), tenant: child, action: 'assign', subscription }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 20 }, 'assigning what is assigned changes nothing');
      assert.equal(await count(t, sql`select count(*)::int as n from tenant_subscriptions where tenant_id = ${child}`), 1);
      assert.equal(
        await count(t, sql`select count(*)::int as n from audit_events where tenant_id = ${child} and action = 'subscription.assigned'`),
        1,
      );
    });

    it('the same label 30 times at once on a tenant: one label, 29 forms shown again saying it exists', async () => {
      const page = await admin.get(`/console/tenant/labels?tenant=${child}`);
      assert.equal(page.status, 200);
      const answers = await atOnce(30, (i) =>
        admin.post('/console/tenant/labels', {
          _csrf: admin.csrf(page),
          tenant: child,
          action: 'create',
          name: i % 2 === 0 ? 'Region' : ' REGION ',
          value: `eu-${i}`,
          owner: partner,
        }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 1, 409: 29 });
      for (const a of answers.filter((a) => a.status === 409)) refusedInWords(a, 409, /^Acme Child already has a label .+ from this owner/);
      assert.equal(await count(t, sql`select count(*)::int as n from tenant_labels where tenant_id = ${child} and name_normalized = 'region'`), 1);
      assert.equal(await count(t, sql`select count(*)::int as n from audit_events where tenant_id = ${child} and action = 'label.created'`), 1);
    });

    it('the same child tenant name 20 times at once: names are not unique (docs/tenants.md), and each tenant is whole', async () => {
      const form = await admin.get(`/console/tenant/new?tenant=${partner}`);
      assert.equal(form.status, 200);
      const before = await count(t, sql`select count(*)::int as n from tenants where parent_id = ${partner}`);
      const answers = await atOnce(20, () =>
        admin.post('/console/tenant/new', { _csrf: admin.csrf(form), tenant: partner, name: 'Same Customer', env_echo: 'yes' }),
      );
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 20 });
      const made = await t.db.kysely
        .selectFrom('tenants')
        .select(['id', 'path', 'depth'])
        .where('parent_id', '=', partner)
        .where('name', '=', 'Same Customer')
        .execute();
      assert.equal(made.length, 20);
      assert.deepEqual(new Set(answers.map((a) => a.headers.location)), new Set(made.map((m) => `/console/tenant?tenant=${m.id}`)));
      const parent = await t.db.kysely.selectFrom('tenants').select(['path']).where('id', '=', partner).executeTakeFirstOrThrow();
      for (const m of made) {
        assert.equal(m.path, `${parent.path}${m.id}.`);
        assert.equal(await count(t, sql`select count(*)::int as n from tenant_environments where tenant_id = ${m.id}`), 1);
        assert.equal(
          await count(t, sql`select count(*)::int as n from tenant_closure where tenant_id = ${m.id}`),
          m.path.split('.').filter(Boolean).length,
        );
        assert.equal(await count(t, sql`select count(*)::int as n from audit_events where target_id = ${m.id} and action = 'tenant.created'`), 1);
      }
      assert.equal(await count(t, sql`select count(*)::int as n from tenants where parent_id = ${partner}`), before + 20);
      // the partner's subtree size (kept by triggers, one row a change) is what is there
      const size = await count(t, sql`select coalesce(sum(delta), 0)::int as n from tenant_subtree_sizes where ancestor_id = ${partner}`);
      const there = await count(t, sql`select count(*)::int as n from tenants where path like ${`${parent.path}%`}`);
      assert.equal(size, there);
    });

    it('one e-mail domain claimed by 20 new single sign-on connections of two tenants at once: each claim is made, pending, and none routes (which proves it wins: domain-proofs.test.ts)', async () => {
      const [mine, theirs] = [partner, await createTenant(t, partner, { name: 'Claimant' })];
      const forms = { [mine]: await admin.get(`/console/sso/new?tenant=${mine}`), [theirs]: await admin.get(`/console/sso/new?tenant=${theirs}`) };
      assert.equal(forms[mine]!.status, 200, forms[mine]!.text.slice(0, 400));
      const before = await count(t, sql`select count(*)::int as n from sso_connections`);
      const answers = await atOnce(20, (i) => {
        const tenant = i % 2 === 0 ? mine : theirs;
        return admin.post('/console/sso/new', {
          _csrf: admin.csrf(forms[tenant]!),
          tenant,
          name: `Claim ${i}`,
          domains: 'contested.test',
          testers: '',
        });
      });
      noServerError(answers);
      assert.deepEqual(tally(answers), { 303: 20 });
      assert.equal(
        await count(t, sql`select count(*)::int as n from sso_connection_domains where domain = 'contested.test' and status = 'pending'`),
        20,
      );
      assert.equal(await count(t, sql`select count(*)::int as n from sso_connections`), before + 20);
      assert.equal(await t.service.store.sso.connectionForDomain('contested.test'), undefined, 'a pending claim routes nobody');
      assert.equal(await count(t, sql`select count(*)::int as n from audit_events where action = 'sso.created'`), 20);
    });

    it('a role given 20 times at once, in the user’s tenant and in one below: held once in each', async () => {
      const id = await newUser(partner, 'roles@acme.test');
      const page = await admin.get(`/console/users/user?tenant=${partner}&user=${id}`);
      assert.equal(page.status, 200);
      const answers = await atOnce(20, (i) =>
        admin.post('/console/users/roles', {
          _csrf: admin.csrf(page),
          tenant: partner,
          user: id,
          role: Auditor,
          expires: '',
          in: i % 2 === 0 ? '' : child,
        }),
      );
      noServerError(answers);
      // giving a role held already replaces it (docs/users.md): every form succeeds
      assert.deepEqual(tally(answers), { 303: 20 });
      const held = await t.db.kysely
        .selectFrom('role_assignments')
        .select(['tenant_id', 'role_id'])
        .where('principal_id', '=', id)
        .orderBy('tenant_id')
        .orderBy('role_id')
        .execute();
      assert.deepEqual(
        held.map((h) => [String(h.tenant_id), h.role_id]).sort(),
        [
          [partner, Analyst],
          [partner, Auditor],
          [child, Auditor],
        ].sort(),
      );
    });

    it('40 different forms on one tenant at once (labels, clients, invitations, a role, profile, limits, support): all done, no deadlock', async () => {
      const storm = await createTenant(t, partner, { name: 'Storm', environments: ['echo', 'delta'] });
      const member = await newUser(storm, 'member@storm.test');
      const page = await admin.get(`/console/credentials?tenant=${storm}`);
      const csrf = admin.csrf(page);
      const forms: [string, (i: number) => Record<string, string>][] = [
        ['/console/tenant/labels', (i) => ({ action: 'create', name: `Storm ${i}`, value: 'v', owner: partner })],
        ['/console/credentials/new', (i) => ({ name: `Storm client ${i}`, [`role_${Analyst}`]: Analyst })],
        ['/console/users/invite', (i) => ({ email: `storm${i}@storm.test`, display_name: '', role: Analyst })],
        ['/console/users/roles', () => ({ user: member, role: Auditor, expires: '' })],
        ['/console/tenant/edit', (i) => ({ part: 'profile', name: 'Storm', description: `pass ${i}` })],
        ['/console/tenant/edit', (i) => ({ part: 'limits', env_echo: 'on', env_delta: i % 2 === 0 ? 'off' : 'on', expires_at: '' })],
        ['/console/tenant/support', (i) => ({ action: i % 2 === 0 ? 'enable' : 'disable', until: '', reason: 'ticket' })],
        ['/console/tenant/labels', (i) => ({ action: 'create', name: `Storm b${i}`, value: 'v', owner: partner })],
      ];
      const answers = await atOnce(40, (i) => {
        const [path, form] = forms[i % forms.length]!;
        return admin.post(path, { _csrf: csrf, tenant: storm, ...form(i) });
      });
      noServerError(answers);
      for (const [i, a] of answers.entries()) assert.ok([200, 303].includes(a.status), `${forms[i % forms.length]![0]}: ${a.status} ${alertOf(a)}`);
      assert.equal(await count(t, sql`select count(*)::int as n from tenant_labels where tenant_id = ${storm}`), 10);
      assert.equal(await count(t, sql`select count(*)::int as n from clients where tenant_id = ${storm}`), 5);
      assert.equal(await count(t, sql`select count(*)::int as n from users where tenant_id = ${storm}`), 6);
      assert.equal(await count(t, sql`select count(*)::int as n from role_assignments where principal_id = ${member}`), 2);
      // the tenant is still enabled (echo was never turned off) and its row reads whole
      const row = await t.db.kysely.selectFrom('tenants').select(['enabled', 'name']).where('id', '=', storm).executeTakeFirstOrThrow();
      assert.deepEqual(row, { enabled: true, name: 'Storm' });
    });

    it('30 forged posts among 10 legitimate ones at once: every forged one refused in words, nothing of them written', async () => {
      const other = await createTenant(t, '1', { name: 'Elsewhere Ltd' });
      const theirs = await createClient(t, await t.rootToken(), 'Their client', { tenant: other, roles: [Analyst] });
      const { client: victim } = await signedInUser(t, 'victim@elsewhere.test', { tenant: other, roles: [Administrator] });
      const victimToken = victim.csrf(await victim.get(`/console/credentials?tenant=${other}`));
      const childClient = await createClient(t, await t.rootToken(), 'Child client', { tenant: child, roles: [Analyst] });
      const childUser = await newUser(child, 'below@acme.test');
      const labelsPage = await admin.get(`/console/tenant/labels?tenant=${child}`);
      const made = await admin.post('/console/tenant/labels', {
        _csrf: admin.csrf(labelsPage),
        tenant: child,
        action: 'create',
        name: 'Tier',
        value: 'gold',
        owner: partner,
      });
      assert.equal(made.status, 303, made.text.slice(0, 400));
      const childLabel = (
        await t.db.kysely.selectFrom('tenant_labels').select('id').where('tenant_id', '=', child).where('name', '=', 'Tier').executeTakeFirstOrThrow()
      ).id;
      const page = await admin.get(`/console/credentials?tenant=${partner}`);
      const csrf = admin.csrf(page);

      type Post = { path: string; form: Record<string, string>; status: number; words: RegExp | string };
      const notVisible = `No tenant ${other} is visible to you.`;
      const forged: Post[] = [
        // another tenant's id in `tenant`
        {
          path: '/console/credentials/new',
          form: { _csrf: csrf, tenant: other, name: 'Planted', [`role_${Analyst}`]: Analyst },
          status: 403,
          words: notVisible,
        },
        { path: '/console/credentials/delete', form: { _csrf: csrf, tenant: other, client: theirs.clientId }, status: 403, words: notVisible },
        {
          path: '/console/users/invite',
          form: { _csrf: csrf, tenant: other, email: 'mole@elsewhere.test', display_name: '', role: Administrator },
          status: 403,
          words: notVisible,
        },
        // a child's object from the parent's page
        {
          path: '/console/credentials/delete',
          form: { _csrf: csrf, tenant: partner, client: childClient.clientId },
          status: 404,
          words: 'No client with this id exists in Acme Partners.',
        },
        {
          path: '/console/users/disable',
          form: { _csrf: csrf, tenant: partner, user: childUser },
          status: 404,
          words: 'No user with this id belongs to Acme Partners.',
        },
        {
          path: '/console/tenant/labels',
          form: { _csrf: csrf, tenant: partner, action: 'delete', label: childLabel },
          status: 404,
          words: 'No label with this id belongs to Acme Partners.',
        },
        // no CSRF token, and another session's
        {
          path: '/console/credentials/new',
          form: { tenant: partner, name: 'No token', [`role_${Analyst}`]: Analyst },
          status: 403,
          words: /This form has expired/,
        },
        {
          path: '/console/tenant/labels',
          form: { _csrf: victimToken, tenant: partner, action: 'create', name: 'Stolen token' },
          status: 403,
          words: /This form has expired/,
        },
      ];
      const legitimate = (i: number): Post => ({
        path: '/console/tenant/labels',
        form: { _csrf: csrf, tenant: partner, action: 'create', name: `Legit ${i}`, value: 'yes' },
        status: 303,
        words: '',
      });
      // 30 forged (each kind in turn) and 10 legitimate, interleaved
      const posts = Array.from({ length: 40 }, (_, i) => (i % 4 === 3 ? legitimate(i) : forged[i % forged.length]!));
      const before = await rowCounts(t);
      const answers = await atOnce(posts.length, (i) => admin.post(posts[i]!.path, posts[i]!.form));
      noServerError(answers);
      for (const [i, a] of answers.entries()) {
        const post = posts[i]!;
        if (post.status === 303) assert.equal(a.status, 303, `${post.path} (legitimate): ${a.text.slice(0, 400)}`);
        else refusedInWords(a, post.status, post.words, `${post.path} ${JSON.stringify(post.form)}`);
      }
      // the legitimate ones wrote their label and its event; the forged nothing
      assert.deepEqual(await rowCounts(t), { ...before, tenant_labels: before.tenant_labels! + 10, audit_events: before.audit_events! + 10 });
      assert.equal(await count(t, sql`select count(*)::int as n from tenant_labels where tenant_id = ${partner} and name like 'Legit %'`), 10);
      assert.equal(await tokenStatus(theirs.clientId, theirs.secret), 200, 'their client lives');
      assert.equal(await tokenStatus(childClient.clientId, childClient.secret), 200, 'the child’s client lives');
      const below = await t.db.kysely.selectFrom('users').select('disabled_at').where('id', '=', childUser).executeTakeFirstOrThrow();
      assert.equal(below.disabled_at, null);
      assert.ok(await t.db.kysely.selectFrom('tenant_labels').select('id').where('id', '=', childLabel).executeTakeFirst());
      assert.equal((await admin.get('/console')).status, 200, 'the attacker’s own session goes on');
      assert.equal((await victim.get('/console')).status, 200, 'and so does the victim’s');
    });

    it('new recovery codes asked 20 times at once with one authenticator code: one set, the one shown, and the code used once', async () => {
      const { client: me, key } = await signedInUser(t, 'codes@acme.test', { tenant: child, roles: [Analyst] });
      const id = await userId('codes@acme.test');
      const page = await me.get('/console/account');
      t.clock.advance(30_000);
      const code = totpCodeAt(key, t.clock.now());
      const answers = await atOnce(20, () => me.post('/console/account/recovery-codes', { _csrf: me.csrf(page), code }));
      noServerError(answers);
      const renewed = answers.filter((a) => a.status === 200);
      assert.equal(renewed.length, 1, JSON.stringify(tally(answers)));
      for (const a of answers.filter((a) => a.status !== 200)) {
        // the code was used (or, once failures add up, the account asked to wait): the page again, in words
        assert.ok([400, 429].includes(a.status), `${a.status}: ${a.text.slice(0, 300)}`);
        assert.ok(alertOf(a), 'in words');
      }
      const shown = [...renewed[0]!.text.matchAll(/<li>([^<]+)<\/li>/g)].map((m) => m[1]!);
      assert.equal(shown.length, 10);
      const stored = await t.db.kysely.selectFrom('user_recovery_codes').select(['code_hash', 'used_at']).where('user_id', '=', id).execute();
      assert.deepEqual(
        stored.map((r) => Buffer.from(r.code_hash).toString('hex')).sort(),
        shown.map((c) => hashRecoveryCode(c).toString('hex')).sort(),
        'the codes kept are the ones the page showed',
      );
      assert.equal(
        await count(t, sql`select count(*)::int as n from audit_events where target_id = ${id} and action = 'user.recovery_codes_renewed'`),
        1,
      );
    });

    it('a password changed 20 times at once from the same current one: one change, and it is the password kept', async () => {
      const { client: me } = await signedInUser(t, 'password@acme.test', { tenant: child, roles: [Analyst] });
      const id = await userId('password@acme.test');
      const page = await me.get('/console/account');
      const next = (i: number) => `another unusual passphrase, number ${i}`;
      const answers = await atOnce(20, (i) =>
        me.post('/console/account/password', { _csrf: me.csrf(page), current: PASSWORD, password: next(i), confirmation: next(i) }),
      );
      noServerError(answers);
      const changed = [...answers.keys()].filter((i) => answers[i]!.status === 303);
      // as one after the other: once it changed, the others' current password is no longer it
      assert.equal(changed.length, 1, JSON.stringify(tally(answers)));
      // the others: changed meanwhile; or checked after it (wrong now); or, while five checks of
      // the account's password are under way, asked to wait (the sign-in throttle's gate)
      for (const a of answers.filter((a) => a.status !== 303)) {
        assert.ok([400, 429].includes(a.status), `${a.status}: ${alertOf(a)}`);
        assert.match(alertOf(a) ?? '', /^(Your current password is not right\.|Your password was changed meanwhile|Too many attempts)/);
      }
      const stored = await t.db.kysely.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow();
      assert.ok(await verifyPassword(stored.password_hash!, next(changed[0]!)), 'the password kept is the one the page said was set');
      assert.equal(await count(t, sql`select count(*)::int as n from audit_events where target_id = ${id} and action = 'user.password_changed'`), 1);
    });

    it('two browsers of one person confirming two new authenticators at once: one replaces it, and it is the one kept', async () => {
      const email = 'reenrol@acme.test';
      const { client: first, key } = await signedInUser(t, email, { tenant: child, roles: [Analyst] });
      const id = await userId(email);
      // a second browser, signed in with the same authenticator
      t.clock.advance(30_000);
      const second = new PageClient(t);
      await second.post('/login', { _csrf: second.csrf(await second.get('/login')), email });
      await second.post('/login', { _csrf: second.csrf(await second.get('/login')), password: PASSWORD });
      const signedIn = await second.post('/login', { _csrf: second.csrf(await second.get('/login')), code: totpCodeAt(key, t.clock.now()) });
      assert.equal(signedIn.status, 303, signedIn.text.slice(0, 300));
      // each begins a replacement (a current code each: one code, one use), and is shown its new key
      const newKeys: string[] = [];
      for (const browser of [first, second]) {
        t.clock.advance(30_000);
        const page = await browser.get('/console/account');
        const begun = await browser.post('/console/account/authenticator', { _csrf: browser.csrf(page), code: totpCodeAt(key, t.clock.now()) });
        assert.equal(begun.status, 200, begun.text.slice(0, 300));
        newKeys.push(/Key: <code>([A-Z2-7 ]+)<\/code>/.exec(begun.text)![1]!.replace(/ /g, ''));
      }
      t.clock.advance(30_000);
      const pages = [await first.get('/console/account/authenticator'), await second.get('/console/account/authenticator')];
      const browsers = [first, second];
      const answers = await atOnce(20, (i) =>
        browsers[i % 2]!.post('/console/account/authenticator/confirm', {
          _csrf: browsers[i % 2]!.csrf(pages[i % 2]!),
          code: totpCodeAt(newKeys[i % 2]!, t.clock.now()),
        }),
      );
      noServerError(answers);
      const replaced = [...answers.keys()].filter((i) => answers[i]!.status === 303 && !String(answers[i]!.headers.location).startsWith('/login'));
      const winners = new Set(replaced.map((i) => i % 2));
      // as one after the other: the first replacement ends the other browser's session, and its form with it
      const told = JSON.stringify(answers.map((a) => `${a.status} ${alertOf(a) ?? a.headers.location}`));
      assert.equal(replaced.length, 1, told);
      assert.equal(winners.size, 1, told);
      const winner = [...winners][0]!;
      for (const [i, a] of answers.entries()) {
        if (i % 2 === winner) continue;
        assert.ok(a.status >= 400 || String(a.headers.location).startsWith('/login'), `${a.status} ${alertOf(a)}`);
      }
      // the authenticator kept is the winner's: its codes are accepted at sign-in, the other's not
      t.clock.advance(30_000);
      const check = new PageClient(t);
      await check.post('/login', { _csrf: check.csrf(await check.get('/login')), email });
      await check.post('/login', { _csrf: check.csrf(await check.get('/login')), password: PASSWORD });
      const loser = await check.post('/login', {
        _csrf: check.csrf(await check.get('/login')),
        code: totpCodeAt(newKeys[1 - winner]!, t.clock.now()),
      });
      assert.equal(loser.status, 400, 'the other new key does not sign in');
      const kept = await check.post('/login', { _csrf: check.csrf(await check.get('/login')), code: totpCodeAt(newKeys[winner]!, t.clock.now()) });
      assert.equal(kept.status, 303, kept.text.slice(0, 300));
      assert.equal(await count(t, sql`select count(*)::int as n from audit_events where target_id = ${id} and action = 'user.totp_reenrolled'`), 1);
    });

    it('30 page loads at once of a session a change left a notice in: the notice shown once', async () => {
      const tenant = await createTenant(t, partner, { name: 'Notices' });
      const seeded = await createClient(t, await t.rootToken(), 'Noticed', { tenant, roles: [Analyst] });
      const confirm = await admin.get(`/console/credentials/delete?tenant=${tenant}&client=${seeded.clientId}`);
      const done = await admin.post('/console/credentials/delete', { _csrf: admin.csrf(confirm), tenant, client: seeded.clientId });
      assert.equal(done.status, 303);
      // the pages that show a notice: the list it leads to, and the tenant's other lists
      const pages = [`/console/credentials?tenant=${tenant}`, `/console/users?tenant=${tenant}`, `/console/tenant/labels?tenant=${tenant}`];
      const answers = await atOnce(30, (i) => admin.get(pages[i % pages.length]!));
      noServerError(answers);
      assert.deepEqual(tally(answers), { 200: 30 });
      const shown = answers.filter((a) => /class="notice"/.test(a.text));
      assert.equal(shown.length, 1, 'once');
      assert.match(shown[0]!.text, new RegExp(`Client Noticed \\(${seeded.clientId}\\) was deleted\\.`));
      assert.doesNotMatch((await admin.get(pages[0]!)).text, /class="notice"/, 'and not again');
    });
  });
}
