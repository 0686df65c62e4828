// The tenant page cases (console-cases/tenants.ts) as the vendor root Administrator, who may do
// every one of them but the restricted labels' changes: each request does what its effect reads
// back. (The page matrix runs them for every actor.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { type PageClient, signedInUser } from '../helpers/pages.js';
import { createTenant, tq } from '../helpers/tenants.js';
import { TENANT_CASES } from './console-cases/tenants.js';
import type { PageWorld } from './console-cases/types.js';

describe('tenant page cases, as the root Administrator', () => {
  let t: TestApp;
  let w: PageWorld;
  let root: PageClient;
  before(async () => {
    t = await startTestApp({ engine: 'pglite' });
    const P1 = await createTenant(t, '1', { name: 'P1', isPartner: true });
    const C1 = await createTenant(t, P1, { name: 'C1' });
    const C2 = await createTenant(t, P1, { name: 'C2' });
    const P2 = await createTenant(t, '1', { name: 'P2', isPartner: true });
    const rootToken = await t.rootToken();
    let n = 0;
    w = {
      t,
      P1,
      C1,
      C2,
      P2,
      rootToken,
      unique: (prefix) => `${prefix}-${++n}`,
      async gql(doc, variables, opts = {}) {
        const res =
          opts.iface === 'tenant'
            ? await tq(t, rootToken, doc, variables, opts.tenant)
            : await t.gql(rootToken, doc, variables, opts.tenant ? { tenant: opts.tenant } : {});
        assert.equal(res.body.errors, undefined, res.text);
        return res.body.data;
      },
    };
    ({ client: root } = await signedInUser(t, 'root@vendor.test', { tenant: '1', roles: [ROLE_IDS.Administrator] }));
  });
  after(() => t.close());

  for (const c of TENANT_CASES) {
    it(`${c.route} (${c.row})`, async () => {
      const s = (await c.prepare?.(w)) ?? {};
      const { path, form } = c.request(w, s);
      let res: Response;
      if (form) {
        const page = await root.get('/console');
        res = await root.post(path, { _csrf: root.csrf(page), ...form });
        if (c.row.includes('(restricted label)')) {
          assert.equal(res.status, 403, res.text);
          assert.match(res.text, /restricted/);
          return;
        }
        assert.equal(res.status, 303, res.text.slice(0, 3000));
      } else {
        res = await root.get(path);
        assert.equal(res.status, 200, res.text.slice(0, 3000));
      }
      await c.effect(w, s, res);
    });
  }
});
