// src/sso/assertion-checks.ts on hand-made XML: the refusals the test IdP's attacks do not reach
// (test/sso/saml-idp-harness.test.ts covers those end to end, signatures included). No signature
// is needed here: checkAssertion is handed what verifySignature answers, an envelope and the
// assertion as a signature covered it, which these tests make by hand.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Envelope,
  type ExpectedAssertion,
  MAX_SAML_RESPONSE_BASE64,
  MAX_XML_DEPTH,
  MAX_XML_ATTRIBUTES,
  MAX_XML_CHILDREN,
  MAX_XML_NODES,
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
const REQUEST = '_req1';

function confirmation(attrs = `Recipient="${ACS}" NotOnOrAfter="2026-11-23T12:05:00Z" InResponseTo="${REQUEST}"`, method = BEARER): string {
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
  test('reads the envelope of a sound response, as unsigned; takes base64 wrapped in lines', () => {
    const encoded = b64(response()).replace(/(.{76})/g, '$1\r\n');
    const screened = screenSamlResponse(encoded);
    assert.deepEqual(screened.envelope, { signed: false, inResponseTo: undefined, destination: ACS, issuer: IDP, statusCode: SUCCESS });
    assert.equal(screened.xml, response());
  });

  test('refuses a field over 128 KiB unread', () => {
    assert.equal(MAX_SAML_RESPONSE_BASE64, 128 * 1024);
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

  test('refuses deep nesting before parsing; takes the deepest a limit allows', () => {
    // Response > Assertion > Subject > the nesting: MAX_XML_DEPTH elements deep in all
    const nested = (levels: number) => `${'<x>'.repeat(levels)}${'</x>'.repeat(levels)}`;
    const within = (levels: number, tail = '') =>
      b64(response({ inner: assertion({ nameId: `<saml:NameID>a</saml:NameID>${nested(levels)}${tail}` }) }));
    assert.equal(
      refusal(() => screenSamlResponse(within(MAX_XML_DEPTH - 3))),
      'accepted',
    );
    assert.equal(
      refusal(() => screenSamlResponse(within(MAX_XML_DEPTH - 2))),
      'too-deep',
    );
    // 20,000 deep and never closed: refused as deep, so before any parser ran (a parser would
    // have called it malformed, after nesting 20,000 elements)
    const unclosed = b64(response({ inner: assertion({ nameId: `<saml:NameID>a</saml:NameID>${'<x>'.repeat(20_000)}` }) }));
    assert.equal(
      refusal(() => screenSamlResponse(unclosed)),
      'too-deep',
    );
    // a self-closing element is a level too; comments, CDATA and quoted '>' are not markup
    assert.equal(
      refusal(() => screenSamlResponse(within(MAX_XML_DEPTH - 3, '<y/>'))),
      'accepted',
    );
    const tricky = `<!-- <x><x><x> --><![CDATA[<x><x>]]><?pi <x> ?><x a="<>" b='>'/>`;
    assert.equal(
      refusal(() => screenSamlResponse(within(MAX_XML_DEPTH - 4, tricky))),
      'accepted',
    );
  });

  test('refuses an end tag that closes no open element before parsing (xmldom would skip it and nest deeper)', () => {
    // each </z> would be skipped by xmldom, so 100 <a> would nest 100 deep while a count by tags said 1
    const skipped = '<a></z>'.repeat(100) + '</a>'.repeat(100);
    assert.equal(
      refusal(() => screenSamlResponse(b64(response({ inner: assertion({ nameId: `<saml:NameID>a</saml:NameID>${skipped}` }) })))),
      'malformed',
    );
  });

  test('refuses more elements and attributes than a response ever holds, before parsing', () => {
    // the response() and assertion() around them: 10 elements and 13 attributes (namespace
    // declarations included); then the <v/> elements and one <w> with its attributes
    const around = 23;
    // `elements` elements in groups of 100 (a <g> and 99 <v/> in it), under the limit of children
    const grouped = (elements: number) =>
      Array.from({ length: Math.ceil(elements / 100) }, (_, i) => `<g>${'<v/>'.repeat(Math.min(100, elements - i * 100) - 1)}</g>`).join('');
    const flat = (elements: number, attributes = 0) =>
      b64(
        response({
          inner: assertion({
            nameId: `<saml:NameID>a</saml:NameID>${grouped(elements)}<w${Array.from({ length: attributes }, (_, i) => ` a${i}=""`).join('')}/>`,
          }),
        }),
      );
    assert.equal(
      refusal(() => screenSamlResponse(flat(MAX_XML_NODES - around - 1))),
      'accepted',
    );
    assert.equal(
      refusal(() => screenSamlResponse(flat(MAX_XML_NODES - around))),
      'too-many-nodes',
    );
    assert.equal(
      refusal(() => screenSamlResponse(flat(MAX_XML_NODES - around - 1 - 3, 3))),
      'accepted',
    );
    assert.equal(
      refusal(() => screenSamlResponse(flat(MAX_XML_NODES - around - 1 - 2, 3))),
      'too-many-nodes',
      'attributes count',
    );
  });

  test('refuses an element with more child elements than any SAML element has, before parsing', () => {
    const children = (count: number) => b64(response({ inner: assertion({ nameId: `<saml:NameID>a</saml:NameID><x>${'<v/>'.repeat(count)}</x>` }) }));
    assert.equal(
      refusal(() => screenSamlResponse(children(MAX_XML_CHILDREN))),
      'accepted',
    );
    assert.equal(
      refusal(() => screenSamlResponse(children(MAX_XML_CHILDREN + 1))),
      'too-many-children',
    );
  });

  test('refuses an element with more attributes than any SAML element has, before parsing', () => {
    const element = (attributes: number) =>
      b64(
        response({
          inner: assertion({ nameId: `<saml:NameID>a</saml:NameID><w${Array.from({ length: attributes }, (_, i) => ` a${i}=">="`).join('')}/>` }),
        }),
      );
    assert.equal(
      refusal(() => screenSamlResponse(element(MAX_XML_ATTRIBUTES))),
      'accepted',
    );
    assert.equal(
      refusal(() => screenSamlResponse(element(MAX_XML_ATTRIBUTES + 1))),
      'too-many-attributes',
    );
  });
});

describe('checkAssertion', () => {
  const check = (
    xml: { response?: Parameters<typeof response>[0]; assertion?: Parameters<typeof assertion>[0]; envelope?: Partial<Envelope> },
    expected = EXPECTED,
  ) => checkAssertion({ ...screenSamlResponse(b64(response(xml.response))).envelope, ...xml.envelope }, assertion(xml.assertion), expected);

  test('accepts a sound assertion: its ID, the whole NameID, the request it answers, and how long to remember it', () => {
    assert.deepEqual(check({ assertion: { nameId: '<saml:NameID>alice@corp.test<!---->.evil.test</saml:NameID>' } }), {
      assertionId: '_a1',
      nameId: 'alice@corp.test.evil.test',
      inResponseTo: REQUEST,
      rememberUntil: new Date('2026-11-23T12:06:00Z'),
    });
    // the latest of the bearer confirmations, plus the skew
    const two = confirmation() + confirmation(`Recipient="${ACS}" NotOnOrAfter="2026-11-23T12:30:00Z" InResponseTo="${REQUEST}"`);
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
    const { envelope } = screenSamlResponse(b64(response()));
    assert.equal(
      refusal(() => checkAssertion(envelope, response(), EXPECTED)),
      'assertion',
    );
    assert.equal(
      refusal(() => checkAssertion(envelope, assertion().replace(' ID="_a1"', ''), EXPECTED)),
      'assertion',
    );
  });

  test('reads InResponseTo from signed content only: the assertion, or a signed Response', () => {
    const bare = confirmation(`Recipient="${ACS}" NotOnOrAfter="2026-11-23T12:05:00Z"`);
    const answering = (id: string) => confirmation(`Recipient="${ACS}" NotOnOrAfter="2026-11-23T12:05:00Z" InResponseTo="${id}"`);
    const inResponseTo = (xml: Parameters<typeof check>[0]) => {
      try {
        return check(xml).inResponseTo;
      } catch (error) {
        return (error as { reason?: SamlRefusal }).reason;
      }
    };
    // the assertion's, with or without the Response's beside it
    assert.equal(inResponseTo({}), REQUEST);
    assert.equal(inResponseTo({ envelope: { inResponseTo: REQUEST } }), REQUEST);
    // the Response's alone: only when the Response's own signature verified
    assert.equal(inResponseTo({ assertion: { confirmations: bare }, envelope: { inResponseTo: '_req2', signed: true } }), '_req2');
    // an unsigned Response's alone: the wrapping of an unsolicited assertion
    assert.equal(inResponseTo({ assertion: { confirmations: bare }, envelope: { inResponseTo: '_req2', signed: false } }), 'in-response-to');
    // none at all: unsolicited
    assert.equal(inResponseTo({ assertion: { confirmations: bare } }), 'in-response-to');
    assert.equal(inResponseTo({ assertion: { confirmations: bare }, envelope: { signed: true } }), 'in-response-to');
    // the Response and the assertion disagree, signed or not; or the confirmations among themselves
    assert.equal(inResponseTo({ envelope: { inResponseTo: '_req2' } }), 'in-response-to');
    assert.equal(inResponseTo({ envelope: { inResponseTo: '_req2', signed: true } }), 'in-response-to');
    assert.equal(inResponseTo({ assertion: { confirmations: answering(REQUEST) + answering('_req2') } }), 'in-response-to');
    // a confirmation without one beside one that has it: the one named
    assert.equal(inResponseTo({ assertion: { confirmations: answering(REQUEST) + bare } }), REQUEST);
  });
});
