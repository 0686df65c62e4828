// Every route with a UUID or a tenant id in its path or query (the SSO connection routes, the SSO
// finish ticket, the console's ?tenant= and ?client=, and their forms), sent ids that are not ids:
// not a UUID, too long, with NUL, unicode, path tricks, invalid percent-encoding, numbers that are
// no tenant id. Each is the caller's mistake: a 4xx, never a 500, and nothing logged at error level
// (an error line pages an operator). On both engines: PostgreSQL refuses a malformed uuid or an
// out-of-range bigint with an error where PGlite might not.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import type { Response, TestApp } from '../helpers/app.js';
import { startTestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import { PageClient, signedInUser } from '../helpers/pages.js';

const UUID = randomUUID();

/** As they would appear in a URL (percent-encoded where a browser or an attacker would encode). */
const MALFORMED: readonly string[] = [
  'not-a-uuid',
  'x'.repeat(2_000),
  '0'.repeat(36),
  '-'.repeat(36),
  `${UUID.slice(0, 35)}g`,
  UUID.toUpperCase(),
  `${UUID}%00`,
  '%00',
  `${UUID}%0A`,
  `%20${UUID}`,
  'caf%C3%A9',
  '%F0%9F%98%80',
  '%EF%BC%91', // a fullwidth digit one
  '..%2F..%2Fetc%2Fpasswd',
  '%2E%2E',
  '%E0%A4%A', // a truncated UTF-8 sequence
  '%',
  '0',
  '-1',
  '01',
  '1e3',
  '1.5',
  '99999999999999999999999',
  '9223372036854775808',
];

/** For a form field: the text itself (the form encoding is URLSearchParams'). */
function decoded(id: string): string {
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}

for (const engine of transportEngines()) {
  describe(`malformed ids are a 4xx, never a 500 (${engine})`, () => {
    let t: TestApp;
    let admin: PageClient;
    let clientId: string;

    before(async () => {
      t = await startTestApp({ engine });
      ({ client: admin } = await signedInUser(t, 'admin@corp.test', { roles: [ROLE_IDS.Administrator] }));
      const made = await t.gql(await t.rootToken(), 'mutation { createClient(name: "ci") { client { id } } }');
      assert.equal(made.body.errors, undefined, made.text);
      clientId = made.body.data.createClient.client.id;
    });
    after(() => t.close());

    /** What went wrong in this test: every request is tried, and all failures named at the end. */
    let failures: string[] = [];

    /** Runs one request, noting anything but a 4xx, and any error-level log line. */
    async function expect4xx(what: string, send: () => Promise<Response>): Promise<void> {
      const before = t.logs.length;
      const res = await send();
      const errors = t.logs.slice(before).filter((l) => (JSON.parse(l) as { level: number }).level >= 50);
      if (res.status < 400 || res.status >= 500) failures.push(`${what}: HTTP ${res.status}`);
      if (errors.length > 0) failures.push(`${what}: logged ${errors.map((e) => String((JSON.parse(e) as { msg?: unknown }).msg)).join('; ')}`);
    }

    /** A form posted with the session's CSRF token, as the page's own form would be. */
    async function postForm(client: PageClient, pageUrl: string, url: string, form: Record<string, string>): Promise<Response> {
      const page = await client.get(pageUrl);
      return client.post(url, { _csrf: client.csrf(page), ...form });
    }

    it('the SSO connection routes: /sso/saml/:id/metadata, /login (GET, HEAD and POST), /acs, and /sso/saml/finish?ticket=', async () => {
      failures = [];
      for (const id of MALFORMED) {
        const visitor = new PageClient(t);
        const short = id.slice(0, 40);
        await expect4xx(`GET metadata ${short}`, () => visitor.get(`/sso/saml/${id}/metadata`));
        await expect4xx(`GET login ${short}`, () => visitor.get(`/sso/saml/${id}/login`));
        await expect4xx(`POST login ${short}`, () => postForm(visitor, '/login', `/sso/saml/${id}/login`, {}));
        await expect4xx(`POST acs ${short}`, () => visitor.post(`/sso/saml/${id}/acs`, { SAMLResponse: 'PHNhbWxwOlJlc3BvbnNlLz4=' }));
        await expect4xx(`GET finish ${short}`, () => visitor.get(`/sso/saml/finish?ticket=${id}`));
        for (const url of [`/sso/saml/${id}/metadata`, `/sso/saml/${id}/login`, `/sso/saml/finish?ticket=${id}`])
          await expect4xx(`HEAD ${url.slice(0, 60)}`, () => t.request({ method: 'HEAD', url }));
      }
      assert.deepEqual(failures, []);
    });

    it('the console: ?tenant= and ?client= on every page, and the tenant and client fields of its forms', async () => {
      failures = [];
      const list = '/console/credentials?tenant=1';
      for (const id of MALFORMED) {
        const short = id.slice(0, 40);
        for (const path of ['/console/credentials', '/console/credentials/new', '/console/credentials/rotate', '/console/credentials/delete'])
          await expect4xx(`GET ${path}?tenant=${short}`, () => admin.get(`${path}?tenant=${id}&client=${clientId}`));
        for (const path of ['/console/credentials/rotate', '/console/credentials/delete'])
          await expect4xx(`GET ${path}?client=${short}`, () => admin.get(`${path}?tenant=1&client=${id}`));
        await expect4xx(`POST new tenant=${short}`, () =>
          postForm(admin, list, '/console/credentials/new', { tenant: decoded(id), name: 'x', role_Analyst: ROLE_IDS.Analyst }),
        );
        for (const path of ['/console/credentials/rotate', '/console/credentials/delete']) {
          await expect4xx(`POST ${path} tenant=${short}`, () => postForm(admin, list, path, { tenant: decoded(id), client: clientId }));
          await expect4xx(`POST ${path} client=${short}`, () => postForm(admin, list, path, { tenant: '1', client: decoded(id) }));
        }
      }
      assert.deepEqual(failures, []);
      // the client was neither rotated nor deleted by any of it
      const still = await t.gql(await t.rootToken(), 'query($id: [String]) { clients(clientIDs: $id) { id } }', { id: [clientId] });
      assert.equal(still.body.data?.clients?.length, 1, still.text);
    });
  });
}
