// The browser pages driven through app.inject(): a cookie jar for the session cookie, and a user
// signed in the way a person first signs in (set-up link, password, authenticator).
import assert from 'node:assert/strict';
import { totpCodeAt } from '../../src/users/totp.js';
import type { Response, TestApp } from './app.js';

export const PASSWORD = 'a long and unusual passphrase';

/** A browser: its cookie jar (the session cookie, and any other the pages set, such as the
 *  recognised-browser cookie), posting from one client address. */
export class PageClient {
  /** every cookie the pages set and did not clear, by name */
  readonly jar = new Map<string, string>();
  constructor(
    private readonly t: TestApp,
    private readonly name = 'gatehouse_session',
    /** the client address of its requests */
    readonly address = '203.0.113.50',
  ) {}
  /** the session cookie's value */
  get cookie(): string | undefined {
    return this.jar.get(this.name);
  }
  set cookie(value: string | undefined) {
    if (value === undefined) this.jar.delete(this.name);
    else this.jar.set(this.name, value);
  }
  private static alone = 0;
  /** A browser at an address no other browser of this process uses (198.18.0.0/15, the range
   *  kept for benchmarks): for tests of many sign-ins in a row, which the per-address limits
   *  (sign-in attempts, SAML ACS posts) would otherwise count together. */
  static atOwnAddress(t: TestApp): PageClient {
    const n = PageClient.alone++;
    return new PageClient(t, 'gatehouse_session', `198.${18 + Math.floor(n / 65_536)}.${Math.floor(n / 256) % 256}.${n % 256}`);
  }
  async get(url: string): Promise<Response> {
    return this.keep(await this.t.request({ method: 'GET', url, headers: this.headers(), remoteAddress: this.address }));
  }
  async post(url: string, form: Record<string, string>): Promise<Response> {
    const payload = new URLSearchParams(form).toString();
    return this.keep(
      await this.t.request({
        method: 'POST',
        url,
        headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded' },
        payload,
        remoteAddress: this.address,
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
    return this.jar.size > 0 ? { cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }
  private keep(res: Response): Response {
    const set = res.headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
      if (value === '' || /;\s*Max-Age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
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
