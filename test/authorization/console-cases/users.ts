// The users pages (src/http/pages/console/users.ts) in the page matrix: each route acting in C1,
// on a user whose home is C1 (as matrix-table.ts's users rows), tied to the row of the GraphQL
// operation behind it. The role forms post `in` as the page does (empty, or the assignment's
// tenant: C1 here); giving a role in a tenant below the user's home is
// test/http/console-users.test.ts's. The account page (/console/account) acts in no tenant and has no row.
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../../src/access/roles.js';
import { emailKey } from '../../../src/users/model.js';
import type { PageCase, PageWorld, State } from './types.js';

const USER_FIELDS = 'id email disabled_at setup_expires_at role_assignments { id tenant_id role_id expires_at }';

/** a user of C1 holding Analyst, made by the root Administrator (its set-up link not used) */
const victim = async (w: PageWorld): Promise<State> => {
  const made = await w.gql(
    `mutation($e: String!, $r: [ID!]) { createUser(email: $e, roles: $r) { user { ${USER_FIELDS} } setup_url } }`,
    { e: `${w.unique('victim')}@matrix.test`, r: [ROLE_IDS.Analyst] },
    { tenant: w.C1 },
  );
  return { victim: made.createUser.user, setupUrl: made.createUser.setup_url };
};

/** the user as the root Administrator reads it now */
const readBack = async (w: PageWorld, id: string) =>
  (await w.gql(`query($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`, { id }, { tenant: w.C1 })).user;

/** the set-up link a page shows */
const shownLink = (text: string) => /id="setup_url"[^>]*value="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, '&');

const userForm = (w: PageWorld, s: State, more: Record<string, string> = {}) => ({ tenant: w.C1, user: s.victim.id, ...more });

export const USER_CASES: PageCase[] = [
  {
    route: 'GET /console/users',
    row: 'users',
    prepare: victim,
    request: (w) => ({ path: `/console/users?tenant=${w.C1}` }),
    effect: async (_w, s, res) => assert.ok(res.text.includes(s.victim.email), 'the user is listed'),
    hidden: (_w, s, res) => !res.text.includes(s.victim.email),
  },
  {
    route: 'GET /console/users/user',
    row: 'user',
    prepare: victim,
    request: (w, s) => ({ path: `/console/users/user?tenant=${w.C1}&user=${s.victim.id}` }),
    effect: async (_w, s, res) => assert.ok(res.text.includes(`<dd>${s.victim.email}</dd>`)),
  },
  {
    route: 'GET /console/users/invite',
    row: 'createUser',
    request: (w) => ({ path: `/console/users/invite?tenant=${w.C1}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/users\/invite"/),
  },
  {
    route: 'POST /console/users/invite',
    row: 'createUser',
    prepare: async (w) => ({ email: `${w.unique('invited')}@matrix.test` }),
    request: (w, s) => ({ path: '/console/users/invite', form: { tenant: w.C1, email: s.email, display_name: '', role: ROLE_IDS.Analyst } }),
    effect: async (w, s, res) => {
      assert.ok(shownLink(res.text), 'the set-up link is shown');
      const found = await w.gql('query($e: String) { users(email: $e) { email tenant_id } }', { e: s.email }, { tenant: w.C1 });
      assert.deepEqual(found.users, [{ email: s.email, tenant_id: w.C1 }]);
    },
  },
  {
    route: 'POST /console/users/roles',
    row: 'assignUserRole',
    prepare: victim,
    request: (w, s) => ({ path: '/console/users/roles', form: userForm(w, s, { role: ROLE_IDS.Auditor, in: '', expires: '' }) }),
    effect: async (w, s) => {
      const user = await readBack(w, s.victim.id);
      assert.ok(user.role_assignments.some((a: { tenant_id: string; role_id: string }) => a.tenant_id === w.C1 && a.role_id === ROLE_IDS.Auditor));
    },
  },
  {
    route: 'POST /console/users/roles/remove',
    row: 'removeUserRole',
    prepare: async (w) => {
      const s = await victim(w);
      const user = (
        await w.gql(
          `mutation($u: ID!, $r: ID!) { assignUserRole(user_id: $u, role_id: $r) { ${USER_FIELDS} } }`,
          { u: s.victim.id, r: ROLE_IDS.Auditor },
          { tenant: w.C1 },
        )
      ).assignUserRole;
      const assignment = user.role_assignments.find((a: { role_id: string }) => a.role_id === ROLE_IDS.Auditor);
      return { ...s, assignment: assignment.id };
    },
    request: (w, s) => ({ path: '/console/users/roles/remove', form: userForm(w, s, { in: w.C1, assignment: s.assignment }) }),
    effect: async (w, s) => {
      const user = await readBack(w, s.victim.id);
      assert.ok(!user.role_assignments.some((a: { id: string }) => a.id === s.assignment), 'the assignment is gone');
    },
  },
  {
    route: 'POST /console/users/disable',
    row: 'disableUser',
    prepare: victim,
    request: (w, s) => ({ path: '/console/users/disable', form: userForm(w, s) }),
    effect: async (w, s) => assert.notEqual((await readBack(w, s.victim.id)).disabled_at, null),
  },
  {
    route: 'POST /console/users/enable',
    row: 'enableUser',
    prepare: async (w) => {
      const s = await victim(w);
      await w.gql('mutation($id: ID!) { disableUser(id: $id) { id } }', { id: s.victim.id }, { tenant: w.C1 });
      return s;
    },
    request: (w, s) => ({ path: '/console/users/enable', form: userForm(w, s) }),
    effect: async (w, s) => assert.equal((await readBack(w, s.victim.id)).disabled_at, null),
  },
  {
    route: 'POST /console/users/reset',
    row: 'resetUserSignIn',
    prepare: victim,
    request: (w, s) => ({ path: '/console/users/reset', form: userForm(w, s) }),
    effect: async (_w, s, res) => {
      const link = shownLink(res.text);
      assert.ok(link, 'a new set-up link is shown');
      assert.notEqual(link, s.setupUrl, 'a new one');
    },
  },
  {
    route: 'POST /console/users/unlock',
    row: 'unlockUserSignIn',
    prepare: async (w) => {
      // a failure count of the user's account, which the unlock clears
      const s = await victim(w);
      const key = `accountAll:${emailKey(s.victim.email)}`;
      await sql`insert into sign_in_failures (key, failures, first_failure_at, last_failure_at) values (${key}, 100, now(), now())`.execute(
        w.t.db.kysely,
      );
      return { ...s, key };
    },
    request: (w, s) => ({ path: '/console/users/unlock', form: userForm(w, s) }),
    effect: async (w, s) => {
      const left = await sql`select key from sign_in_failures where key = ${s.key}`.execute(w.t.db.kysely);
      assert.deepEqual(left.rows, [], 'the count is cleared');
    },
  },
  {
    route: 'GET /console/users/delete',
    row: 'deleteUser',
    prepare: victim,
    request: (w, s) => ({ path: `/console/users/delete?tenant=${w.C1}&user=${s.victim.id}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/users\/delete"/),
  },
  {
    route: 'POST /console/users/delete',
    row: 'deleteUser',
    prepare: victim,
    request: (w, s) => ({ path: '/console/users/delete', form: userForm(w, s) }),
    effect: async (w, s) => {
      const left = await w.gql('query($e: String) { users(email: $e) { id } }', { e: s.victim.email }, { tenant: w.C1 });
      assert.deepEqual(left.users, [], 'the user is gone');
    },
  },
];
