// The ACS trusts only what a signature by the connection's certificate covers (docs/sso.md,
// "Sign-in"), on both engines, over HTTP against the test IdP:
// - InResponseTo comes from the assertion's bearer SubjectConfirmationData, or from a signed
//   Response: a genuine IdP-initiated assertion wrapped in a made-up, unsigned Response that names
//   the attacker's own open request signs nobody in (issue 20, item 3);
// - a genuine assertion refused for any reason is recorded as used, so that no corrected envelope
//   can bring it back; a response without a valid signature uses up nothing;
// - the signing styles IdPs use (assertion, response, both) still sign in.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { signedInUser } from '../helpers/pages.js';
import type { SamlPost, TestIdp } from '../helpers/saml-idp.js';
import { assertionOf, type Connection, formOf, isUsed, PageClient, postBack, refusalReasons, toIdp, whoIsSignedIn, samlWorld } from './saml-flow.js';

const DOMAIN = 'corp.test';
const VICTIM = `victim@${DOMAIN}`;
const ATTACKER = `attacker@${DOMAIN}`;

for (const engine of engines()) {
  describe(`SAML ACS: signed content only (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let connection: Connection;

    let world: Awaited<ReturnType<typeof samlWorld>>;
    before(async () => {
      world = await samlWorld(engine, DOMAIN);
      ({ t, idp, connection } = world);
    });
    after(() => world.close());

    /** The last reason the service logged for a refusal. */
    const lastReason = () => refusalReasons(t).at(-1) ?? 'none';

    /** An answer for `email` to a sign-in begun in a browser of its own. */
    async function answerFor(email: string, options: Parameters<TestIdp['respond']>[1] = {}): Promise<SamlPost> {
      const location = await toIdp(t, PageClient.atOwnAddress(t), email);
      idp.setUser(email);
      return idp.respond(location, options);
    }

    /** The response `post`'s XML with the one attribute `name="…"` of its Response element set to `value`. */
    const withResponseAttribute = (post: SamlPost, name: string, value: string) =>
      post.xml.replace(new RegExp(`^(<samlp:Response [^>]*?${name}=")[^"]*"`), (_m, head: string) => `${head}${value}"`);

    it('an IdP-initiated assertion, refused as sent, then wrapped in a Response naming the attacker’s own request, signs nobody in', async () => {
      // the victim's IdP-initiated response: only the assertion signed, no InResponseTo anywhere
      const unsolicited = await answerFor(VICTIM, { inResponseTo: null, signResponse: false });
      assert.doesNotMatch(unsolicited.xml, /InResponseTo/);
      const asSent = await postBack(t, PageClient.atOwnAddress(t), connection, unsolicited);
      assert.equal(asSent.acs.status, 400, 'unsolicited responses are refused');
      assert.match(lastReason(), /^in-response-to/);
      assert.equal(await isUsed(t, connection, unsolicited.assertionId), true, 'its signature verified: used up by the refusal');

      // the attacker begins a sign-in of their own and wraps the victim's assertion in a Response
      // of their making (unsigned) that names their open request
      const attacker = PageClient.atOwnAddress(t);
      const own = await idp.respond(await toIdp(t, attacker, ATTACKER), { signResponse: false, signAssertion: false });
      assert.match(own.xml, new RegExp(`^<samlp:Response [^>]*InResponseTo="${own.requestId}"`));
      const wrapped = own.xml.replace(assertionOf(own.xml), () => assertionOf(unsolicited.xml));
      const attempt = await postBack(t, attacker, connection, formOf(wrapped, own));
      assert.equal(attempt.acs.status, 400, attempt.acs.text.slice(0, 300));
      assert.equal(attempt.signedIn, undefined);
      assert.equal(await whoIsSignedIn(attacker), undefined, 'the attacker’s browser is nobody’s');
      assert.equal(await t.db.kysely.selectFrom('users').select('id').where('email_normalized', '=', VICTIM).executeTakeFirst(), undefined);
    });

    it('the same wrapping of an assertion never posted before signs nobody in either: InResponseTo is read from signed content', async () => {
      const unsolicited = await answerFor(VICTIM, { inResponseTo: null, signResponse: false });
      const attacker = PageClient.atOwnAddress(t);
      const own = await idp.respond(await toIdp(t, attacker, ATTACKER), { signResponse: false, signAssertion: false });
      const wrapped = own.xml.replace(assertionOf(own.xml), () => assertionOf(unsolicited.xml));
      const attempt = await postBack(t, attacker, connection, formOf(wrapped, own));
      assert.equal(attempt.acs.status, 400);
      assert.equal(attempt.signedIn, undefined);
      assert.match(lastReason(), /^in-response-to: the only InResponseTo is on an unsigned Response/);
      assert.equal(await isUsed(t, connection, unsolicited.assertionId), true);
    });

    it('an assertion refused for its unsigned envelope (Destination, Status) is used up: corrected, it is refused', async () => {
      const cases = [
        { name: 'Destination', wrong: 'https://elsewhere.test/acs', reason: /^destination/ },
        { name: 'Value', wrong: 'urn:oasis:names:tc:SAML:2.0:status:Requester', reason: /^status/ },
      ];
      for (const c of cases) {
        const browser = PageClient.atOwnAddress(t);
        const location = await toIdp(t, browser, VICTIM);
        idp.setUser(VICTIM);
        const genuine = await idp.respond(location, { signResponse: false });
        const broken =
          c.name === 'Destination'
            ? withResponseAttribute(genuine, 'Destination', c.wrong)
            : genuine.xml.replace(/(<samlp:StatusCode Value=")[^"]*"/, (_m, head: string) => `${head}${c.wrong}"`);
        assert.notEqual(broken, genuine.xml, c.name);
        const first = await postBack(t, browser, connection, formOf(broken, genuine));
        assert.equal(first.acs.status, 400, c.name);
        assert.match(lastReason(), c.reason, c.name);
        assert.equal(await isUsed(t, connection, genuine.assertionId), true, c.name);
        // the very response the IdP sent, its envelope intact, to the request still open
        const corrected = await postBack(t, browser, connection, genuine);
        assert.equal(corrected.acs.status, 400, `${c.name}: ${corrected.acs.text.slice(0, 200)}`);
        assert.equal(corrected.signedIn, undefined, c.name);
        assert.match(lastReason(), /assertion replayed/, c.name);
      }
      // a new sign-in (a new assertion) works
      const browser = PageClient.atOwnAddress(t);
      const location = await toIdp(t, browser, VICTIM);
      idp.setUser(VICTIM);
      assert.equal((await postBack(t, browser, connection, await idp.respond(location, { signResponse: false }))).signedIn, VICTIM);
    });

    it('an assertion refused for whom it signs in, or for a request not open, is used up too', async () => {
      // a NameID outside the connection's domains
      const outside = await answerFor(VICTIM, { nameId: 'someone@elsewhere.test' });
      assert.equal((await postBack(t, PageClient.atOwnAddress(t), connection, outside)).acs.status, 403);
      assert.equal(await isUsed(t, connection, outside.assertionId), true, 'domain not served');
      // an account of another tenant that proved the address (refused inside the sign-in's
      // transaction, which rolls back)
      await signedInUser(t, `elsewhere@${DOMAIN}`);
      await t.db.kysely.updateTable('users').set({ email_verified_at: new Date() }).where('email_normalized', '=', `elsewhere@${DOMAIN}`).execute();
      const taken = await answerFor(VICTIM, { nameId: `elsewhere@${DOMAIN}` });
      const res = await postBack(t, PageClient.atOwnAddress(t), connection, taken);
      assert.equal(res.acs.status, 403);
      assert.match(res.acs.text, /exists in another organisation/);
      assert.equal(await isUsed(t, connection, taken.assertionId), true, 'another tenant’s account');
      // a request never issued, named in the assertion itself
      const unknown = await answerFor(VICTIM, { tamper: 'unknown-in-response-to' });
      assert.equal((await postBack(t, PageClient.atOwnAddress(t), connection, unknown)).acs.status, 400);
      assert.equal(await isUsed(t, connection, unknown.assertionId), true, 'unknown request');
    });

    it('a response without a valid signature uses up nothing: the genuine one still signs in', async () => {
      const browser = PageClient.atOwnAddress(t);
      const location = await toIdp(t, browser, VICTIM);
      idp.setUser(VICTIM);
      const genuine = await idp.respond(location);
      // the same IDs, signatures removed; and the signed assertion altered (its digest fails)
      const stripped = genuine.xml.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '');
      const altered = genuine.xml.replace(`>${VICTIM}<`, `>${ATTACKER}<`);
      assert.notEqual(stripped, genuine.xml);
      assert.notEqual(altered, genuine.xml);
      for (const forged of [stripped, altered]) {
        const res = await postBack(t, PageClient.atOwnAddress(t), connection, formOf(forged, genuine));
        assert.equal(res.acs.status, 400);
        assert.match(lastReason(), /^signature/);
        assert.equal(await isUsed(t, connection, genuine.assertionId), false);
      }
      assert.equal((await postBack(t, browser, connection, genuine)).signedIn, VICTIM);
    });

    it('signs in with the assertion signed, the response signed, or both', async () => {
      for (const signed of [
        { signResponse: false, signAssertion: true },
        { signResponse: true, signAssertion: false },
        { signResponse: true, signAssertion: true },
      ]) {
        const browser = PageClient.atOwnAddress(t);
        const location = await toIdp(t, browser, VICTIM);
        idp.setUser(VICTIM);
        const post = await idp.respond(location, signed);
        const res = await postBack(t, browser, connection, post);
        assert.equal(res.acs.status, 303, `${JSON.stringify(signed)}: ${lastReason()}`);
        assert.equal(res.signedIn, VICTIM, JSON.stringify(signed));
        assert.equal(await isUsed(t, connection, post.assertionId), true);
      }
    });
  });
}
