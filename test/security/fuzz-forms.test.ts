// Fuzzing every form of the browser pages (issue 25 item 3; docs/security.md "Fuzzing"): the
// sign-in, device, SSO and console forms, found from the routes the app serves (as
// test/http/forms-csrf.test.ts finds them: a form added later is fuzzed too), posted with the
// session's valid CSRF token. Two ways: the forms as the pages render them (read from the pages
// an Administrator reaches from /console, and the sign-in pages), their fields kept, changed to
// generated values, dropped, repeated or joined by others; and any form with generated fields
// (the names the forms read and others; any text, long values, control characters, a field
// repeated), posted by a signed-in Administrator or by a browser at the first step of a sign-in. Whatever comes in: never a 5xx; the secrets
// posted (passwords, codes, secrets) come back in no page and no log line, nor does the session's
// cookie; a refused post (a 4xx) writes nothing but what a refusal records
// (its audit event, the attempt counts). The pages are transport: PGlite (engines.ts). fast-check
// prints the seed and path of a failing case.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ROLE_IDS } from '../../src/access/roles.js';
import { ROOT_CLIENT_ID, startTestApp, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, signedInUser } from '../helpers/pages.js';
import { servedRoutes } from '../helpers/routes.js';
import { countRowWrites, rowWrites } from '../helpers/row-writes.js';
import { createClient } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const PAGE_PATHS = /^\/(login|logout|device|console|sso)(\/|$)/;
/** the SAML ACS takes the IdP's response, not a form of ours: test/security/fuzz-saml.test.ts */
const NOT_FORMS = ['/sso/saml/:id/acs'];
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

/** the fields the forms read (src/http/pages), and a few they do not */
const FIELDS = [
  'action',
  'allow_response_actions',
  'append',
  'assignment',
  'change',
  'clear_expiration',
  'client',
  'code',
  'confirmation',
  'connection',
  'current',
  'decision',
  'disable',
  'display_name',
  'domains',
  'email',
  'expires',
  'expires_at',
  'grace',
  'id',
  'is_partner',
  'label',
  'method',
  'name',
  'owner',
  'parent',
  'part',
  'password',
  'response',
  'restricted',
  'role',
  'secret',
  'service',
  'service_name',
  'status',
  'sub_name',
  'subscription',
  'tenant',
  'testers',
  'until',
  'user',
  'user_code',
  'value',
  'metadata_url',
  'certificate',
  '__proto__',
  'constructor',
  'toString',
];
/** fields whose values are secrets: what is posted in them must never be shown or logged */
const SECRET_FIELDS = new Set(['password', 'confirmation', 'current', 'secret', 'code', 'response']);

const text = fc.oneof(
  { arbitrary: fc.string({ maxLength: 30 }), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 2 },
  fc.constantFrom(
    '',
    ' ',
    '1',
    '0',
    '-1',
    'true',
    'on',
    'Administrator',
    ROLE_IDS.Administrator,
    'null',
    '%00',
    '\u0000',
    '\r\nX-Injected: 1',
    '<script>x</script>',
    '../..',
  ),
  fc.constantFrom('2026-13-45', '9999-12-31T23:59:59Z', 'a@b', 'x@example.com', 'https://127.0.0.1/', 'ABCD-EFGH'),
  fc.uuid(),
  // now and then past the pages' 16 KiB limit of a form
  { arbitrary: fc.nat({ max: 20_000 }).map((n) => 'y'.repeat(n)), weight: 1 },
);

/** A form as a page renders it: where it posts, and its fields with their values. */
interface RenderedForm {
  action: string;
  fields: [string, string][];
}

const unescapeHtml = (v: string) =>
  v.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[e]!);
const attribute = (attrs: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attrs)?.[1];

/** The POST forms of a page, with their fields (but the CSRF token) as rendered. */
function formsOf(page: string): RenderedForm[] {
  const forms: RenderedForm[] = [];
  for (const [, attrs, inner] of page.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    if (attribute(attrs!, 'method')?.toLowerCase() !== 'post') continue;
    const fields: [string, string][] = [];
    for (const [, a] of inner!.matchAll(/<(?:input|button)\b([^>]*)>/g)) {
      const name = attribute(a!, 'name');
      if (name && name !== '_csrf') fields.push([name, unescapeHtml(attribute(a!, 'value') ?? '')]);
    }
    for (const [, a, options] of inner!.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
      const name = attribute(a!, 'name');
      const first = /<option\b[^>]*value="([^"]*)"/.exec(options!)?.[1];
      if (name) fields.push([name, unescapeHtml(first ?? '')]);
    }
    for (const [, a, value] of inner!.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
      const name = attribute(a!, 'name');
      if (name) fields.push([name, unescapeHtml(value!)]);
    }
    forms.push({ action: unescapeHtml(attribute(attrs!, 'action') ?? ''), fields });
  }
  return forms;
}

