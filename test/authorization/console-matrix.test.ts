// The page authorization matrix (issue: the admin console): every route of the console, as a
// signed-in person holding each role of the GraphQL matrix's columns (matrix-table.ts: own tenant,
// its partner above, a sibling, another partner, the vendor's staff, Support with and without
// consent), must have exactly the outcome of the GraphQL operation behind it. Allowed: the page
// shows what it is for, or the form's change takes effect. Refused: 403 (or 404 for what is not
// visible), and a refused form writes nothing but the audit event of the refusal. A console route
// without a case fails (deny by default), as a schema field without a row does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, signedInUser } from '../helpers/pages.js';
import { servedRoutes } from '../helpers/routes.js';
import { countRowWrites, rowWrites } from '../helpers/row-writes.js';
import { createTenant, TENANT_PATH } from '../helpers/tenants.js';
import { AUDIT_CASES } from './console-cases/audit.js';
import { CREDENTIAL_CASES } from './console-cases/credentials.js';
import { SSO_CASES } from './console-cases/sso.js';
import { TENANT_CASES } from './console-cases/tenants.js';
import { USER_CASES } from './console-cases/users.js';
import type { PageCase, PageWorld, State } from './console-cases/types.js';
import { ACTORS, parseTable, type ActorName, type Outcome } from './matrix-table.js';

const EXPECTED = parseTable();
const CASES: PageCase[] = [...TENANT_CASES, ...USER_CASES, ...SSO_CASES, ...CREDENTIAL_CASES, ...AUDIT_CASES];
const { Administrator, Analyst, Responder, Auditor, Operations, Support } = ROLE_IDS;

/** The people of the columns (a client's `self` column has no page counterpart): home tenant and role. */
const PEOPLE: Record<Exclude<ActorName, 'anon' | 'self'>, { home: 'root' | 'P1' | 'C1' | 'C2' | 'P2'; role: string }> = {
  'P1.adm': { home: 'P1', role: Administrator },
  'P1.ana': { home: 'P1', role: Analyst },
  'P1.res': { home: 'P1', role: Responder },
  'P1.aud': { home: 'P1', role: Auditor },
  'C1.adm': { home: 'C1', role: Administrator },
  'C1.ana': { home: 'C1', role: Analyst },
  'C1.res': { home: 'C1', role: Responder },
  'C1.aud': { home: 'C1', role: Auditor },
  'P2.adm': { home: 'P2', role: Administrator },
  'C2.adm': { home: 'C2', role: Administrator },
  ops: { home: 'root', role: Operations },
  'sup.off': { home: 'root', role: Support },
  'sup.C1': { home: 'root', role: Support },
  'sup.P1C1': { home: 'root', role: Support },
  'root.adm': { home: 'root', role: Administrator },
};

/** every console route the app serves, as 'METHOD /path' (HEAD and the catch-all left out) */
function consoleRoutes(t: TestApp): string[] {
  return servedRoutes(t)
    .filter((r) => r.path.startsWith('/console') && !r.path.includes('*'))
    .flatMap((r) => r.methods.filter((m) => m === 'GET' || m === 'POST').map((m) => `${m} ${r.path}`))
    .sort();
}

/** Console routes that are no GraphQL operation's: the person's own account (any signed-in
 *  person, on their own account only; test/http/console-account.test.ts), and the landing page
 *  (the tenants where they hold a role). Signed out, each leads to sign-in or is refused; but
 *  the link mailed to a new address (`…/email/confirm`), which says to sign in and open the link
 *  again, so that its token never rides into a sign-in's state (docs/users.md). */
const OWN = [
  'GET /console',
  'GET /console/account',
  'GET /console/account/authenticator',
  'POST /console/account/authenticator',
  'POST /console/account/authenticator/confirm',
  'POST /console/account/email',
  'GET /console/account/email/confirm',
  'POST /console/account/email/confirm',
  'POST /console/account/passkeys',
  'GET /console/account/passkeys/remove',
  'POST /console/account/passkeys/remove',
  'POST /console/account/password',
  'POST /console/account/recovery-codes',
  'POST /console/account/sessions',
];

