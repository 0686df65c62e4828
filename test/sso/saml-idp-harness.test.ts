// The test IdP (test/helpers/saml-idp.ts) proven against node-saml 5.1 as the service will run
// it: node-saml configured as the service configures it, with src/sso/assertion-checks.ts on
// either side. The untampered response signs Alice in; every attack the harness can mount is
// refused, and each test records which layer refuses it and what node-saml alone makes of it,
// so a change in node-saml's behaviour shows here first.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type CacheItem, type CacheProvider, type Profile, SAML, type SamlConfig, ValidateInResponseTo } from '@node-saml/node-saml';
import { checkAssertion, type SamlRefusal, SamlResponseRefused, screenSamlResponse, verifySignature } from '../../src/sso/assertion-checks.js';
import {
  COMMENT_SUFFIX,
  FORGED_NAME_ID,
  type SamlPost,
  type Tamper,
  type TestIdp,
  XSLT_TRANSFORM,
  createKeyPair,
  startTestIdp,
} from '../helpers/saml-idp.js';
import { validateSchema } from '../helpers/saml-idp/samlify.js';
import { signatureOf, signedInfoVerifies } from '../helpers/saml-idp/xml-crypto.js';

const SP_ENTITY_ID = 'https://gatehouse.test/sso/saml/conn-1/metadata';
const ACS_URL = 'https://gatehouse.test/sso/saml/conn-1/acs';
const CLOCK_SKEW_MS = 60_000;

/** node-saml's request-ID cache on a Map, as the service keeps it in the database. */
class MapCache implements CacheProvider {
  readonly entries = new Map<string, CacheItem>();
  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    if (this.entries.has(key)) return null;
    const item = { value, createdAt: Date.now() };
    this.entries.set(key, item);
    return item;
  }
  async getAsync(key: string): Promise<string | null> {
    return this.entries.get(key)?.value ?? null;
  }
  async removeAsync(key: string | null): Promise<string | null> {
    if (key === null) return null;
    const item = this.entries.get(key);
    this.entries.delete(key);
    return item?.value ?? null;
  }
}

/** The SP configuration the service should use (see the report on the saml-idp branch). */
function spConfig(idp: TestIdp, overrides: Partial<SamlConfig> = {}): SamlConfig {
  return {
    entryPoint: idp.ssoUrl,
    idpCert: [idp.certificatePem],
    issuer: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    audience: SP_ENTITY_ID,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.ifPresent,
    requestIdExpirationPeriodMs: 10 * 60_000,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    cacheProvider: new MapCache(),
    signatureAlgorithm: 'sha256',
    disableRequestedAuthnContext: true,
    ...overrides,
  };
}

type Layer = 'screen' | 'signature' | 'node-saml' | 'checks' | 'replay';
type Verdict = { ok: true; nameId: string } | { ok: false; message: string };
/** refusedBy and message, or the NameID (and attributes) of who signed in */
interface Outcome {
  refusedBy?: Layer;
  /** the SamlRefusal, when assertion-checks refused */
  reason?: SamlRefusal;
  message?: string;
  nameId?: string;
  attributes?: unknown;
  nodeSaml: Verdict;
}

/** The service's ACS, in the service's order: screen, signature, node-saml, checks, replay
 *  store. Unlike the service it runs node-saml even after an earlier layer refused, to record
 *  what node-saml alone would have done. */
class Sp {
  readonly saml: SAML;
  readonly #certificates: string[];
  readonly #seen = new Map<string, number>();
  constructor(
    readonly idp: TestIdp,
    overrides: Partial<SamlConfig> = {},
  ) {
    this.saml = new SAML(spConfig(idp, overrides));
    this.#certificates = (overrides.idpCert as string[] | undefined) ?? [idp.certificatePem];
  }

  authnRequestUrl(relayState = 'console'): Promise<string> {
    return this.saml.getAuthorizeUrlAsync(relayState, undefined, {});
  }