/** What a case does to a rendered form's field. */
type Change = { kind: 'keep' } | { kind: 'set'; value: string } | { kind: 'drop' } | { kind: 'repeat'; value: string };

interface Post {
  route: string;
  asAdmin: boolean;
  fields: [string, string | string[]][];
  paramJunk: string;
}

for (const engine of transportEngines()) {
  describe(`fuzzing every form of the pages (${engine})`, () => {
    let t: TestApp;
    let routes: string[];
    let admin: PageClient;
    let admins = 0;
    before(async () => {
      t = await startTestApp({ engine });
      await countRowWrites(t.db.kysely);
      routes = servedRoutes(t)
        .filter((r) => r.methods.includes('POST') && PAGE_PATHS.test(r.path) && !NOT_FORMS.includes(r.path))
        .map((r) => r.path)
        .sort();
      admin = await newAdmin();
    });
    after(() => t.close());

    async function newAdmin(): Promise<PageClient> {
      return (await signedInUser(t, `fuzz-admin-${++admins}@example.com`, { roles: [ROLE_IDS.Administrator] })).client;
    }

    /** The signed-in Administrator's CSRF token; another Administrator once a post has signed the last one out. */
    async function adminCsrf(): Promise<string> {
      let page = await admin.get('/console');
      if (page.status !== 200) {
        admin = await newAdmin();
        page = await admin.get('/console');
      }
      return admin.csrf(page);
    }

    it('finds the forms to fuzz', () => {
      assert.ok(routes.length >= 40, `${routes.length} forms: ${routes.join(' ')}`);
      for (const form of [
        '/login',
        '/device/approve',
        '/console/credentials/new',
        '/console/users/invite',
        '/console/sso/new',
        '/console/tenant/new',
      ]) {
        assert.ok(routes.includes(form), form);
      }
    });

    /** Posts `body` (the CSRF token first) as `client`, and checks what every post must hold. */
    async function postChecked(client: PageClient, csrf: string, url: string, fields: [string, string][], marker: string): Promise<void> {
      const body = new URLSearchParams();
      body.append('_csrf', csrf);
      for (const [name, value] of fields) body.append(name, value);
      const before = await rowWrites(t.db.kysely);
      const logged = t.logs.length;
      const res = await t.request({
        method: 'POST',
        url,
        headers: { cookie: `gatehouse_session=${client.cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: body.toString(),
        remoteAddress: client.address,
      });
      assert.ok(res.status < 500, `${url}: ${res.status} ${res.text.slice(0, 300)}`);
      assert.ok(!res.text.includes(marker), `${url}: a posted secret is shown in the answer`);
      assert.ok(!res.text.includes(client.cookie!), `${url}: the session cookie is in the page`);
      const lines = t.logs.slice(logged).join('\n');
      assert.ok(!lines.includes(marker), `${url}: a posted secret is logged`);
      // a refusal is a 4xx (a page that acted answers 200 or a redirect)
      if (res.status >= 400) {
        const after = await rowWrites(t.db.kysely);
        const written = Object.keys(after).filter((table) => after[table] !== before[table] && table !== 'audit_events' && table !== 'refused');
        assert.deepEqual(written, [], `${url} refused with ${res.status} and wrote`);
      }
    }

    /** The POST forms of the pages an Administrator reaches from /console (links followed within /console, up to 60 pages). */
    async function renderedForms(): Promise<RenderedForm[]> {
      const seen = new Set<string>();
      const queue = ['/console'];
      const forms = new Map<string, RenderedForm>();
      while (queue.length > 0 && seen.size < 60) {
        const url = queue.shift()!;
        if (seen.has(url)) continue;
        seen.add(url);
        const page = await admin.get(url);
        if (page.status !== 200) continue;
        for (const form of formsOf(page.text)) {
          if (form.action !== '/logout') forms.set(`${form.action} ${form.fields.map(([n]) => n).join(',')}`, form);
        }
        for (const [, href] of page.text.matchAll(/href="(\/console[^"#]*)"/g)) {
          const next = unescapeHtml(href!);
          if (!seen.has(next) && !/\/console\/audit/.test(next)) queue.push(next);
        }
      }
      return [...forms.values()];
    }

    it('the forms as the pages render them, their values changed: never a 5xx, no secret shown or logged, a refusal writes nothing', async () => {
      // something in each section, so that the pages of one thing and their forms are there
      await createClient(t, await t.rootToken(), 'fuzzed client', { tenant: '1' });
      await createTenant(t, '1', { name: 'fuzzed tenant', isPartner: true });
      const invited = await t.gql(
        await t.rootToken(),
        'mutation { createUser(email: "fuzzed-user@example.com") { user { id } } }',
        {},
        { tenant: '1' },
      );
      assert.equal(invited.body.errors, undefined, invited.text);
      const sso = await tq(
        t,
        await t.rootToken(),
        'mutation { createSSOConnection(newConnection: {name: "fuzzed", type: saml, domains: ["fuzzed.test"]}) { id } }',
        {},
        '1',
      );
      assert.equal(sso.body.errors, undefined, sso.text);
      // the bootstrap client's token makes the Administrators of later cases: its forms are left alone
      const clients = await t.gql(await t.rootToken(), '{ clients(perPage: 500) { id client_id } }', {}, { tenant: '1' });
      const rootId = (clients.body.data.clients as { id: string; client_id: string }[]).find((c) => c.client_id === ROOT_CLIENT_ID)!.id;
      const isRoot = (value: string) => value === rootId || value === ROOT_CLIENT_ID;
      const forms = (await renderedForms()).filter((f) => !f.fields.some(([, value]) => isRoot(value)));
      const actions = new Set(forms.map((f) => f.action.replace(/\?.*/, '')));
      assert.ok(actions.size >= 20, `forms found: ${[...actions].join(' ')}`);
      const change: fc.Arbitrary<Change> = fc.oneof(
        { arbitrary: fc.constant({ kind: 'keep' as const }), weight: 3 },
        fc.record({ kind: fc.constant('set' as const), value: text }),
        fc.constant({ kind: 'drop' as const }),
        fc.record({ kind: fc.constant('repeat' as const), value: text }),
      );
      const extra = fc.array(fc.tuple(fc.constantFrom(...FIELDS), text), { maxLength: 2 });
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: forms.length - 1 }), fc.array(change, { minLength: 12, maxLength: 12 }), extra, async (i, changes, extras) => {
          const csrf = await adminCsrf();
          const form = forms[i]!;
          const marker = `Fz${randomBytes(9).toString('hex')}`;
          const fields: [string, string][] = [];
          form.fields.forEach(([name, value], n) => {
            const c = changes[n % changes.length]!;
            const secret = (v: string) => (SECRET_FIELDS.has(name) ? `${marker}${v}` : v);
            if (c.kind === 'keep') fields.push([name, secret(value)]);
            else if (c.kind === 'set') fields.push([name, secret(c.value)]);
            else if (c.kind === 'repeat') fields.push([name, secret(value)], [name, secret(c.value)]);
          });
          for (const [name, value] of extras) fields.push([name, SECRET_FIELDS.has(name) ? `${marker}${value}` : value]);
          await postChecked(admin, csrf, form.action, fields, marker);
        }),
        { numRuns: RUNS, includeErrorInReport: true },
      );
    });

    it('any fields to any form: never a 5xx, no secret shown or logged, a refusal writes nothing', async () => {
      const post: fc.Arbitrary<Post> = fc.record({
        route: fc.constantFrom(...routes),
        asAdmin: fc.boolean(),
        fields: fc.array(
          fc.tuple(
            fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 10 })),
            fc.oneof(text, fc.array(text, { minLength: 2, maxLength: 3 })),
          ),
          {
            maxLength: 8,
          },
        ),
        paramJunk: fc.oneof(fc.uuid(), fc.string({ minLength: 1, maxLength: 20 })),
      });
      await fc.assert(
        fc.asyncProperty(post, async (p) => {
          // a signed-in Administrator (another one once a post has signed the last one out), or a
          // browser at the first step of a sign-in
          const anonymous = p.asAdmin ? undefined : PageClient.atOwnAddress(t);
          const csrf = anonymous ? anonymous.csrf(await anonymous.get('/login')) : await adminCsrf();
          const client = anonymous ?? admin;
          const marker = `Fz${randomBytes(9).toString('hex')}`;
          const fields: [string, string][] = p.fields.flatMap(([name, value]) =>
            (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, SECRET_FIELDS.has(name) ? `${marker}${v}` : v]),
          );
          await postChecked(client, csrf, p.route.replace(':id', encodeURIComponent(p.paramJunk)), fields, marker);
        }),
        { numRuns: RUNS, includeErrorInReport: true },
      );
    });
  });
}
