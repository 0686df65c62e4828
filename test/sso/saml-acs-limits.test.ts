// The ACS as an unauthenticated endpoint that costs CPU (issue 20, item 6; docs/sso.md, "Limits of
// the ACS"), on both engines: what is refused before any XML parser runs (size, nesting), with
// pages that name the limit, while a large real-world response still signs in; and the
// per-address throttle: posts beyond the allowance are answered 429 with Retry-After, other
// addresses are still served. No assertion depends on how fast anything runs: the throttle's
// clock is moved by hand.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { deflateRawSync, deflateSync } from 'node:zlib';
import { after, before, describe, it, test } from 'node:test';
import { ACS_BODY_LIMIT } from '../../src/http/pages/sso-pages.js';
import { AcsThrottle, MAX_IN_FLIGHT, PER_MINUTE } from '../../src/sso/acs-throttle.js';
import { MAX_SAML_RESPONSE_BASE64 } from '../../src/sso/assertion-checks.js';
import type { Response, TestApp } from '../helpers/app.js';
import { startTestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';
import type { TestIdp } from '../helpers/saml-idp.js';
import { type Connection, formOf, PageClient, postBack, refusalReasons, toIdp, samlWorld } from './saml-flow.js';

const DOMAIN = 'corp.test';
const PERSON = `alex.example-longname@${DOMAIN}`;
const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';

/** What Entra ID sends at its ceiling of 150 groups (learn.microsoft.com, "Configure group claims
 *  for applications": "limited to 150 for SAML assertions"), with its usual claims. */
function entraAttributes(): Record<string, string | string[]> {
  const ms = 'http://schemas.microsoft.com';
  const soap = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
  return {
    [`${ms}/identity/claims/tenantid`]: randomUUID(),
    [`${ms}/identity/claims/objectidentifier`]: randomUUID(),
    [`${ms}/identity/claims/displayname`]: 'Alex Example-Longname',
    [`${ms}/identity/claims/identityprovider`]: `https://sts.windows.net/${randomUUID()}/`,
    [`${ms}/claims/authnmethodsreferences`]: [`${ms}/ws/2008/06/identity/authenticationmethod/password`, `${ms}/claims/multipleauthn`],
    [`${soap}/givenname`]: 'Alex',
    [`${soap}/surname`]: 'Example-Longname',
    [`${soap}/emailaddress`]: PERSON,
    [`${soap}/name`]: PERSON,
    [`${ms}/ws/2008/06/identity/claims/groups`]: Array.from({ length: 150 }, () => randomUUID()),
  };
}

const isErrorLine = (line: string) => (JSON.parse(line) as { level?: number }).level! >= 50;

for (const engine of transportEngines()) {
  describe(`SAML ACS limits (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let connection: Connection;

    let world: Awaited<ReturnType<typeof samlWorld>>;
    before(async () => {
      world = await samlWorld(engine, DOMAIN);
      ({ t, idp, connection } = world);
    });
    after(() => world.close());

    const acsPath = () => new URL(connection.acsUrl).pathname;

    it('signs in with an Entra ID response at its 150-group ceiling, signed twice: the limit is four times its size', async () => {
      const browser = new PageClient(t);
      const location = await toIdp(t, browser, PERSON);
      idp.setUser(PERSON, entraAttributes());
      const post = await idp.respond(location);
      assert.equal(post.xml.split('<ds:Signature ').length, 3, 'the response and the assertion signed');
      assert.ok(post.SAMLResponse.length * 4 <= MAX_SAML_RESPONSE_BASE64, `${post.SAMLResponse.length} characters of base64`);
      const res = await postBack(t, browser, connection, post);
      assert.equal(res.acs.status, 303, refusalReasons(t).join('\n'));
      assert.equal(res.signedIn, PERSON);
    });

    it('refuses deep nesting before parsing it', async () => {
      // 20,000 elements deep and never closed: a parser would nest them all, then call it malformed
      const xml = `<samlp:Response xmlns:samlp="${PROTOCOL}" ID="_r">${'<x>'.repeat(20_000)}`;
      const res = await new PageClient(t).post(acsPath(), formOf(xml));
      assert.equal(res.status, 400);
      assert.match(res.text, /Single sign-on did not work/);
      assert.match(refusalReasons(t).at(-1)!, /^too-deep: elements nested deeper than 32/);
    });

    it('refuses with 413 a SAMLResponse over 128 KiB, and a body over the ACS limit, naming the limit', async () => {
      const errorsBefore = t.logs.filter(isErrorLine).length;
      const field = await new PageClient(t).post(acsPath(), { SAMLResponse: 'A'.repeat(MAX_SAML_RESPONSE_BASE64 + 4) });
      assert.equal(field.status, 413);
      assert.match(field.text, /larger than the 128 KiB this service accepts/);
      assert.match(field.text, /send fewer attributes/);

      assert.equal(ACS_BODY_LIMIT, 192 * 1024);
      const body = await t.request({
        method: 'POST',
        url: acsPath(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `SAMLResponse=${'%2B'.repeat(ACS_BODY_LIMIT / 3 + 1)}`,
      });
      assert.equal(body.status, 413);
      assert.match(body.headers['content-type'] as string, /^text\/html/);
      assert.match(body.text, /larger than the 192 KiB this service accepts/);
      assert.equal(t.logs.filter(isErrorLine).length, errorsBefore, 'no error logged: the caller sent too much');
    });

    it('inflates nothing: a deflate bomb as the SAMLResponse is refused as not UTF-8, a deflated body is no form at all', async () => {
      // a megabyte of XML in about a kilobyte: the Redirect binding's encoding, which the POST
      // binding, the only one the ACS takes, does not use
      const bomb = deflateRawSync(`<samlp:Response xmlns:samlp="${PROTOCOL}" ID="_r">${' '.repeat(1024 * 1024)}</samlp:Response>`);
      assert.ok(bomb.length < 4 * 1024, `${bomb.length} bytes`);
      const field = await new PageClient(t).post(acsPath(), { SAMLResponse: bomb.toString('base64') });
      assert.equal(field.status, 400);
      assert.match(field.text, /Single sign-on did not work/);
      assert.match(refusalReasons(t).at(-1)!, /^malformed: SAMLResponse is not UTF-8/);

      // Content-Encoding is not honoured: inflated, this body would be a megabyte-long
      // SAMLResponse, refused with 413; read as sent, it holds no SAMLResponse field
      const body = await t.request({
        method: 'POST',
        url: acsPath(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'deflate' },
        payload: deflateSync(`SAMLResponse=${'A'.repeat(1024 * 1024)}`),
      });
      assert.equal(body.status, 400);
      assert.match(body.text, /The identity provider sent no SAML response/);
    });
  });

  describe(`SAML ACS throttle per address (${engine})`, () => {
    let t: TestApp;
    // no connection is needed: the throttle answers before the connection is looked up
    const acs = `/sso/saml/${randomUUID()}/acs`;
    const post = (remoteAddress: string): Promise<Response> =>
      t.request({
        method: 'POST',
        url: acs,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'SAMLResponse=PHNhbWxwOlJlc3BvbnNlLz4%3D',
        remoteAddress,
      });

    before(async () => {
      // the hand-moved clock: the buckets refill only when the test says so
      t = await startTestApp({ engine });
    });
    after(() => t.close());

    it('answers 50 posts at once from one address with at most its allowance verified, the rest 429 with Retry-After; another address is served', async () => {
      const all = await Promise.all(Array.from({ length: 50 }, () => post('198.51.100.7')));
      const verified = all.filter((r) => r.status !== 429);
      const throttled = all.filter((r) => r.status === 429);
      assert.ok(verified.length >= 1 && verified.length <= PER_MINUTE, `${verified.length} verified`);
      assert.equal(verified.length + throttled.length, 50);
      for (const r of verified) assert.equal(r.status, 404, 'verified: no such connection');
      for (const r of throttled) {
        assert.ok(Number(r.headers['retry-after']) >= 1, String(r.headers['retry-after']));
        assert.match(r.text, /Too many sign-ins arrived from your network just now\. Wait \d+ seconds/);
      }
      const other = await post('198.51.100.8');
      assert.equal(other.status, 404, 'another address is served');
    });

    it(`lets ${PER_MINUTE} posts a minute through from one address (an IPv6 /64 is one), then says how long to wait`, async () => {
      for (let i = 0; i < PER_MINUTE; i++) assert.equal((await post('2001:db8:1:2::1')).status, 404, `post ${i + 1}`);
      // another address of the same /64 shares the allowance; another /64 has its own
      const over = await post('2001:db8:1:2::ffff');
      assert.equal(over.status, 429);
      assert.equal(over.headers['retry-after'], String(60 / PER_MINUTE));
      assert.equal((await post('2001:db8:1:3::1')).status, 404);
      t.clock.advance((60 / PER_MINUTE) * 1000);
      assert.equal((await post('2001:db8:1:2::1')).status, 404, 'one more after the wait');
      assert.equal((await post('2001:db8:1:2::1')).status, 429);
    });
  });
}

describe('AcsThrottle', () => {
  test(`admits ${MAX_IN_FLIGHT} posts of one address at once; a third waits until one is released`, () => {
    const now = 0;
    const throttle = new AcsThrottle(() => now);
    const first = throttle.admit('192.0.2.1');
    const second = throttle.admit('192.0.2.1');
    assert.ok('release' in first && 'release' in second);
    assert.deepEqual(throttle.admit('192.0.2.1'), { retryAfter: 1 });
    assert.ok('release' in throttle.admit('192.0.2.2'), 'another address');
    first.release();
    first.release(); // twice changes nothing
    const third = throttle.admit('192.0.2.1');
    assert.ok('release' in third);
    assert.deepEqual(throttle.admit('192.0.2.1'), { retryAfter: 1 });
  });

  test('refills one post every 60/PER_MINUTE seconds, never above PER_MINUTE; a clock moved back refills nothing', () => {
    let now = 1_000_000;
    const throttle = new AcsThrottle(() => now);
    const use = () => {
      const slot = throttle.admit('192.0.2.9');
      if ('release' in slot) slot.release();
      return 'release' in slot ? 'ok' : slot.retryAfter;
    };
    for (let i = 0; i < PER_MINUTE; i++) assert.equal(use(), 'ok');
    assert.equal(use(), 60 / PER_MINUTE);
    now += 1000;
    assert.equal(use(), 1, 'half a post back: a second more');
    now += 1000;
    assert.equal(use(), 'ok');
    now -= 3_600_000;
    assert.equal(use(), 60 / PER_MINUTE);
    now += 3_600_000 + 3_600_000;
    for (let i = 0; i < PER_MINUTE; i++) assert.equal(use(), 'ok', `after an hour, post ${i + 1}`);
    assert.notEqual(use(), 'ok', 'an hour refills the bucket, not more');
  });
});