  async acs(post: Pick<SamlPost, 'SAMLResponse' | 'RelayState'>): Promise<Outcome> {
    let screened: ReturnType<typeof screenSamlResponse> | undefined;
    let screenError: Error | undefined;
    try {
      screened = screenSamlResponse(post.SAMLResponse);
    } catch (error) {
      screenError = error as Error;
    }
    let profile: Profile | null = null;
    let nodeSaml: Verdict;
    try {
      ({ profile } = await this.saml.validatePostResponseAsync({ SAMLResponse: post.SAMLResponse, RelayState: post.RelayState ?? '' }));
      nodeSaml = { ok: true, nameId: profile!.nameID };
    } catch (error) {
      nodeSaml = { ok: false, message: (error as Error).message };
    }
    if (screenError || !screened) return { refusedBy: 'screen', ...refusal(screenError), nodeSaml };
    let signed: ReturnType<typeof verifySignature>;
    try {
      signed = verifySignature(screened, this.#certificates, { now: new Date(), clockSkewMs: CLOCK_SKEW_MS });
    } catch (error) {
      return { refusedBy: 'signature', ...refusal(error), nodeSaml };
    }
    if (!nodeSaml.ok || !profile) return { refusedBy: 'node-saml', message: nodeSaml.ok ? 'no profile' : nodeSaml.message, nodeSaml };
    try {
      const accepted = checkAssertion(signed.envelope, signed.assertionXml, {
        acsUrl: ACS_URL,
        idpEntityId: this.idp.entityId,
        now: new Date(),
        clockSkewMs: CLOCK_SKEW_MS,
      });
      // the replay store: an assertion ID is claimed once, until it could no longer be accepted
      const claimed = this.#seen.get(accepted.assertionId);
      if (claimed !== undefined && claimed > Date.now()) return { refusedBy: 'replay', message: 'assertion already used', nodeSaml };
      this.#seen.set(accepted.assertionId, accepted.rememberUntil.getTime());
      assert.equal(accepted.nameId, profile.nameID, 'assertion-checks and node-saml read the same NameID');
      return { nameId: accepted.nameId, attributes: profile.attributes, nodeSaml };
    } catch (error) {
      return { refusedBy: 'checks', ...refusal(error), nodeSaml };
    }
  }
}

function refusal(error: unknown): { reason: SamlRefusal; message: string } {
  assert.ok(error instanceof SamlResponseRefused, `not a refusal: ${error}`);
  return { reason: error.reason, message: error.message };
}

let idp: TestIdp;
let sp: Sp;

before(async () => {
  idp = await startTestIdp();
  idp.setUser('alice@corp.test', { displayName: 'Alice Liddell', groups: ['admins', 'staff'] });
  sp = new Sp(idp);
});
after(() => idp.close());

describe('the test IdP', () => {
  test('serves its metadata: entityID, signing certificate, SSO by Redirect and POST', async () => {
    const res = await fetch(idp.metadataUrl);
    assert.equal(res.status, 200);
    const xml = await res.text();
    assert.equal(xml, idp.metadata);
    assert.match(xml, new RegExp(`entityID="${idp.entityId}"`));
    assert.equal(xml.split(idp.certificateBase64).length - 1, 1);
    for (const binding of ['HTTP-Redirect', 'HTTP-POST'])
      assert.match(xml, new RegExp(`SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:${binding}" Location="${idp.ssoUrl}"`));
  });

  test('signs Alice in through node-saml, with her attributes, in a schema-valid response', async () => {
    const url = await sp.authnRequestUrl('relay-1');
    const post = await idp.respond(url);
    assert.equal(post.acsUrl, ACS_URL);
    assert.equal(post.RelayState, 'relay-1');
    assert.equal(post.form.get('SAMLResponse'), post.SAMLResponse);
    assert.equal(idp.requests.at(-1)?.issuer, SP_ENTITY_ID);
    await validateSchema(post.xml);
    assert.equal(post.xml.split('<ds:Signature ').length, 3, 'the response and the assertion signed');
    const result = await sp.acs(post);
    assert.deepEqual(result, {
      nameId: 'alice@corp.test',
      attributes: { displayName: 'Alice Liddell', groups: ['admins', 'staff'] },
      nodeSaml: { ok: true, nameId: 'alice@corp.test' },
    });
  });

  test('answers a browser: GET /sso is a page that posts the response to the ACS', async () => {
    const url = await sp.authnRequestUrl('relay-2');
    const res = await fetch(url);
    assert.equal(res.status, 200);
    const page = await res.text();
    assert.match(page, new RegExp(`<form id="idp-form" method="post" action="${ACS_URL}">`));
    assert.match(page, /<input type="hidden" name="RelayState" value="relay-2">/);
    assert.match(page, /<button id="idp-continue" type="submit">/);
    assert.match(page, /document\.getElementById\('idp-form'\)\.submit\(\)/);
    const SAMLResponse = /name="SAMLResponse" value="([^"]+)"/.exec(page)?.[1];
    assert.ok(SAMLResponse);
    assert.equal((await sp.acs({ SAMLResponse, RelayState: 'relay-2' })).nameId, 'alice@corp.test');
  });

