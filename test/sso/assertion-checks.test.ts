// src/sso/assertion-checks.ts on hand-made XML: the refusals the test IdP's attacks do not reach
// (test/sso/saml-idp-harness.test.ts covers those end to end, signatures included). No signature
// is needed here: checkAssertion is handed XML node-saml has already verified.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type ExpectedAssertion,
  MAX_SAML_RESPONSE_BASE64,
  type SamlRefusal,
  checkAssertion,
  screenSamlResponse,
} from '../../src/sso/assertion-checks.js';

const ACS = 'https://gatehouse.test/sso/saml/conn-1/acs';
const IDP = 'https://idp.test/saml';
const NOW = new Date('2026-11-23T12:00:00Z');
const EXPECTED: ExpectedAssertion = { acsUrl: ACS, idpEntityId: IDP, now: NOW, clockSkewMs: 60_000 };
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';

function confirmation(attrs = `Recipient="${ACS}" NotOnOrAfter="2026-11-23T12:05:00Z"`, method = BEARER): string {
  return `<saml:SubjectConfirmation Method="${method}"><saml:SubjectConfirmationData ${attrs}/></saml:SubjectConfirmation>`;
}

function assertion({ id = '_a1', issuer = IDP, nameId = '<saml:NameID>alice@corp.test</saml:NameID>', confirmations = confirmation() } = {}): string {
  return `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${id}" Version="2.0"><saml:Issuer>${issuer}</saml:Issuer><saml:Subject>${nameId}${confirmations}</saml:Subject></saml:Assertion>`;
}

/** `issuer: null` leaves the Response's Issuer out */
function response({ inner = assertion(), status = SUCCESS, destination = ` Destination="${ACS}"`, issuer = IDP as string | null } = {}): string {
  const issuerXml = issuer === null ? '' : `<saml:Issuer>${issuer}</saml:Issuer>`;
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r1" Version="2.0"${destination}>${issuerXml}<samlp:Status><samlp:StatusCode Value="${status}"/></samlp:Status>${inner}</samlp:Response>`;
}

const b64 = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');

function refusal(run: () => unknown): SamlRefusal | 'accepted' {
  try {
    run();
    return 'accepted';
  } catch (error) {
    return (error as { reason?: SamlRefusal }).reason ?? (assert.fail(error as Error) as never);
  }
}

describe('screenSamlResponse', () => {
  test('reads the envelope of a sound response; takes base64 wrapped in lines', () => {
    const encoded = b64(response()).replace(/(.{76})/g, '$1\r\n');
    const screened = screenSamlResponse(encoded);
    assert.deepEqual({ ...screened, xml: undefined }, { xml: undefined, destination: ACS, issuer: IDP, statusCode: SUCCESS });
    assert.equal(screened.xml, response());
  });

  test('refuses a field over 256 KiB unread', () => {
    assert.equal(
      refusal(() => screenSamlResponse('A'.repeat(MAX_SAML_RESPONSE_BASE64 + 4))),
      'too-large',
    );
    assert.notEqual(
      refusal(() => screenSamlResponse(b64(response()).padEnd(MAX_SAML_RESPONSE_BASE64, ' '))),
      'too-large',
    );
  });

  test('refuses what is not base64 or not UTF-8', () => {
    for (const field of ['', 'not base64!', `${b64(response())}%`, b64(response()).replaceAll('+', '-').replaceAll('/', '_') + '-_'])
      assert.equal(
        refusal(() => screenSamlResponse(field)),
        'not-base64',
        field.slice(0, 20),
      );
    assert.equal(
      refusal(() => screenSamlResponse(Buffer.from([0x3c, 0xff, 0xfe, 0x3e]).toString('base64'))),
      'malformed',
    );
  });

  test('refuses a DOCTYPE or an entity declaration, wherever it is', () => {
    for (const xml of [
      `<!DOCTYPE r>${response()}`,
      `<!doctype r [<!ENTITY x "y">]>${response()}`,
      response({ inner: `<!-- <!ENTITY x "y"> -->${assertion()}` }),
    ])
      assert.equal(
        refusal(() => screenSamlResponse(b64(xml))),
        'doctype',
      );
  });

  test('refuses anything but one Response element alone at the top', () => {
    assert.equal(
      refusal(() => screenSamlResponse(b64(`${response()}<x/>`))),
      'malformed',
    );
    assert.equal(
      refusal(() => screenSamlResponse(b64(`${response()} trailing text`))),
      'malformed',
    );
    assert.equal(
      refusal(() => screenSamlResponse(b64(`${response()}<![CDATA[x]]>`))),
      'malformed',
    );
    assert.equal(
      refusal(() => screenSamlResponse(b64('<samlp:Response xmlns:samlp="urn:x">'))),
      'malformed',
    );
    assert.equal(
      refusal(() => screenSamlResponse(b64(assertion()))),
      'not-a-response',
    );
    assert.equal(
      refusal(() => screenSamlResponse(b64(response().replaceAll('urn:oasis:names:tc:SAML:2.0:protocol', 'urn:evil')))),
      'not-a-response',
    );
    // a comment or processing instruction beside the root is harmless
    assert.equal(
      refusal(() => screenSamlResponse(b64(`<?xml version="1.0"?>\n${response()}\n<!-- end -->\n`))),
      'accepted',
    );
  });

  test('refuses other than exactly one assertion, counted anywhere and by local name', () => {
    const encrypted = '<saml:EncryptedAssertion><x/></saml:EncryptedAssertion>';
    const nested = assertion({ nameId: `<saml:NameID>a</saml:NameID><saml:Advice>${assertion({ id: '_a2' })}</saml:Advice>` });
    for (const inner of ['', assertion() + encrypted, nested, `<evil:Assertion xmlns:evil="urn:evil"/>${assertion()}`])
      assert.equal(
        refusal(() => screenSamlResponse(b64(response({ inner })))),
        'assertion-count',
        inner.slice(0, 40),
      );
    assert.equal(
      refusal(() => screenSamlResponse(b64(response({ inner: encrypted })))),
      'accepted',
    );
  });

  test('refuses a repeated ID', () => {
    assert.equal(
      refusal(() => screenSamlResponse(b64(response({ inner: assertion({ id: '_r1' }) })))),
      'duplicate-id',
    );
  });

  test('refuses a deeply nested document without overflowing the stack', () => {
    const deep = `${'<x>'.repeat(20_000)}${'</x>'.repeat(20_000)}`;
    assert.equal(
      refusal(() => screenSamlResponse(b64(response({ inner: assertion({ nameId: `<saml:NameID>a</saml:NameID>${deep}` }) })))),
      'accepted',
    );
  });
});