for (const engine of transportEngines()) {
  describe(`console page authorization matrix (${engine})`, () => {
    let t: TestApp;
    let w: PageWorld;
    const people = new Map<ActorName, PageClient>();
    const csrfOf = new Map<ActorName, string>();
    let seq = 0;

    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_CLIENT_CREATE_LIMIT: '1000000', GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true' } });
      const rootToken = await t.rootToken();
      await countRowWrites(t.db.kysely);
      const P1 = await createTenant(t, '1', { name: 'P1', isPartner: true });
      const C1 = await createTenant(t, P1, { name: 'C1' });
      const C2 = await createTenant(t, P1, { name: 'C2' });
      const P2 = await createTenant(t, '1', { name: 'P2', isPartner: true });
      w = {
        t,
        P1,
        C1,
        C2,
        P2,
        rootToken,
        unique: (prefix) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 7)}`,
        async gql(doc, variables, opts = {}) {
          const res = await t.gql(rootToken, doc, variables, {
            ...(opts.tenant ? { tenant: opts.tenant } : {}),
            ...(opts.iface === 'tenant' ? { path: TENANT_PATH } : {}),
          });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.errors, undefined, res.text);
          return res.body.data;
        },
      };
      const homes = { root: '1', P1, C1, C2, P2 };
      for (const [name, p] of Object.entries(PEOPLE)) {
        const { client } = await signedInUser(t, `${name.replace('.', '-')}@matrix.test`, { tenant: homes[p.home], roles: [p.role] });
        people.set(name as ActorName, client);
      }
      people.set('anon', new PageClient(t));
    });
    after(() => t?.close());

    it('every console route has its case (deny by default: a route without one fails)', () => {
      const served = consoleRoutes(t);
      // the reading itself: it finds the routes it must (a reader that finds none passes nothing)
      for (const known of ['GET /console', 'GET /console/credentials', 'POST /console/credentials/new', 'POST /console/account/password']) {
        assert.ok(served.includes(known), `the route tree lists ${known}`);
      }
      const covered = new Set([...CASES.map((c) => c.route), ...OWN]);
      assert.deepEqual(
        served.filter((r) => !covered.has(r)),
        [],
        'console routes without a case in test/authorization/console-cases/',
      );
      assert.deepEqual(
        [...covered].filter((r) => !served.includes(r)),
        [],
        'cases of routes the app does not serve',
      );
      for (const c of CASES) assert.ok(EXPECTED.has(c.row), `${c.route}: no row ${c.row} in matrix-table.ts`);
    });

    it('the write count that proves "wrote nothing" sees every row written, even one written back as it was', async () => {
      const before = await rowWrites(t.db.kysely);
      await sql`update tenants set name = name where id = ${w.C1}`.execute(t.db.kysely);
      await sql`delete from role_assignments where false`.execute(t.db.kysely);
      assert.deepEqual(await rowWrites(t.db.kysely), { ...before, tenants: before.tenants! + 1 });
    });

    it("the person's own pages: signed out, a page leads to sign-in and a form is refused, writing nothing", async () => {
      const anon = people.get('anon')!;
      for (const route of OWN) {
        const [method, path] = route.split(' ') as [string, string];
        const before = await rowWrites(t.db.kysely);
        const res = method === 'GET' ? await anon.get(path) : await anon.post(path, {});
        if (route === 'GET /console/account/email/confirm') {
          assert.equal(res.status, 200, route);
          assert.match(res.text, /sign in/i, route);
          assert.equal(res.headers.location, undefined, route);
        } else if (method === 'GET') {
          assert.equal(res.status, 303, route);
          assert.match(String(res.headers.location), /^\/login\?return_to=/, route);
        } else assert.equal(res.status, 403, route);
        assert.deepEqual(await rowWrites(t.db.kysely), before, `${route} signed out wrote something`);
      }
    });

    async function setSupport(c1: boolean, p1: boolean): Promise<void> {
      await sql`update tenants set support_enabled = ${c1}, support_expires_at = null where id = ${w.C1}`.execute(t.db.kysely);
      await sql`update tenants set support_enabled = ${p1}, support_expires_at = null where id = ${w.P1}`.execute(t.db.kysely);
    }

    /** what the page amounts to, as the table names outcomes */
    function outcomeOf(c: PageCase, s: State, res: Response): Outcome | string {
      if (res.status === 303 && String(res.headers.location).startsWith('/login')) return 'UNAUTHENTICATED';
      if (res.status === 403) return 'refused';
      if (res.status === 404) return 'NOT_FOUND';
      if (res.status === 200 || res.status === 303) return c.hidden?.(w, s, res) ? 'NOT_FOUND' : 'ok';
      return `HTTP ${res.status}`;
    }

    async function runCell(c: PageCase, actor: ActorName, expected: Outcome): Promise<void> {
      await setSupport(c.supportC1?.(actor) ?? (actor === 'sup.C1' || actor === 'sup.P1C1'), actor === 'sup.P1C1');
      const s = (await c.prepare?.(w)) ?? {};
      const person = people.get(actor)!;
      const { path, form } = c.request(w, s);
      const post = c.route.startsWith('POST ');
      const before = post ? await rowWrites(t.db.kysely) : undefined;
      let res: Response;
      if (post) {
        // the session's CSRF token (anonymous: no session, no token), read once from a console page:
        // a session keeps its token
        const csrf = actor === 'anon' ? undefined : (csrfOf.get(actor) ?? csrfOf.set(actor, person.csrf(await person.get('/console'))).get(actor));
        res = await person.post(path, { ...(csrf ? { _csrf: csrf } : {}), ...form });
      } else res = await person.get(path);
      const got = outcomeOf(c, s, res);
      const refused = expected !== 'ok';
      if (expected === 'ok') {
        assert.equal(got, 'ok', `${c.route} as ${actor}: allowed, yet HTTP ${res.status} ${res.text.slice(0, 600)}`);
        await c.effect(w, s, res);
        return;
      }
      if (actor === 'anon') {
        // a page leads to sign-in; a form without a session is refused (no CSRF token can match)
        assert.equal(got, post ? 'refused' : 'UNAUTHENTICATED', `${c.route} signed out: HTTP ${res.status}`);
      } else if (expected === 'NOT_FOUND') {
        assert.ok(
          ['refused', 'NOT_FOUND'].includes(got),
          `${c.route} as ${actor}: expected not visible, got HTTP ${res.status} ${res.text.slice(0, 600)}`,
        );
      } else {
        assert.equal(got, 'refused', `${c.route} as ${actor}: expected ${expected}, got HTTP ${res.status} ${res.text.slice(0, 600)}`);
      }
      if (refused && before) {
        const afterwards = await rowWrites(t.db.kysely);
        // a change the person's roles in a tenant they see do not allow: its one refusal event
        // (RESTRICTED is no role's refusal: it writes none)
        const audited = res.status === 403 && actor !== 'anon' && expected !== 'RESTRICTED' && !/<h1>Tenant not found/.test(res.text) ? 1 : 0;
        assert.deepEqual(
          afterwards,
          { ...before, refused: before.refused! + audited },
          `${c.route} as ${actor} was refused, yet something was written`,
        );
      }
    }

    for (const c of CASES) {
      describe(c.route, () => {
        for (const actor of ACTORS) {
          const expected = EXPECTED.get(c.row)?.[actor];
          if (actor === 'self' || expected === 'n/a') continue;
          it(`${actor}: ${expected ?? 'NO TABLE ENTRY'}`, async () => {
            assert.ok(expected, `no table entry for ${c.row} × ${actor}`);
            await runCell(c, actor, expected);
          });
        }
      });
    }
  });
}