  test('takes the AuthnRequest by HTTP-POST too', async () => {
    // node-saml deflates a POST-binding request too unless told not to; the binding says plain
    // base64 (SAML bindings §3.5.4), and an IdP, like this one, reads it so
    const posting = new Sp(idp, { authnRequestBinding: 'HTTP-POST', skipRequestCompression: true });
    const form = await posting.saml.getAuthorizeFormAsync('relay-3', undefined, {});
    const SAMLRequest = /name="SAMLRequest" value="([^"]+)"/.exec(form)?.[1];
    assert.ok(SAMLRequest);
    const res = await fetch(idp.ssoUrl, { method: 'POST', body: new URLSearchParams({ SAMLRequest, RelayState: 'relay-3' }) });
    assert.equal(res.status, 200);
    assert.equal(idp.requests.at(-1)?.binding, 'post');
    const SAMLResponse = /name="SAMLResponse" value="([^"]+)"/.exec(await res.text())?.[1];
    assert.equal((await posting.acs({ SAMLResponse: SAMLResponse!, RelayState: 'relay-3' })).nameId, 'alice@corp.test');
  });

  test('answers the browser with the response defaults, an attack included', async () => {
    idp.setResponseDefaults({ tamper: 'expired' });
    try {
      const page = await (await fetch(await sp.authnRequestUrl())).text();
      const SAMLResponse = /name="SAMLResponse" value="([^"]+)"/.exec(page)?.[1];
      assert.equal((await sp.acs({ SAMLResponse: SAMLResponse!, RelayState: undefined })).refusedBy, 'node-saml');
    } finally {
      idp.setResponseDefaults({});
    }
  });

  test('refuses, with a 400, an AuthnRequest it cannot read', async () => {
    const res = await fetch(`${idp.ssoUrl}?SAMLRequest=bm90IHNhbWw%3D`);
    assert.equal(res.status, 400);
    assert.match(await res.text(), /refused the AuthnRequest/);
  });
});

