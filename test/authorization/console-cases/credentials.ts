// The credentials pages (src/http/pages/console/credentials.ts) in the page matrix.
import assert from 'node:assert/strict';
import { ROLE_IDS } from '../../../src/access/roles.js';
import { createClient } from '../../helpers/seed.js';
import type { PageCase, PageWorld } from './types.js';

/** a client of C1 holding Auditor, made by the root Administrator; with its secret */
const victim = async (w: PageWorld) => ({
  victim: await createClient(w.t, w.rootToken, w.unique('victim'), { roles: [ROLE_IDS.Auditor], tenant: w.C1 }),
});

const liveClient = async (w: PageWorld, clientId: string) =>
  (await w.gql('query($ids: [String]) { clients(clientIDs: $ids) { id revoked_at } }', { ids: [clientId] }, { tenant: w.C1 })).clients;

export const CREDENTIAL_CASES: PageCase[] = [
  {
    route: 'GET /console/credentials',
    row: 'clients',
    prepare: victim,
    request: (w) => ({ path: `/console/credentials?tenant=${w.C1}` }),
    effect: async (_w, s, res) => assert.match(res.text, new RegExp(s.victim.clientId)),
  },
  {
    route: 'GET /console/credentials/new',
    row: 'createClient',
    request: (w) => ({ path: `/console/credentials/new?tenant=${w.C1}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/credentials\/new"/),
  },
  {
    route: 'POST /console/credentials/new',
    row: 'createClient',
    prepare: async (w) => ({ name: w.unique('made') }),
    request: (w, s) => ({ path: '/console/credentials/new', form: { tenant: w.C1, name: s.name, [`role_${ROLE_IDS.Analyst}`]: ROLE_IDS.Analyst } }),
    effect: async (w, s, res) => {
      assert.match(res.text, /id="client_secret"/);
      const made = await w.gql('query($t: [ID]) { clients(tenantIDs: $t) { name } }', { t: [w.C1] }, { tenant: w.C1 });
      assert.ok(made.clients.some((c: { name: string }) => c.name === s.name));
    },
  },
  {
    route: 'GET /console/credentials/rotate',
    row: 'rotateClientSecret',
    prepare: victim,
    request: (w, s) => ({ path: `/console/credentials/rotate?tenant=${w.C1}&client=${s.victim.clientId}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/credentials\/rotate"/),
  },
  {
    route: 'POST /console/credentials/rotate',
    row: 'rotateClientSecret',
    prepare: victim,
    request: (w, s) => ({
      path: '/console/credentials/rotate',
      form: { tenant: w.C1, client: s.victim.clientId, secret: s.victim.secret, grace: '0' },
    }),
    effect: async (w, s, res) => {
      assert.match(res.text, /id="client_secret"/);
      assert.equal((await w.t.tokenResponse(s.victim.clientId, s.victim.secret)).status, 401, 'the old secret stopped');
    },
  },
  {
    route: 'GET /console/credentials/force-rotate',
    row: 'forceRotateClientSecret',
    prepare: victim,
    request: (w, s) => ({ path: `/console/credentials/force-rotate?tenant=${w.C1}&client=${s.victim.clientId}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/credentials\/force-rotate"/),
  },
  {
    route: 'POST /console/credentials/force-rotate',
    row: 'forceRotateClientSecret',
    prepare: victim,
    request: (w, s) => ({ path: '/console/credentials/force-rotate', form: { tenant: w.C1, client: s.victim.clientId } }),
    effect: async (w, s, res) => {
      const secret = /id="client_secret"[^>]*value="([^"]+)"/.exec(res.text)?.[1];
      assert.ok(secret, 'the new secret is shown');
      assert.equal((await w.t.tokenResponse(s.victim.clientId, s.victim.secret)).status, 401, 'the old secret stopped at once');
      assert.equal((await w.t.tokenResponse(s.victim.clientId, secret)).status, 200, 'the new one works');
    },
  },
  {
    route: 'GET /console/credentials/delete',
    row: 'deleteClient',
    prepare: victim,
    request: (w, s) => ({ path: `/console/credentials/delete?tenant=${w.C1}&client=${s.victim.clientId}` }),
    effect: async (_w, _s, res) => assert.match(res.text, /action="\/console\/credentials\/delete"/),
  },
  {
    route: 'POST /console/credentials/delete',
    row: 'deleteClient',
    prepare: victim,
    request: (w, s) => ({ path: '/console/credentials/delete', form: { tenant: w.C1, client: s.victim.clientId } }),
    effect: async (w, s) => assert.deepEqual(await liveClient(w, s.victim.clientId), []),
  },
];
