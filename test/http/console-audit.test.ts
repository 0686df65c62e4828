// The console's audit trail page and forced rotation : the trail of a tenant and
// those below it with the auditEvents filters and cursor pages, shown to Administrators only; a
// forced rotation stops every old secret at once and shows the new one once; the list shows each
// live secret with its last use.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { type PageClient, signedInUser } from '../helpers/pages.js';
import { createClient, rowCounts } from '../helpers/seed.js';
import { createTenant } from '../helpers/tenants.js';

const { Administrator, Analyst, Operations } = ROLE_IDS;

/** the actions of the events a trail page lists, in its order */
const actions = (res: Response) => [...res.text.matchAll(/<th scope="row" data-label="Action"><code>([^<]+)<\/code>/g)].map((m) => m[1]);
const shownSecret = (res: Response) => /id="client_secret"[^>]*value="([^"]+)"/.exec(res.text)?.[1];

for (const engine of transportEngines()) {
  describe(`console: audit trail and forced rotation (${engine})`, () => {
    let t: TestApp;
    let partner: string;
    let child: string;
    let admin: PageClient;
    let analyst: PageClient;
    let ops: PageClient;

    before(async () => {
      t = await startTestApp({ engine });
      partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
      child = await createTenant(t, partner, { name: 'Acme Child' });
      ({ client: admin } = await signedInUser(t, 'admin@acme.test', { tenant: partner, roles: [Administrator] }));
      ({ client: analyst } = await signedInUser(t, 'analyst@acme.test', { tenant: partner, roles: [Analyst] }));
      ({ client: ops } = await signedInUser(t, 'ops@vendor.test', { tenant: '1', roles: [Operations] }));
    });
    after(() => t.close());

    it('the trail is a tab of the tenant for its Administrators, and refused to an Analyst', async () => {
      const list = await admin.get(`/console/credentials?tenant=${child}`);
      assert.match(list.text, new RegExp(`<a href="/console/audit\\?tenant=${child}">Audit trail</a>`));
      const theirs = await analyst.get(`/console/credentials?tenant=${child}`);
      assert.equal(theirs.status, 200);
      assert.doesNotMatch(theirs.text, /Audit trail/, 'the tab is not offered');
      const refused = await analyst.get(`/console/audit?tenant=${child}`);
      assert.equal(refused.status, 403);
      assert.match(refused.text, /do not allow you to read the audit trail/);
    });

    it('filters by action, outcome and tenant, newest first, and pages with the cursor', async () => {
      const root = await t.rootToken();
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        t.clock.advance(1000);
        made.push((await createClient(t, root, `audited-${i}`, { tenant: child })).id);
      }
      let res = await admin.get(`/console/audit?tenant=${partner}&action=client.created`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(actions(res), ['client.created', 'client.created', 'client.created']);
      // newest first: the last one made is the first row
      const ids = [...res.text.matchAll(/data-label="Target">client <code>([0-9a-f-]{36})<\/code>/g)].map((m) => m[1]);
      assert.deepEqual(ids, [...made].reverse());
      // the tenant filter: the partner's own events only (none of these)
      res = await admin.get(`/console/audit?tenant=${partner}&action=client.created&in=${partner}`);
      assert.match(res.text, /No events match these filters/);
      // a refusal is an event with its outcome
      await analyst.get(`/console/audit?tenant=${child}`);
      const form = await analyst.get(`/console/credentials?tenant=${child}`);
      await analyst.post('/console/credentials/delete', { _csrf: analyst.csrf(form), tenant: child, client: 'gh_nope' });
      res = await admin.get(`/console/audit?tenant=${partner}&outcome=refused`);
      assert.equal(res.status, 200);
      for (const a of actions(res)) assert.equal(a, 'authorization.refused');

      // more than a page: 55 sign-in events, read 50 then 5 through "Older events"
      await t.service.store.transaction(async (tx) => {
        for (let i = 0; i < 55; i++) {
          await tx.audit.insertEvent({
            occurredAt: new Date(t.clock.now().getTime() + 1000 + i),
            tenantId: child,
            actor: { kind: 'system', id: 'test' },
            action: 'test.paged',
            target: { kind: 'tenant', id: child },
            details: { n: i },
          });
        }
      });
      res = await admin.get(`/console/audit?tenant=${child}&action=test.paged`);
      assert.equal(actions(res).length, 50);
      const older = /<a href="([^"]+)" rel="next">Older events<\/a>/.exec(res.text)?.[1]?.replace(/&amp;/g, '&');
      assert.ok(older, 'a link to the older events');
      res = await admin.get(older);
      assert.equal(actions(res).length, 5);
      assert.doesNotMatch(res.text, /Older events/);
      assert.match(res.text, /Newest events/);
    });

    it('bad filters show the form again with what to do, and no events', async () => {
      let res = await admin.get(`/console/audit?tenant=${child}&from=2026-12-01T10:00&to=2026-11-01T10:00`);
      assert.equal(res.status, 400);
      assert.match(res.text, /role="alert"/);
      assert.match(res.text, /filter.from is after filter.to/);
      assert.match(res.text, /value="2026-12-01T10:00"/, 'what was typed is kept');
      assert.doesNotMatch(res.text, /<table/);
      res = await admin.get(`/console/audit?tenant=${child}&from=yesterday`);
      assert.equal(res.status, 400);
      assert.match(res.text, /such as 2026-11-28T09:30 \(UTC\)/);
      res = await admin.get(`/console/audit?tenant=${child}&outcome=maybe`);
      assert.equal(res.status, 400);
    });

    it('a forced rotation stops every secret at once and shows the new one once; the list shows each secret and its last use', async () => {
      const root = await t.rootToken();
      const victim = await createClient(t, root, 'leaky', { roles: [Analyst], tenant: child });
      assert.equal((await t.tokenResponse(victim.clientId, victim.secret)).status, 200);
      let list = await admin.get(`/console/credentials?tenant=${child}`);
      // its hint (the secret's prefix and last four characters), and when it obtained a token
      assert.match(list.text, new RegExp(`<code>gatehouse_cs_…${victim.secret.slice(-4)}</code> <span class="hint">last used (<time|never)`));
      const confirm = await admin.get(`/console/credentials/force-rotate?tenant=${child}&client=${victim.clientId}`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.text, /Every secret it has stops working at once/);
      const res = await admin.post('/console/credentials/force-rotate', { _csrf: admin.csrf(confirm), tenant: child, client: victim.clientId });
      assert.equal(res.status, 200);
      const secret = shownSecret(res);
      assert.ok(secret);
      assert.match(res.text, /Every earlier secret of this client stopped working/);
      assert.equal((await t.tokenResponse(victim.clientId, victim.secret)).status, 401);
      assert.equal((await t.tokenResponse(victim.clientId, secret)).status, 200);
      list = await admin.get(`/console/credentials?tenant=${child}`);
      assert.ok(!list.text.includes(secret), 'the list never shows a secret');
      const trail = await admin.get(`/console/audit?tenant=${child}&action=client.secret_force_rotated`);
      assert.deepEqual(actions(trail), ['client.secret_force_rotated']);
    });

    it('Operations may not take over a client holding roles it could not give: refused before the form, in words, nothing written', async () => {
      const root = await t.rootToken();
      const victim = await createClient(t, root, 'analyst-client', { roles: [Analyst], tenant: child });
      const before = await rowCounts(t);
      const page = await ops.get(`/console/credentials/force-rotate?tenant=${child}&client=${victim.clientId}`);
      assert.equal(page.status, 403);
      assert.match(page.text, /holds roles you could not give it yourself \(Analyst/);
      assert.match(page.text, /Delete the client instead/);
      const form = await ops.get(`/console/credentials?tenant=${child}`);
      const posted = await ops.post('/console/credentials/force-rotate', { _csrf: ops.csrf(form), tenant: child, client: victim.clientId });
      assert.equal(posted.status, 403);
      assert.deepEqual(await rowCounts(t), before);
      assert.equal((await t.tokenResponse(victim.clientId, victim.secret)).status, 200, 'the secret still works');
    });
  });
}