// What each attack meets: the first layer of the service's ACS that refuses it, and what node-saml
// alone answers (a message, or the NameID it would sign in).
const ATTACKS: Record<Exclude<Tamper, 'comment-in-nameid'>, { refusedBy: Layer; reason?: SamlRefusal; nodeSaml: RegExp | { accepts: string } }> = {
  unsigned: { refusedBy: 'signature', reason: 'signature', nodeSaml: /^Invalid signature$/ },
  'attacker-key': { refusedBy: 'signature', reason: 'signature', nodeSaml: /^Invalid signature$/ },
  'wrap-sibling': { refusedBy: 'screen', reason: 'assertion-count', nodeSaml: /^Invalid signature: multiple assertions$/ },
  'wrap-extensions': { refusedBy: 'screen', reason: 'assertion-count', nodeSaml: /^Invalid signature$/ },
  'wrap-object': { refusedBy: 'screen', reason: 'assertion-count', nodeSaml: /^Invalid signature: ID cannot refer to more than one element$/ },
  'wrong-audience': { refusedBy: 'node-saml', nodeSaml: /^SAML assertion audience mismatch/ },
  // node-saml checks every AudienceRestriction (node-saml #340); the second names another SP
  'extra-audience-restriction': {
    refusedBy: 'node-saml',
    nodeSaml: /^SAML assertion audience mismatch\. .* Received: \S+\/another-connection\/metadata$/,
  },
  expired: { refusedBy: 'node-saml', nodeSaml: /^No valid subject confirmation found/ },
  'not-yet-valid': { refusedBy: 'node-saml', nodeSaml: /^SAML assertion not yet valid/ },
  'unknown-in-response-to': { refusedBy: 'node-saml', nodeSaml: /^InResponseTo is not valid$/ },
  // configured as the service configures it (validateInResponseTo 'ifPresent'), node-saml takes a
  // response that answers no request; the service reads InResponseTo from signed content itself
  unsolicited: { refusedBy: 'checks', reason: 'in-response-to', nodeSaml: { accepts: 'alice@corp.test' } },
  'other-acs': { refusedBy: 'checks', reason: 'destination', nodeSaml: { accepts: 'alice@corp.test' } },
  'wrong-issuer': { refusedBy: 'checks', reason: 'issuer', nodeSaml: { accepts: 'alice@corp.test' } },
  doctype: { refusedBy: 'screen', reason: 'doctype', nodeSaml: { accepts: 'alice@corp.test' } },
  'two-roots': { refusedBy: 'screen', reason: 'malformed', nodeSaml: /Only one element can be added/ },
  // the three below are refused by the signature check node-saml and the service share
  // (getVerifiedXml over xml-crypto); 'the attacks on the signature itself…' shows each is a
  // valid signature but for what it tests
  'comment-in-digest': { refusedBy: 'signature', reason: 'signature', nodeSaml: /^Invalid signature$/ },
  // node-saml counts the Transform elements of the whole signature (two per Reference) before
  // it counts References
  'two-references': { refusedBy: 'signature', reason: 'signature', nodeSaml: /^Invalid signature, too many transforms$/ },
  'xslt-transform': { refusedBy: 'signature', reason: 'signature', nodeSaml: /^Invalid signature$/ },
};

