// Fuzzing the SAML ACS (issue 25 item 3; docs/security.md "Fuzzing"), on both engines, over HTTP
// against the test IdP (test/helpers/saml-idp.ts): each case begins a real sign-in in a browser
// of its own, has the IdP sign a response for it, then changes that response as generated: edits
// of its XML text anywhere (the signed parts included), structural attacks (a comment in the
// NameID, another subject, signatures removed, a second assertion, a DOCTYPE with an entity, the
// audience, recipient, destination, issuer or times changed, a failure status), a NameID of any
// text, a SAMLResponse that is not one (any text, any bytes in base64), none at all, any
// RelayState. Whatever is posted: never a 5xx; a redirect never leaves the site; nobody but the
// user the IdP signed for is ever signed in, and a structural attack signs in nobody; a refusal
// writes nothing but the records of the SAML exchange itself (the request used up, the assertion
// recorded as used: docs/sso.md "Sign-in"); the posted response, a bearer credential while it is
// fresh, is in no log line. fast-check prints the seed and path of a failing case.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { countRowWrites, rowWrites } from '../helpers/row-writes.js';
import type { TestIdp } from '../helpers/saml-idp.js';
import { type Connection, formOf, PageClient, postBack, toIdp, whoIsSignedIn, samlWorld } from '../sso/saml-flow.js';

const DOMAIN = 'fuzz.test';
const USER = `someone@${DOMAIN}`;
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
/** what a refused post may write: the exchange's own records */
const EXCHANGE_TABLES = new Set(['saml_requests', 'saml_assertions_used']);

type Structural =
  | 'nameid-comment'
  | 'nameid-other'
  | 'drop-signatures'
  | 'drop-assertion-signature'
  | 'duplicate-assertion'
  | 'doctype-entity'
  | 'audience-other'
  | 'recipient-other'
  | 'destination-other'
  | 'expired'
  | 'issuer-other'
  | 'status-failure';

type Mutation =
  | { kind: 'edits'; edits: { at: number; op: 'replace' | 'delete' | 'insert'; text: string }[] }
  | { kind: 'structural'; attack: Structural }
  | { kind: 'nameid'; value: string }
  | { kind: 'raw'; raw: string }
  | { kind: 'missing' }
  | { kind: 'relay'; relay: string };

const STRUCTURAL: Structural[] = [
  'nameid-comment',
  'nameid-other',
  'drop-signatures',
  'drop-assertion-signature',
  'duplicate-assertion',
  'doctype-entity',
  'audience-other',
  'recipient-other',
  'destination-other',
  'expired',
  'issuer-other',
  'status-failure',
];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc
    .array(
      fc.record({
        at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        op: fc.constantFrom('replace' as const, 'delete' as const, 'insert' as const),
        text: fc.oneof(fc.string({ minLength: 1, maxLength: 6 }), fc.constantFrom('<', '>', '"', '&', '/', ' ', '=', '<!--x-->', '&amp;', '\u0000')),
      }),
      { minLength: 1, maxLength: 4 },
    )
    .map((edits) => ({ kind: 'edits' as const, edits })),
  fc.constantFrom(...STRUCTURAL).map((attack) => ({ kind: 'structural' as const, attack })),
  fc.string({ maxLength: 60 }).map((value) => ({ kind: 'nameid' as const, value })),
  fc
    .oneof(
      fc.string({ maxLength: 200 }),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('base64')),
      fc.string({ maxLength: 200 }).map((s) => Buffer.from(`<samlp:Response>${s}</samlp:Response>`).toString('base64')),
    )
    .map((raw) => ({ kind: 'raw' as const, raw })),
  fc.constant({ kind: 'missing' as const }),
  fc
    .oneof(fc.string({ maxLength: 80 }), fc.constantFrom('//evil.example/', 'https://evil.example/', 'javascript:alert(1)', '/\\evil.example'))
    .map((relay) => ({ kind: 'relay' as const, relay })),
);

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const nameIdRe = /(<saml:NameID[^>]*>)([^<]*)(<\/saml:NameID>)/;

function structural(xml: string, attack: Structural): string {
  switch (attack) {
    case 'nameid-comment':
      return xml.replace(nameIdRe, (_m, open: string, value: string, close: string) => `${open}${value}<!---->.evil.example${close}`);
    case 'nameid-other':
      return xml.replace(nameIdRe, (_m, open: string, _value: string, close: string) => `${open}admin@${DOMAIN}${close}`);
    case 'drop-signatures':
      return xml.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '');
    case 'drop-assertion-signature': {
      const start = xml.indexOf('<saml:Assertion ');
      const head = xml.slice(0, start);
      return head + xml.slice(start).replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '');
    }
    case 'duplicate-assertion': {
      const start = xml.indexOf('<saml:Assertion ');
      const end = xml.lastIndexOf('</saml:Assertion>') + '</saml:Assertion>'.length;
      const assertion = xml.slice(start, end).replace(nameIdRe, (_m, open: string, _v: string, close: string) => `${open}admin@${DOMAIN}${close}`);
      return xml.slice(0, start) + assertion + xml.slice(start);
    }
    case 'doctype-entity':
      return `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e "admin@${DOMAIN}">]>${xml.replace(nameIdRe, (_m, open: string, _v: string, close: string) => `${open}&e;${close}`)}`;
    case 'audience-other':
      return xml.replace(/(<saml:Audience>)[^<]*(<\/saml:Audience>)/, '$1https://other-sp.example/$2');
    case 'recipient-other':
      return xml.replace(/Recipient="[^"]*"/, 'Recipient="https://other-sp.example/acs"');
    case 'destination-other':
      return xml.replace(/Destination="[^"]*"/, 'Destination="https://other-sp.example/acs"');
    case 'expired':
      return xml.replace(/NotOnOrAfter="[^"]*"/g, 'NotOnOrAfter="2001-01-01T00:00:00Z"');
    case 'issuer-other':
      return xml.replace(/(<saml:Issuer[^>]*>)[^<]*(<\/saml:Issuer>)/g, '$1https://evil-idp.example/$2');
    case 'status-failure':
      return xml.replace(/urn:oasis:names:tc:SAML:2\.0:status:Success/, 'urn:oasis:names:tc:SAML:2.0:status:Requester');
  }
}

