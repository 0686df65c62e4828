// The browser pages driven through app.inject(): a cookie jar for the session cookie, and a user
// signed in the way a person first signs in (set-up link, password, authenticator).
import assert from 'node:assert/strict';
import { totpCodeAt } from '../../src/users/totp.js';
import type { Response, TestApp } from './app.js';

export const PASSWORD = 'a long and unusual passphrase';

/** A browser's cookie jar for one cookie name. */
export class PageClient {
  cookie: string | undefined;
  constructor(
    private readonly t: TestApp,
    private readonly name = 'gatehouse_session',
  ) {}
  async get(url: string): Promise<Response> {
    return this.keep(await this.t.request({ method: 'GET', url, headers: this.headers() }));
  }
  async post(url: string, form: Record<string, string>): Promise<Response> {
    const payload = new URLSearchParams(form).toString();
    return this.keep(
      await this.t.request({
        method: 'POST',
        url,
        headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded' },
        payload,
        remoteAddress: '203.0.113.50',
      }),
    );
  }
  /** the CSRF token of the page's first form */
  csrf(res: Response): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(res.text);
    assert.ok(m, `a form with a CSRF token: ${res.text.slice(0, 300)}`);
    return m[1]!;
  }
  private headers(): Record<string, string> {
    return this.cookie ? { cookie: `${this.name}=${this.cookie}` } : {};
  }
  private keep(res: Response): Response {
    const set = res.headers['set-cookie'];
    const line = Array.isArray(set) ? set[0] : set;
    if (line?.startsWith(`${this.name}=`)) this.cookie = line.slice(this.name.length + 1).split(';')[0] || undefined;
    return res;
  }
}

/** A new user's set-up link (path and query), made by the root Administrator with createUser in
 *  `tenant` (its home tenant) with the given role ids (default Analyst). */
export async function setupLink(t: TestApp, email: string, opts: { tenant?: string; roles?: string[] } = {}): Promise<string> {
  const res = await t.gql(
    await t.rootToken(),
    'mutation($e: String!, $r: [ID!]) { createUser(email: $e, roles: $r) { setup_url } }',
    { e: email, ...(opts.roles ? { r: opts.roles } : {}) },
    opts.tenant ? { tenant: opts.tenant } : {},
  );
  assert.equal(res.body.errors, undefined, res.text);
  const url = new URL(res.body.data.createUser.setup_url);
  return url.pathname + url.search;
}

/** A user created as setupLink does, who has set a password and enrolled an authenticator:
 *  signed in, with the authenticator key for later sign-ins. */
export async function signedInUser(
  t: TestApp,
  email: string,
  opts: { tenant?: string; roles?: string[] } = {},
): Promise<{ client: PageClient; key: string }> {
  const client = new PageClient(t);
  assert.equal((await client.get(await setupLink(t, email, opts))).status, 303);
  let page = await client.get('/login');
  assert.equal((await client.post('/login', { _csrf: client.csrf(page), password: PASSWORD, confirmation: PASSWORD })).status, 303);
  page = await client.get('/login');
  const key = /Key: <code>([A-Z2-7 ]+)<\/code>/.exec(page.text)![1]!.replace(/ /g, '');
  const done = await client.post('/login', { _csrf: client.csrf(page), code: totpCodeAt(key, t.clock.now()) });
  assert.equal(done.status, 200, 'signed in, the recovery codes shown');
  return { client, key };
}