describe('every attack is refused', () => {
  for (const [tamper, expected] of Object.entries(ATTACKS) as [Tamper, (typeof ATTACKS)['unsigned']][]) {
    test(`${tamper}: refused by ${expected.refusedBy}`, async () => {
      const post = await idp.respond(await sp.authnRequestUrl(), { tamper });
      const result = await sp.acs(post);
      assert.equal(result.refusedBy, expected.refusedBy, `${tamper}: ${result.message ?? `signed in ${result.nameId}`}`);
      assert.equal(result.reason, expected.reason, result.message);
      if (expected.nodeSaml instanceof RegExp)
        assert.match(result.nodeSaml.ok ? `accepted ${result.nodeSaml.nameId}` : result.nodeSaml.message, expected.nodeSaml);
      else assert.deepEqual(result.nodeSaml, { ok: true, nameId: expected.nodeSaml.accepts });
      if (result.nodeSaml.ok) assert.notEqual(result.nodeSaml.nameId, FORGED_NAME_ID);
    });
  }

  test('comment in NameID: node-saml and the checks read it whole, so the domain is evil.test', async () => {
    const post = await idp.respond(await sp.authnRequestUrl(), { tamper: 'comment-in-nameid' });
    assert.match(post.xml, /<saml:NameID [^>]*>alice@corp\.test<!---->\.evil\.test<\/saml:NameID>/);
    const result = await sp.acs(post);
    const whole = `alice@corp.test${COMMENT_SUFFIX}`;
    assert.equal(result.nameId, whole);
    assert.deepEqual(result.nodeSaml, { ok: true, nameId: whole });
    // the connection's domain check (the service's) then refuses it: corp.test.evil.test is not corp.test
    assert.equal(result.nameId!.split('@')[1], 'corp.test.evil.test');
  });

  test('the attacks on the signature itself are valid signatures by the IdP’s key but for what each tests', async () => {
    const cert = idp.certificatePem;
    // comment in DigestValue: SignedInfo verifies as posted; its digest is the genuine assertion's,
    // and the comment's is the forged one's (with it as the value, only SignatureValue fails)
    const comment = await idp.respond(await sp.authnRequestUrl(), { tamper: 'comment-in-digest' });
    assert.match(comment.xml, new RegExp(`>${FORGED_NAME_ID}</saml:NameID>`));
    assert.match(comment.xml, /<ds:DigestValue><!--[A-Za-z0-9+/=]{44}-->[A-Za-z0-9+/=]{44}<\/ds:DigestValue>/);
    assert.equal(signedInfoVerifies(comment.xml, cert), true);
    assert.equal(signatureOf(comment.xml, cert).checkSignature(comment.xml), false, 'the signed digest is not the forged assertion’s');
    const commentAsValue = comment.xml.replace(/<ds:DigestValue><!--([^-]+)-->[^<]+</, '<ds:DigestValue>$1<');
    assert.throws(() => signatureOf(commentAsValue, cert).checkSignature(commentAsValue), /the signature value \S+ is incorrect/);

    // two References, to the assertion and to the Response: a valid signature to xml-crypto
    const two = await idp.respond(await sp.authnRequestUrl(), { tamper: 'two-references' });
    const twoSignature = signatureOf(two.xml, cert);
    assert.equal(twoSignature.checkSignature(two.xml), true);
    assert.deepEqual(
      twoSignature.getReferences().map((r) => r.uri),
      [`#${two.assertionId}`, `#${two.responseId}`],
    );

    // XSLT: SignedInfo verifies; xml-crypto stops at the transform; with exclusive c14n in its
    // place the digest is right (only SignatureValue then fails)
    const xslt = await idp.respond(await sp.authnRequestUrl(), { tamper: 'xslt-transform' });
    assert.equal(signedInfoVerifies(xslt.xml, cert), true);
    assert.throws(() => signatureOf(xslt.xml, cert).checkSignature(xslt.xml), /REC-xslt-19991116' is not supported/);
    const excC14n = xslt.xml.replace(
      new RegExp(`<ds:Transform Algorithm="${XSLT_TRANSFORM}">.*?</ds:Transform>`),
      '<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>',
    );
    assert.notEqual(excC14n, xslt.xml);
    assert.throws(() => signatureOf(excC14n, cert).checkSignature(excC14n), /the signature value \S+ is incorrect/);
  });

  test('replay: the same response a second time is refused', async () => {
    const post = await idp.respond(await sp.authnRequestUrl());
    assert.equal((await sp.acs(post)).nameId, 'alice@corp.test');
    const again = await sp.acs(post);
    // node-saml forgot the request ID after the first use; the replay store would refuse it too
    assert.equal(again.refusedBy, 'node-saml');
    assert.deepEqual(again.nodeSaml, { ok: false, message: 'InResponseTo is not valid' });
  });

  test('replay: the same response twice at once signs in once', async () => {
    const post = await idp.respond(await sp.authnRequestUrl());
    const results = await Promise.all([sp.acs(post), sp.acs(post)]);
    assert.deepEqual(results.map((r) => r.nameId ?? r.refusedBy).sort(), ['alice@corp.test', 'replay']);
    // node-saml let both through: its request-ID check and its removal are not one step, which is
    // why the service claims assertion IDs (in one statement) as well
    assert.deepEqual(
      results.map((r) => r.nodeSaml.ok),
      [true, true],
    );
  });
});

describe('signing styles and keys', () => {
  test('an assertion signed alone (the default of most IdPs) is accepted', async () => {
    const post = await idp.respond(await sp.authnRequestUrl(), { signResponse: false });
    assert.equal(post.xml.split('<ds:Signature ').length, 2, 'one signature');
    assert.ok(post.xml.indexOf('<ds:Signature ') > post.xml.indexOf('<saml:Assertion '), 'inside the assertion');
    assert.equal((await sp.acs(post)).nameId, 'alice@corp.test');
  });

  test('a response signed around an unsigned assertion is refused (wantAssertionsSigned)', async () => {
    const post = await idp.respond(await sp.authnRequestUrl(), { signAssertion: false });
    const result = await sp.acs(post);
    assert.equal(result.refusedBy, 'node-saml');
    assert.deepEqual(result.nodeSaml, { ok: false, message: 'Invalid signature' });
  });

  test('with no certificate to trust, a genuine response is refused: verification is never skipped', async () => {
    const post = await idp.respond(await sp.authnRequestUrl());
    assert.equal((await sp.acs(post)).nameId, 'alice@corp.test', 'genuine');
    assert.throws(
      () => verifySignature(screenSamlResponse(post.SAMLResponse), [], { now: new Date(), clockSkewMs: CLOCK_SKEW_MS }),
      (error: unknown) => error instanceof SamlResponseRefused && error.reason === 'signature',
    );
  });

  test('rollover: both certificates in the metadata; an SP that trusts both accepts either key', async () => {
    const rolloverIdp = await startTestIdp();
    try {
      const oldCert = rolloverIdp.certificatePem;
      const oldCertBase64 = rolloverIdp.certificateBase64;
      const rollover = await rolloverIdp.addSigningKey();
      assert.ok(rolloverIdp.metadata.includes(rolloverIdp.certificateBase64) && rolloverIdp.metadata.includes(rollover.certificateBase64));
      const trustsBoth = new Sp(rolloverIdp, { idpCert: [oldCert, rollover.certificatePem] });
      const trustsOld = new Sp(rolloverIdp, { idpCert: [oldCert] });
      for (const signWith of ['current', 'rollover'] as const) {
        const post = await rolloverIdp.respond(await trustsBoth.authnRequestUrl(), { signWith });
        assert.equal((await trustsBoth.acs(post)).nameId, 'alice@corp.test', signWith);
      }
      const post = await rolloverIdp.respond(await trustsOld.authnRequestUrl(), { signWith: 'rollover' });
      const refused = await trustsOld.acs(post);
      assert.equal(refused.refusedBy, 'signature');
      assert.deepEqual(refused.nodeSaml, { ok: false, message: 'Invalid signature' });

      rolloverIdp.completeRollover();
      assert.equal(rolloverIdp.certificatePem, rollover.certificatePem);
      assert.ok(!rolloverIdp.metadata.includes(oldCertBase64), 'the old certificate has left the metadata');
    } finally {
      await rolloverIdp.close();
    }
  });

  test('signed AuthnRequests: verified when the IdP is given the SP certificate', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-sp-key-'));
    const spKey = await createKeyPair(dir, 'sp', 'sp.test');
    const strictIdp = await startTestIdp({ spSigningCertificate: spKey.certificatePem });
    try {
      assert.match(strictIdp.metadata, /WantAuthnRequestsSigned="true"/);
      const signing = new Sp(strictIdp, { privateKey: spKey.privateKeyPem, publicCert: spKey.certificatePem });
      const url = await signing.authnRequestUrl();
      assert.match(url, /&SigAlg=.*&Signature=/);
      const post = await strictIdp.respond(url);
      assert.equal(strictIdp.requests.at(-1)?.signed, true);
      assert.equal((await signing.acs(post)).nameId, 'alice@corp.test');
      const unsigned = new Sp(strictIdp);
      await assert.rejects(strictIdp.respond(await unsigned.authnRequestUrl()), /ERR_MISSING_SIG_ALG/);
    } finally {
      await strictIdp.close();
      await rm(dir, { recursive: true });
    }
  });
});