function edited(xml: string, edits: { at: number; op: 'replace' | 'delete' | 'insert'; text: string }[]): string {
  let out = xml;
  for (const e of edits) {
    const i = Math.floor(e.at * out.length);
    out =
      e.op === 'insert'
        ? out.slice(0, i) + e.text + out.slice(i)
        : out.slice(0, i) + (e.op === 'replace' ? e.text : '') + out.slice(i + e.text.length);
  }
  return out;
}

for (const engine of engines()) {
  describe(`fuzzing the SAML ACS (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let connection: Connection;

    let world: Awaited<ReturnType<typeof samlWorld>>;
    before(async () => {
      world = await samlWorld(engine, DOMAIN);
      ({ t, idp, connection } = world);
      idp.setUser(USER);
      await countRowWrites(t.db.kysely);
      // the first sign-in makes the account: afterwards a sign-in writes no user
      const first = await postBack(t, browser(), connection, await idp.respond(await toIdp(t, browser(), USER)));
      assert.equal(first.signedIn === undefined, true, 'a browser other than the one that began it is not signed in');
      const client = browser();
      const ok = await postBack(t, client, connection, await idp.respond(await toIdp(t, client, USER)));
      assert.equal(ok.signedIn, USER, ok.acs.text.slice(0, 300));
    });
    after(() => world.close());

    /** a browser of its own address: the ACS and sign-in throttles count per address */
    const browser = () => PageClient.atOwnAddress(t);

    it('a changed response: never a 5xx, nobody but the signed user signed in, nothing written on a refusal, nothing logged', async () => {
      await fc.assert(
        fc.asyncProperty(mutation, async (m) => {
          const client = browser();
          const post = await idp.respond(await toIdp(t, client, USER));
          let form: Record<string, string>;
          switch (m.kind) {
            case 'edits':
              form = formOf(edited(post.xml, m.edits), post);
              break;
            case 'structural':
              form = formOf(structural(post.xml, m.attack), post);
              break;
            case 'nameid':
              form = formOf(
                post.xml.replace(nameIdRe, (_x, open: string, _v: string, close: string) => `${open}${escapeXml(m.value)}${close}`),
                post,
              );
              break;
            case 'raw':
              form = { SAMLResponse: m.raw, ...(post.RelayState === undefined ? {} : { RelayState: post.RelayState }) };
              break;
            case 'missing':
              form = post.RelayState === undefined ? {} : { RelayState: post.RelayState };
              break;
            case 'relay':
              form = { SAMLResponse: post.SAMLResponse, RelayState: m.relay };
              break;
          }
          const before = await rowWrites(t.db.kysely);
          const logged = t.logs.length;
          const { acs, signedIn } = await postBack(t, client, connection, form);
          assert.ok(acs.status < 500, `${acs.status}: ${acs.text.slice(0, 300)}`);
          assert.ok([303, 400, 403, 413, 429].includes(acs.status), `status ${acs.status}`);
          if (acs.status === 303) {
            const location = String(acs.headers.location);
            assert.ok(location.startsWith('/') && !location.startsWith('//') && !location.startsWith('/\\'), `stays on the site: ${location}`);
          }
          const who = signedIn ?? (await whoIsSignedIn(client));
          assert.ok(who === undefined || who === USER, `signed in as ${who}`);
          const changed = m.kind === 'nameid' ? m.value !== USER : m.kind !== 'relay' && m.kind !== 'edits';
          if (changed) assert.equal(who, undefined, `${m.kind} signed someone in`);
          if (who === undefined) {
            const after = await rowWrites(t.db.kysely);
            const written = Object.keys(after).filter(
              (table) => after[table] !== before[table] && !EXCHANGE_TABLES.has(table) && table !== 'audit_events',
            );
            assert.deepEqual(written, [], 'a refusal wrote only the exchange records');
          }
          const lines = t.logs.slice(logged).join('\n');
          assert.ok(!lines.includes(post.SAMLResponse.slice(0, 64)), 'the posted response is not logged');
          if (form.SAMLResponse && form.SAMLResponse.length >= 32) assert.ok(!lines.includes(form.SAMLResponse.slice(0, 64)), 'nor what was posted');
        }),
        { numRuns: RUNS },
      );
    });
  });
}
