// The tenant pages of the console over HTTP (src/http/pages/console/tenants.ts, tenant-forms.ts):
// the overview (facts, environments, expiry and days left, labels, subscriptions, support, the
// tenants under it, the breadcrumbs of its ancestors), the search with the filters and both
// paging modes of the `tenants` query, and every form: each change read back through GraphQL,
// bad input shown again on its form with words saying what to do and nothing written, the state
// table's refusals in clear words, CSRF, and signed-out visitors led to sign-in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { PageClient, signedInUser } from '../helpers/pages.js';
import { rowCounts } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const { Administrator, Auditor } = ROLE_IDS;
const DAY = 86_400_000;

describe('console tenant pages', () => {
  let t: TestApp;
  let partner: string;
  let child: string;
  let sibling: string;
  let other: string;
  let admin: PageClient;
  let childAdmin: PageClient;
  let auditor: PageClient;

  before(async () => {
    t = await startTestApp({ engine: 'pglite' });
    partner = await createTenant(t, '1', { name: 'Acme Partners', isPartner: true });
    child = await createTenant(t, partner, { name: 'Acme Child', environments: ['echo', 'pilot'], labels: [{ name: 'tier', value: 'gold' }] });
    sibling = await createTenant(t, partner, { name: 'Beta Sibling' });
    other = await createTenant(t, '1', { name: 'Elsewhere Ltd' });
    ({ client: admin } = await signedInUser(t, 'padmin@acme.test', { tenant: partner, roles: [Administrator] }));
    ({ client: childAdmin } = await signedInUser(t, 'cadmin@acme.test', { tenant: child, roles: [Administrator] }));
    ({ client: auditor } = await signedInUser(t, 'paud@acme.test', { tenant: partner, roles: [Auditor] }));
  });
  after(() => t.close());

  /** The tenant as the tenant interface reads it (the root Administrator). */
  async function read(id: string): Promise<any> {
    const res = await tq(
      t,
      await t.rootToken(),
      `query($ids: [ID!]) { tenants(tenantsQuery: {ids: $ids}) { results { id name domain description allow_response_actions actions_approver expires_at
        support_enabled support_expires_at support_reason enabled_in_production enabled_in_pilot
        environments { name enabled } labels { id name value restricted } partnership { subscriptions { id name } child_tenants { id name } } } } }`,
      { ids: [id] },
    );
    assert.equal(res.body.errors, undefined, res.text);
    return res.body.data.tenants.results[0];
  }

  /** GETs a form page, then posts `form` with its CSRF token. */
  async function submit(c: PageClient, page: string, action: string, form: Record<string, string>): Promise<Response> {
    const shown = await c.get(page);
    assert.equal(shown.status, 200, shown.text);
    return c.post(action, { _csrf: c.csrf(shown), ...form });
  }

  const noticeAfter = async (c: PageClient, res: Response) => {
    assert.equal(res.status, 303, res.text);
    const next = await c.get(res.headers.location as string);
    return next;
  };

  it('every tenant page, signed out, leads to sign-in and back', async () => {
    const anonymous = new PageClient(t);
    for (const path of [
      '/console/tenant',
      '/console/tenants',
      '/console/tenant/new',
      '/console/tenant/edit',
      '/console/tenant/support',
      '/console/tenant/labels',
      '/console/tenant/subscriptions',
      '/console/tenant/offerings',
    ]) {
      const url = `${path}?tenant=${child}`;
      const res = await anonymous.get(url);
      assert.equal(res.status, 303, url);
      assert.equal(res.headers.location, `/login?return_to=${encodeURIComponent(url)}`);
    }
  });

  it('the overview shows the facts, environments, expiry with days left, labels, support, the breadcrumbs and tenants below', async () => {
    const expires = new Date(t.clock.now().getTime() + 10 * DAY);
    const set = await tq(
      t,
      await t.rootToken(),
      'mutation($id: ID!, $e: Time) { updateTenant(tenantID: $id, tenantUpdate: {expiresAt: $e}) { id } }',
      {
        id: child,
        e: expires.toISOString(),
      },
    );
    assert.equal(set.body.errors, undefined, set.text);
    const res = await admin.get(`/console/tenant?tenant=${child}`);
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /<h1[^>]*>Acme Child<\/h1>/);
    assert.match(res.text, /<th scope="row">echo<\/th><td data-label="Enabled">Yes/);
    assert.match(res.text, /<th scope="row">pilot<\/th><td data-label="Enabled">Yes/);
    assert.match(res.text, /tier.*gold/s);
    assert.match(res.text, /days left<\/strong> before it is disabled/);
    assert.match(res.text, /Support access<\/dt><dd>Off/);
    // breadcrumbs: the partner above it (the vendor tenant 1 is not the partner admin's to see)
    assert.match(
      res.text,
      new RegExp(
        `<li><a href="/console/tenant\\?tenant=${partner}">Acme Partners</a></li><li><a href="/console/tenant\\?tenant=${child}">Acme Child</a>`,
      ),
    );
    assert.doesNotMatch(res.text, /href="\/console\/tenant\?tenant=1"/);
    // the Overview tab comes first
    assert.match(res.text, /aria-label="Sections of Acme Child"><ul><li><a href="[^"]+" aria-current="page">Overview<\/a>/);
    // the partner's page lists its children, paged, and links to create and search
    const p = await admin.get(`/console/tenant?tenant=${partner}`);
    assert.match(p.text, /2 tenants<\/p>|2 tenants directly under it/);
    assert.match(p.text, /Acme Child/);
    assert.match(p.text, /Beta Sibling/);
    assert.match(p.text, /href="\/console\/tenant\/new\?tenant=/);
    // an Auditor reads the page without the links to change it
    const a = await auditor.get(`/console/tenant?tenant=${child}`);
    assert.equal(a.status, 200);
    assert.doesNotMatch(a.text, /\/console\/tenant\/edit/);
    assert.doesNotMatch(a.text, /\/console\/tenant\/support/);
    // a tenant out of reach: refused, the same words as for one that does not exist
    const out = await admin.get(`/console/tenant?tenant=${other}`);
    const none = await admin.get('/console/tenant?tenant=999999');
    assert.equal(out.status, 403);
    assert.equal(none.status, 403);
    assert.match(out.text, new RegExp(`No tenant ${other} is visible to you`));
  });

  it('the search filters as the tenants query does, in page and cursor mode', async () => {
    let res = await admin.get(`/console/tenants?tenant=${partner}&name=acme%25`);
    assert.equal(res.status, 200, res.text);
    // the acting tenant's subtree, itself included (forHierarchies)
    assert.match(res.text, /2 tenants match/);
    assert.match(res.text, /Acme Child<\/a>/);
    assert.doesNotMatch(res.text, /Beta Sibling<\/a>/);
    res = await admin.get(`/console/tenants?tenant=${partner}&env=pilot&env_state=yes`);
    assert.match(res.text, /Acme Child<\/a>/);
    assert.doesNotMatch(res.text, /Beta Sibling<\/a>/);
    res = await admin.get(`/console/tenants?tenant=${partner}&label=tier`);
    assert.match(res.text, /Acme Child<\/a>/);
    res = await admin.get(`/console/tenants?tenant=${partner}&kind=partner`);
    assert.match(res.text, /Acme Partners<\/a>/);
    assert.doesNotMatch(res.text, /Acme Child<\/a>/);
    res = await admin.get(`/console/tenants?tenant=${partner}&ids=${sibling}`);
    assert.match(res.text, /Beta Sibling<\/a>/);
    assert.doesNotMatch(res.text, /Acme Child<\/a>/);
    // never a tenant outside the acting tenant's subtree
    res = await admin.get(`/console/tenants?tenant=${partner}&name=Elsewhere%20Ltd`);
    assert.match(res.text, /0 tenants match/);
    // page mode: a page of 1, the total, a next page
    res = await admin.get(`/console/tenants?tenant=${partner}&per_page=1&order_by=Name`);
    assert.match(res.text, /3 tenants match/);
    assert.match(res.text, /rel="next"/);
    res = await admin.get(`/console/tenants?tenant=${partner}&per_page=1&order_by=Name&page=2`);
    assert.match(res.text, /Acme Partners<\/a>/);
    // cursor mode: follow the next link
    res = await admin.get(`/console/tenants?tenant=${partner}&per_page=1&order_by=Name&mode=cursor`);
    assert.match(res.text, /Acme Child<\/a>/);
    const next = /<a href="([^"]+)" rel="next">/.exec(res.text)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(next, 'a next link');
    res = await admin.get(next);
    assert.match(res.text, /Acme Partners<\/a>/);
    assert.match(res.text, />First page</);
    // bad input: shown above the form, with words saying what to do
    res = await admin.get(`/console/tenants?tenant=${partner}&created_from=2026-05-01T00:00&created_to=2026-01-01T00:00&name=keep`);
    assert.equal(res.status, 400);
    assert.match(res.text, /role="alert"/);
    assert.match(res.text, /startTime is after endTime/);
    assert.match(res.text, /value="keep"/);
    // a time the field cannot hold: named
    res = await admin.get(`/console/tenants?tenant=${partner}&modified_to=2026-05-01T00:00%2B05:00`);
    assert.equal(res.status, 400);
    assert.match(res.text, /modified_to must be a date and time such as 2026-11-28T09:30 \(UTC\)/);
  });

  it('creates a tenant under a partner; bad input is shown again and creates nothing', async () => {
    let res = await submit(admin, `/console/tenant/new?tenant=${partner}`, '/console/tenant/new', {
      tenant: partner,
      name: 'Gamma New',
      env_delta: 'yes',
      domain: 'gamma.example',
      allow_response_actions: 'yes',
    });
    const page = await noticeAfter(admin, res);
    assert.match(page.text, /Tenant Gamma New \(id \d+\) was created under Acme Partners/);
    const id = /Gamma New \(id (\d+)\)/.exec(page.text)![1]!;
    const made = await read(id);
    assert.equal(made.domain, 'gamma.example');
    assert.equal(made.allow_response_actions, true);
    assert.deepEqual(
      made.environments.map((e: { name: string; enabled: boolean }) => [e.name, e.enabled]),
      [['delta', true]],
    );
    // no environment: shown again, with the name kept, nothing created
    const before = (await read(partner)).partnership.child_tenants.length;
    res = await submit(admin, `/console/tenant/new?tenant=${partner}`, '/console/tenant/new', { tenant: partner, name: 'Nowhere' });
    assert.equal(res.status, 400);
    assert.match(res.text, /at least one environment/);
    assert.match(res.text, /Tick one or more environments/);
    assert.match(res.text, /value="Nowhere"/);
    assert.equal((await read(partner)).partnership.child_tenants.length, before);
    // an empty name: the form again, saying what to do
    res = await submit(admin, `/console/tenant/new?tenant=${partner}`, '/console/tenant/new', { tenant: partner, name: '  ', env_echo: 'yes' });
    assert.equal(res.status, 400);
    assert.match(res.text, /role="alert"><p>The name [^<]+\.<\/p><p>Enter a name that says what it is for/);
    assert.equal((await read(partner)).partnership.child_tenants.length, before);
    // under a tenant that is not a partner: refused in clear words
    res = await admin.get(`/console/tenant/new?tenant=${child}`);
    assert.equal(res.status, 400);
    assert.match(res.text, /tenants are created only under partners/);
    // CSRF missing
    const form = await admin.get(`/console/tenant/new?tenant=${partner}`);
    assert.ok(form.status === 200);
    res = await admin.post('/console/tenant/new', { tenant: partner, name: 'No Token', env_echo: 'yes' });
    assert.equal(res.status, 403);
    assert.equal((await read(partner)).partnership.child_tenants.length, before);
  });

  it('edits the profile and the limits; the state table refuses in clear words', async () => {
    let res = await submit(admin, `/console/tenant/edit?tenant=${sibling}`, '/console/tenant/edit', {
      tenant: sibling,
      part: 'profile',
      name: 'Beta Renamed',
      domain: 'beta.example',
      description: 'A sibling',
      allow_response_actions: 'yes',
      actions_approver: 'sec@beta.example',
    });
    let page = await noticeAfter(admin, res);
    assert.match(page.text, /Beta Renamed was saved/);
    let now = await read(sibling);
    assert.equal(now.name, 'Beta Renamed');
    assert.equal(now.description, 'A sibling');
    assert.equal(now.actions_approver, 'sec@beta.example');
    // limits: pilot on, echo off, an expiry
    res = await submit(admin, `/console/tenant/edit?tenant=${sibling}`, '/console/tenant/edit', {
      tenant: sibling,
      part: 'limits',
      env_echo: 'off',
      env_delta: 'off',
      env_pilot: 'on',
      expires_at: new Date(t.clock.now().getTime() + 30 * DAY).toISOString().slice(0, 16),
    });
    page = await noticeAfter(admin, res);
    now = await read(sibling);
    assert.equal(now.enabled_in_pilot, true);
    assert.equal(now.enabled_in_production, false);
    assert.ok(now.expires_at);
    // bad input: a domain that is not one; shown again, nothing written
    res = await submit(admin, `/console/tenant/edit?tenant=${sibling}`, '/console/tenant/edit', {
      tenant: sibling,
      part: 'profile',
      name: 'X',
      domain: 'not a domain',
    });
    assert.equal(res.status, 400);
    assert.match(res.text, /is not a domain name/);
    assert.match(res.text, /value="not a domain"/);
    assert.equal((await read(sibling)).name, 'Beta Renamed');
    // both an expiry and its removal
    res = await submit(admin, `/console/tenant/edit?tenant=${sibling}`, '/console/tenant/edit', {
      tenant: sibling,
      part: 'limits',
      expires_at: '2099-01-01T00:00',
      clear_expiration: 'yes',
    });
    assert.equal(res.status, 303, 'removing wins: the expiry field is not sent with it');
    assert.equal((await read(sibling)).expires_at, null);
    // disabled by its expiry: enabling alone is refused, with what to do
    const gone = await createTenant(t, partner, { name: 'Expired One' });
    const past = new Date(t.clock.now().getTime() - 400 * DAY).toISOString();
    const r = await tq(
      t,
      await t.rootToken(),
      'mutation($id: ID!, $e: Time) { updateTenant(tenantID: $id, tenantUpdate: {expiresAt: $e, disable: true}) { id } }',
      { id: gone, e: past },
    );
    assert.equal(r.body.errors, undefined, r.text);
    res = await submit(admin, `/console/tenant/edit?tenant=${gone}`, '/console/tenant/edit', {
      tenant: gone,
      part: 'limits',
      env_echo: 'on',
      expires_at: past.slice(0, 16),
    });
    assert.equal(res.status, 400);
    assert.match(res.text, /was disabled because it expired/);
    assert.match(res.text, /Set a later expiry/);
    assert.equal((await read(gone)).enabled_in_production, false);
    // with a later expiry in the same change it is allowed
    res = await submit(admin, `/console/tenant/edit?tenant=${gone}`, '/console/tenant/edit', {
      tenant: gone,
      part: 'limits',
      env_echo: 'on',
      expires_at: new Date(t.clock.now().getTime() + 5 * DAY).toISOString().slice(0, 16),
    });
    assert.equal(res.status, 303, res.text);
    assert.equal((await read(gone)).enabled_in_production, true);
    // the tenant's own Administrator edits its profile, not its limits (its partner decides)
    const own = await childAdmin.get(`/console/tenant/edit?tenant=${child}`);
    assert.equal(own.status, 200);
    assert.doesNotMatch(own.text, /name="part" value="limits"/);
    res = await childAdmin.post('/console/tenant/edit', { _csrf: childAdmin.csrf(own), tenant: child, part: 'limits', env_pilot: 'off' });
    assert.equal(res.status, 403);
    assert.match(res.text, /do not allow you to change environments/);
    assert.equal((await read(child)).enabled_in_pilot, true);
    // CSRF
    res = await admin.post('/console/tenant/edit', { tenant: sibling, part: 'profile', name: 'No Token' });
    assert.equal(res.status, 403);
    assert.equal((await read(sibling)).name, 'Beta Renamed');
  });

  it('turns support access on with an end and a reason, and off', async () => {
    const until = new Date(t.clock.now().getTime() + 3 * DAY).toISOString().slice(0, 16);
    let res = await submit(admin, `/console/tenant/support?tenant=${child}`, '/console/tenant/support', {
      tenant: child,
      action: 'enable',
      until,
      reason: 'ticket 42',
    });
    let page = await noticeAfter(admin, res);
    assert.match(page.text, /Support access to Acme Child is on until/);
    let now = await read(child);
    assert.equal(now.support_enabled, true);
    assert.equal(now.support_reason, 'ticket 42');
    assert.equal(new Date(now.support_expires_at).toISOString().slice(0, 16), until);
    // typed to the second (as a browser sends a value with seconds): UTC too, not the server's time zone
    res = await submit(admin, `/console/tenant/support?tenant=${child}`, '/console/tenant/support', {
      tenant: child,
      action: 'enable',
      until: `${until}:30`,
      reason: 'ticket 42',
    });
    await noticeAfter(admin, res);
    assert.equal(new Date((await read(child)).support_expires_at).toISOString(), `${until}:30.000Z`);
    // not a date and time: the form again, saying so
    res = await submit(admin, `/console/tenant/support?tenant=${child}`, '/console/tenant/support', {
      tenant: child,
      action: 'enable',
      until: 'tomorrow',
      reason: 'ticket 42',
    });
    assert.equal(res.status, 400);
    assert.match(res.text, /That is not a date and time\./);
    assert.equal(new Date((await read(child)).support_expires_at).toISOString(), `${until}:30.000Z`);
    // an end in the past: shown again with what to do, nothing changed
    res = await submit(admin, `/console/tenant/support?tenant=${child}`, '/console/tenant/support', {
      tenant: child,
      action: 'enable',
      until: '2001-01-01T00:00',
      reason: 'other',
    });
    assert.equal(res.status, 400);
    assert.match(res.text, /The end of support access must be in the future/);
    assert.equal((await read(child)).support_reason, 'ticket 42');
    res = await submit(admin, `/console/tenant/support?tenant=${child}`, '/console/tenant/support', { tenant: child, action: 'disable' });
    page = await noticeAfter(admin, res);
    assert.match(page.text, /is off/);
    now = await read(child);
    assert.equal(now.support_enabled, false);
    // an Auditor may not: the page is refused
    res = await auditor.get(`/console/tenant/support?tenant=${child}`);
    assert.equal(res.status, 403);
  });

  it('adds, changes and deletes labels; a second of the same name is refused on the form', async () => {
    let res = await submit(admin, `/console/tenant/labels?tenant=${child}`, '/console/tenant/labels', {
      tenant: child,
      action: 'create',
      name: 'region',
      value: 'eu',
      owner: partner,
    });
    let page = await noticeAfter(admin, res);
    assert.match(page.text, /Label region was added/);
    let label = (await read(child)).labels.find((l: { name: string }) => l.name === 'region');
    assert.equal(label.value, 'eu');
    res = await submit(admin, `/console/tenant/labels?tenant=${child}`, '/console/tenant/labels', {
      tenant: child,
      action: 'create',
      name: 'REGION',
      owner: partner,
    });
    assert.equal(res.status, 409);
    assert.match(res.text, /already has a label REGION from this owner/);
    res = await submit(admin, `/console/tenant/labels?tenant=${child}`, '/console/tenant/labels', {
      tenant: child,
      action: 'update',
      label: label.id,
      name: 'region',
      value: 'us',
    });
    await noticeAfter(admin, res);
    label = (await read(child)).labels.find((l: { name: string }) => l.name === 'region');
    assert.equal(label.value, 'us');
    res = await submit(admin, `/console/tenant/labels?tenant=${child}`, '/console/tenant/labels', {
      tenant: child,
      action: 'delete',
      label: label.id,
    });
    page = await noticeAfter(admin, res);
    assert.match(page.text, /Label region was deleted/);
    assert.equal(
      (await read(child)).labels.some((l: { name: string }) => l.name === 'region'),
      false,
    );
    // the child's own Administrator has no partner to label for
    const own = await childAdmin.get(`/console/tenant/labels?tenant=${child}`);
    assert.match(own.text, /do not let you label this tenant/);
  });

  it('a partner makes a service and a subscription, assigns it to a child, takes it away, retires it', async () => {
    let res = await submit(admin, `/console/tenant/offerings?tenant=${partner}`, '/console/tenant/offerings', {
      tenant: partner,
      action: 'service',
      service_name: 'Scanning',
    });
    await noticeAfter(admin, res);
    let page = await admin.get(`/console/tenant/offerings?tenant=${partner}`);
    const service = /<option value="([0-9a-f-]{36})"[^>]*>Scanning<\/option>/.exec(page.text)?.[1];
    assert.ok(service, page.text);
    res = await admin.post('/console/tenant/offerings', {
      _csrf: admin.csrf(page),
      tenant: partner,
      action: 'subscription',
      service,
      sub_name: 'Scanning Gold',
    });
    page = await noticeAfter(admin, res);
    assert.match(page.text, /Subscription Scanning Gold was created/);
    // a second service of the same name: shown again, refused
    res = await admin.post('/console/tenant/offerings', { _csrf: admin.csrf(page), tenant: partner, action: 'service', service_name: 'scanning' });
    assert.equal(res.status, 409);
    assert.match(res.text, /already a service named scanning/);
    // assign to the child
    page = await admin.get(`/console/tenant/subscriptions?tenant=${child}`);
    const sub = /<option value="([0-9a-f-]{36})"[^>]*>Scanning Gold/.exec(page.text)?.[1];
    assert.ok(sub, page.text);
    res = await admin.post('/console/tenant/subscriptions', { _csrf: admin.csrf(page), tenant: child, action: 'assign', subscription: sub });
    page = await noticeAfter(admin, res);
    assert.match(page.text, /was assigned to Acme Child/);
    assert.deepEqual(
      (await read(child)).partnership.subscriptions.map((s: { id: string }) => s.id),
      [sub],
    );
    res = await admin.post('/console/tenant/subscriptions', { _csrf: admin.csrf(page), tenant: child, action: 'unassign', subscription: sub });
    page = await noticeAfter(admin, res);
    assert.deepEqual((await read(child)).partnership.subscriptions, []);
    // retire: then it cannot be assigned
    page = await admin.get(`/console/tenant/offerings?tenant=${partner}`);
    res = await admin.post('/console/tenant/offerings', { _csrf: admin.csrf(page), tenant: partner, action: 'retire', subscription: sub });
    page = await noticeAfter(admin, res);
    assert.match(page.text, /was retired/);
    res = await admin.post('/console/tenant/subscriptions', { _csrf: admin.csrf(page), tenant: child, action: 'assign', subscription: sub });
    assert.equal(res.status, 400);
    assert.match(res.text, /retired: it can no longer be assigned/);
    assert.deepEqual((await read(child)).partnership.subscriptions, []);
    // CSRF
    res = await admin.post('/console/tenant/offerings', { tenant: partner, action: 'service', service_name: 'No Token' });
    assert.equal(res.status, 403);
  });

  // A page acts in its one tenant: a label or partner subscription of another tenant (one below,
  // which the services would accept from the parent, one out of reach, or none) is refused alike.
  const refusal = (res: Response, title: string) => {
    assert.equal(res.status, 404, res.text.slice(0, 600));
    assert.match(res.text, new RegExp(title));
    const words = /<p class="error" role="alert">([^<]*)<\/p>\s*<p>([^<]*)<\/p>/.exec(res.text);
    assert.ok(words, res.text);
    return `${words[1]} ${words[2]}`;
  };
  const wordsOf = (kind: string) =>
    `No ${kind} with this id belongs to Acme Partners. It may have been deleted, or belong to another tenant: ` +
    'go back to the list of Acme Partners, or open it from the tenant it belongs to.';
  const NONE = '00000000-0000-4000-8000-000000000000';

  it('a label of a tenant below is not changed or deleted from the parent’s page; nothing is written', async () => {
    const tier = (await read(child)).labels.find((l: { name: string }) => l.name === 'tier');
    assert.ok(tier);
    const far = await createTenant(t, '1', { name: 'Far Away', labels: [{ name: 'far', value: 'x' }] });
    const farLabel = (await read(far)).labels[0].id as string;
    const page = await admin.get(`/console/tenant/labels?tenant=${partner}`);
    const before = { rows: await rowCounts(t), child: await read(child), far: await read(far) };
    for (const label of [tier.id, farLabel, NONE]) {
      for (const form of <Record<string, string>[]>[
        { action: 'update', label, name: 'hacked', value: 'hacked' },
        { action: 'delete', label },
      ]) {
        const res = await admin.post('/console/tenant/labels', { _csrf: admin.csrf(page), tenant: partner, ...form });
        assert.equal(refusal(res, 'Label not found'), wordsOf('label'), `${form.action} ${label}`);
      }
    }
    assert.deepEqual({ rows: await rowCounts(t), child: await read(child), far: await read(far) }, before, 'nothing written');
    // from the child's own page, the same forms change it
    const own = await admin.get(`/console/tenant/labels?tenant=${child}`);
    let res = await admin.post('/console/tenant/labels', {
      _csrf: admin.csrf(own),
      tenant: child,
      action: 'update',
      label: tier.id,
      name: 'tier',
      value: 'silver',
    });
    await noticeAfter(admin, res);
    assert.equal((await read(child)).labels.find((l: { id: string }) => l.id === tier.id).value, 'silver');
    res = await admin.post('/console/tenant/labels', { _csrf: admin.csrf(own), tenant: child, action: 'delete', label: tier.id });
    await noticeAfter(admin, res);
    assert.equal(
      (await read(child)).labels.some((l: { id: string }) => l.id === tier.id),
      false,
    );
  });

  it('a partner subscription of a partner below is not retired from the parent’s page; nothing is written', async () => {
    const reseller = await createTenant(t, partner, { name: 'Acme Resellers', isPartner: true });
    let res = await submit(admin, `/console/tenant/offerings?tenant=${reseller}`, '/console/tenant/offerings', {
      tenant: reseller,
      action: 'service',
      service_name: 'Reselling',
    });
    let page = await noticeAfter(admin, res);
    const service = /<option value="([0-9a-f-]{36})"[^>]*>Reselling<\/option>/.exec(page.text)?.[1];
    assert.ok(service, page.text);
    res = await admin.post('/console/tenant/offerings', {
      _csrf: admin.csrf(page),
      tenant: reseller,
      action: 'subscription',
      service,
      sub_name: 'Resold',
    });
    await noticeAfter(admin, res);
    const stored = () => t.db.kysely.selectFrom('partner_subscriptions').selectAll().where('name', '=', 'Resold').executeTakeFirstOrThrow();
    const sub = (await stored()).id;

    page = await admin.get(`/console/tenant/offerings?tenant=${partner}`);
    const before = { rows: await rowCounts(t), sub: await stored() };
    for (const subscription of [sub, NONE]) {
      res = await admin.post('/console/tenant/offerings', { _csrf: admin.csrf(page), tenant: partner, action: 'retire', subscription });
      assert.equal(refusal(res, 'Subscription not found'), wordsOf('subscription'), subscription);
    }
    assert.deepEqual({ rows: await rowCounts(t), sub: await stored() }, before, 'nothing written');
    assert.equal(before.sub.retired_at, null);
    // from its own partner's page, retired
    page = await admin.get(`/console/tenant/offerings?tenant=${reseller}`);
    res = await admin.post('/console/tenant/offerings', { _csrf: admin.csrf(page), tenant: reseller, action: 'retire', subscription: sub });
    page = await noticeAfter(admin, res);
    assert.match(page.text, /Subscription Resold was retired/);
    assert.notEqual((await stored()).retired_at, null);
  });
});