describe('checkAssertion', () => {
  const check = (xml: { response?: Parameters<typeof response>[0]; assertion?: Parameters<typeof assertion>[0] }, expected = EXPECTED) =>
    checkAssertion(screenSamlResponse(b64(response(xml.response))), assertion(xml.assertion), expected);

  test('accepts a sound assertion: its ID, the whole NameID, and how long to remember it', () => {
    assert.deepEqual(check({ assertion: { nameId: '<saml:NameID>alice@corp.test<!---->.evil.test</saml:NameID>' } }), {
      assertionId: '_a1',
      nameId: 'alice@corp.test.evil.test',
      rememberUntil: new Date('2026-11-23T12:06:00Z'),
    });
    // the latest of the bearer confirmations, plus the skew
    const two = confirmation() + confirmation(`Recipient="${ACS}" NotOnOrAfter="2026-11-23T12:30:00Z"`);
    assert.deepEqual(check({ assertion: { confirmations: two } }).rememberUntil, new Date('2026-11-23T12:31:00Z'));
    // a Response without Destination or Issuer (both optional) is fine
    assert.equal(check({ response: { destination: '', issuer: null } }).nameId, 'alice@corp.test');
  });

  test('refuses a non-success status, another Destination, another Issuer', () => {
    assert.equal(
      refusal(() => check({ response: { status: 'urn:oasis:names:tc:SAML:2.0:status:Requester' } })),
      'status',
    );
    assert.equal(
      refusal(() => check({ response: { destination: ` Destination="${ACS}/other"` } })),
      'destination',
    );
    assert.equal(
      refusal(() => check({ response: { issuer: 'https://other-idp.test' } })),
      'issuer',
    );
    assert.equal(
      refusal(() => check({ assertion: { issuer: 'https://other-idp.test' } })),
      'issuer',
    );
  });

  test('refuses an assertion without NameID', () => {
    assert.equal(
      refusal(() => check({ assertion: { nameId: '' } })),
      'assertion',
    );
    assert.equal(
      refusal(() => check({ assertion: { nameId: '<saml:NameID></saml:NameID>' } })),
      'assertion',
    );
  });

  test('requires bearer confirmations only, each for this ACS with a NotOnOrAfter in UTC', () => {
    const cases: [string, SamlRefusal][] = [
      ['', 'subject-confirmation'],
      [confirmation(undefined, 'urn:oasis:names:tc:SAML:2.0:cm:holder-of-key'), 'subject-confirmation'],
      [confirmation() + confirmation(undefined, 'urn:oasis:names:tc:SAML:2.0:cm:sender-vouches'), 'subject-confirmation'],
      [confirmation('NotOnOrAfter="2026-11-23T12:05:00Z"'), 'recipient'],
      [confirmation(`Recipient="${ACS}/other" NotOnOrAfter="2026-11-23T12:05:00Z"`), 'recipient'],
      [confirmation() + confirmation(`Recipient="https://elsewhere.test/acs" NotOnOrAfter="2026-11-23T12:05:00Z"`), 'recipient'],
      [confirmation(`Recipient="${ACS}"`), 'subject-confirmation'],
      [confirmation(`Recipient="${ACS}" NotOnOrAfter="2026-11-23T12:05:00"`), 'subject-confirmation'],
      [confirmation(`Recipient="${ACS}" NotOnOrAfter="soon"`), 'subject-confirmation'],
    ];
    for (const [confirmations, reason] of cases)
      assert.equal(
        refusal(() => check({ assertion: { confirmations } })),
        reason,
        confirmations,
      );
  });

  test('refuses an assertion whose confirmations have all expired, whatever node-saml was told', () => {
    const at = (iso: string) => ({ ...EXPECTED, now: new Date(iso) });
    assert.equal(
      refusal(() => check({}, at('2026-11-23T12:05:59.999Z'))),
      'accepted',
    );
    assert.equal(
      refusal(() => check({}, at('2026-11-23T12:06:00Z'))),
      'expired',
    );
    assert.throws(() => check({}, { ...EXPECTED, clockSkewMs: -1 }), /clockSkewMs/);
  });

  test('refuses verified XML that is not one assertion', () => {
    const screened = screenSamlResponse(b64(response()));
    assert.equal(
      refusal(() => checkAssertion(screened, response(), EXPECTED)),
      'assertion',
    );
    assert.equal(
      refusal(() => checkAssertion(screened, assertion().replace(' ID="_a1"', ''), EXPECTED)),
      'assertion',
    );
  });
});
