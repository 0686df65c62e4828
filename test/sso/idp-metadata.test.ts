// IdP metadata as IdPs publish it (SAML 2.0 Metadata), read for what a connection needs, and
// hostile XML refused before or by a strict parse: DTDs and entities, two roots, malformed
// documents, oversize input (security-tests.md items 75, 76, 86, 95).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { parseCertificate } from '../../src/sso/certificate.js';
import { METADATA_MAX_BYTES, parseIdpMetadata } from '../../src/sso/idp-metadata.js';
import { makeCertificate, pemBody } from '../helpers/openssl.js';

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const SAML2 = 'urn:oasis:names:tc:SAML:2.0:protocol';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const ARTIFACT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact';

const current = makeCertificate({ subject: '/CN=idp.example.com/O=Current' });
const next = makeCertificate({ subject: '/CN=idp.example.com/O=Next' });
const encryption = makeCertificate({ subject: '/CN=idp.example.com/O=Encryption' });
const fingerprint = (pem: string) => parseCertificate(pem).fingerprint256;

/** A KeyDescriptor with one X509Certificate (the base64 body, wrapped as many IdPs print it). */
function key(pem: string, use?: 'signing' | 'encryption'): string {
  const body = pemBody(pem)
    .match(/.{1,64}/g)!
    .join('\n          ');
  return `
    <md:KeyDescriptor${use ? ` use="${use}"` : ''}>
      <ds:KeyInfo xmlns:ds="${DS}">
        <ds:X509Data>
          <ds:X509Certificate>
          ${body}
          </ds:X509Certificate>
        </ds:X509Data>
      </ds:KeyInfo>
    </md:KeyDescriptor>`;
}

function sso(binding: string, location: string): string {
  return `\n    <md:SingleSignOnService Binding="${binding}" Location="${location}"/>`;
}

const STANDARD_KEYS = key(current.certPem, 'signing') + key(next.certPem) + key(encryption.certPem, 'encryption');
const STANDARD_SSO =
  sso(ARTIFACT, 'https://idp.example.com/sso/artifact') +
  sso(REDIRECT, 'https://idp.example.com/sso/redirect') +
  sso(POST, 'https://idp.example.com/sso/post');

/** An IdP's EntityDescriptor (md: prefix, with a neighbouring SP role whose key must not be read). */
function entity(parts: { entityId?: string; keys?: string; services?: string; attrs?: string; protocols?: string; xmlns?: boolean } = {}): string {
  const entityId = parts.entityId ?? 'https://idp.example.com/metadata';
  return `<md:EntityDescriptor${parts.xmlns === false ? '' : ` xmlns:md="${MD}"`} entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="${parts.protocols ?? SAML2}"${parts.attrs ?? ' WantAuthnRequestsSigned="true"'}>${parts.keys ?? STANDARD_KEYS}
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>${parts.services ?? STANDARD_SSO}
  </md:IDPSSODescriptor>
  <md:SPSSODescriptor protocolSupportEnumeration="${SAML2}">${key(makeSpCert())}
    <md:AssertionConsumerService Binding="${POST}" Location="https://idp.example.com/acs" index="0"/>
  </md:SPSSODescriptor>
  <md:Organization><md:OrganizationName xml:lang="en">Example</md:OrganizationName></md:Organization>
</md:EntityDescriptor>`;
}

let spCert: string | undefined;
function makeSpCert(): string {
  spCert ??= makeCertificate({ subject: '/CN=sp.example.com' }).certPem;
  return spCert;
}

function refused(xml: string, message: RegExp): AppError {
  let error: AppError | undefined;
  assert.throws(
    () => parseIdpMetadata(xml),
    (e: unknown) => {
      assert.ok(e instanceof AppError, String(e));
      assert.equal(e.code, 'BAD_USER_INPUT');
      assert.match(e.message, message);
      error = e;
      return true;
    },
  );
  return error!;
}

describe('parseIdpMetadata', () => {
  it('reads an EntityDescriptor: entityID, every signing certificate, both sign-in endpoints, WantAuthnRequestsSigned', () => {
    const metadata = parseIdpMetadata(`<?xml version="1.0" encoding="UTF-8"?>\n<!-- exported 2026-11-23 -->\n${entity()}\n`);
    assert.equal(metadata.entityId, 'https://idp.example.com/metadata');
    assert.deepEqual(
      metadata.signingCertificates.map((c) => c.fingerprint256),
      [fingerprint(current.certPem), fingerprint(next.certPem)],
      'use="signing" and no use attribute; not the encryption key, not the SP role’s key',
    );
    assert.equal(metadata.signingCertificates[0]!.subject, 'CN=idp.example.com, O=Current');
    assert.deepEqual(metadata.signInEndpoints, { redirect: 'https://idp.example.com/sso/redirect', post: 'https://idp.example.com/sso/post' });
    assert.equal(metadata.wantAuthnRequestsSigned, true);
  });

  it('reads by namespace, not by prefix: a default namespace and other prefixes read the same', () => {
    const xml = entity()
      .replaceAll('md:', '')
      .replace(`xmlns:md="${MD}"`, `xmlns="${MD}"`)
      .replaceAll('ds:', 'dsig:')
      .replaceAll('xmlns:ds=', 'xmlns:dsig=');
    const metadata = parseIdpMetadata(xml);
    assert.equal(metadata.signingCertificates.length, 2);
    assert.equal(metadata.signInEndpoints.post, 'https://idp.example.com/sso/post');
  });

  it('ignores look-alike elements of another namespace', () => {
    const foreignKey = key(makeSpCert())
      .replaceAll('md:KeyDescriptor', 'x:KeyDescriptor')
      .replace('<x:KeyDescriptor', '<x:KeyDescriptor xmlns:x="urn:example:not-metadata"');
    const metadata = parseIdpMetadata(entity({ keys: STANDARD_KEYS + foreignKey }));
    assert.equal(metadata.signingCertificates.length, 2);
    // The same document with the metadata namespace undeclared has no SAML elements at all.
    refused(entity({ xmlns: false }), /not well-formed|not SAML 2\.0 metadata/);
    refused(entity().replace(`xmlns:md="${MD}"`, 'xmlns:md="urn:example:look-alike"'), /not SAML 2\.0 metadata/);
  });

  it('lists a certificate named twice once, and reads WantAuthnRequestsSigned as xs:boolean (absent: false)', () => {
    const metadata = parseIdpMetadata(entity({ keys: key(current.certPem, 'signing') + key(current.certPem), attrs: '' }));
    assert.equal(metadata.signingCertificates.length, 1);
    assert.equal(metadata.wantAuthnRequestsSigned, false);
    assert.equal(parseIdpMetadata(entity({ attrs: ' WantAuthnRequestsSigned="0"' })).wantAuthnRequestsSigned, false);
    assert.equal(parseIdpMetadata(entity({ attrs: ' WantAuthnRequestsSigned=" 1 "' })).wantAuthnRequestsSigned, true);
    refused(entity({ attrs: ' WantAuthnRequestsSigned="yes"' }), /WantAuthnRequestsSigned is neither true nor false/);
  });

  it('takes the one IdP out of an EntitiesDescriptor, also nested, beside service providers', () => {
    const sp = `<md:EntityDescriptor entityID="https://sp.example.com"><md:SPSSODescriptor protocolSupportEnumeration="${SAML2}"/></md:EntityDescriptor>`;
    const inner = entity().replace(` xmlns:md="${MD}"`, '');
    const wrapped = `<md:EntitiesDescriptor xmlns:md="${MD}" Name="urn:example:federation">${sp}<md:EntitiesDescriptor>${inner}</md:EntitiesDescriptor></md:EntitiesDescriptor>`;
    const metadata = parseIdpMetadata(wrapped);
    assert.equal(metadata.entityId, 'https://idp.example.com/metadata');
    assert.equal(metadata.signingCertificates.length, 2);

    const two = `<md:EntitiesDescriptor xmlns:md="${MD}">${inner}${inner.replace('https://idp.example.com/metadata', 'https://other.example.com')}</md:EntitiesDescriptor>`;
    refused(two, /describes 2 identity providers; a connection takes one/);
    refused(`<md:EntitiesDescriptor xmlns:md="${MD}">${sp}</md:EntitiesDescriptor>`, /no SAML 2\.0 identity provider/);
  });

  it('refuses a DOCTYPE or an entity declaration anywhere, in any case, before parsing, without echoing it', () => {
    const doc = entity();
    const xxe = `<?xml version="1.0"?>\n<!DOCTYPE md:EntityDescriptor [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n${doc.replace('Example</md:OrganizationName>', '&xxe;</md:OrganizationName>')}`;
    const e = refused(xxe, /DOCTYPE or entity declaration/);
    assert.doesNotMatch(e.message, /passwd|xxe/);
    refused(`\uFEFF<?xml version="1.0"?><!doctype foo>${doc}`, /DOCTYPE/);
    refused(`<!-- a comment first --><!DocType foo [ ]>${doc}`, /DOCTYPE/);
    refused(doc.replace('<md:Organization>', '<md:Organization><!ENTITY lol "lol">'), /entity declaration/);
    // billion laughs, the shape of it
    refused(`<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>${doc}`, /DOCTYPE/);
  });

  it('refuses two root elements (CVE-2022-39353), and text outside the root', () => {
    const doc = entity();
    refused(`${doc}${doc}`, /more than one root element/);
    refused(`<md:EntityDescriptor xmlns:md="${MD}" entityID="x"/>${doc}`, /more than one root element/);
    refused(`${doc}<!-- between -->\n<md:Extensions xmlns:md="${MD}"/>`, /more than one root element/);
    refused(`${doc}\ntrailing text`, /not well-formed/);
  });

  it('refuses malformed XML with one short reason, never the parser’s text', () => {
    const doc = entity();
    for (const bad of [
      doc.slice(0, doc.length - 40), // truncated
      doc.replace('</md:IDPSSODescriptor>', '</md:IDPSSODescriptorX>'), // mismatched end tag
      doc.replace('</md:Organization>', ''), // an element never closed (xmldom 0.8 alone lets it pass)
      `<md:EntityDescriptor xmlns:md="${MD}" entityID="x"><md:IDPSSODescriptor>`, // nothing closed
      doc.replace('Example</md:OrganizationName>', '&undefined;</md:OrganizationName>'), // unknown entity
      doc.replace('WantAuthnRequestsSigned="true"', 'WantAuthnRequestsSigned="true" WantAuthnRequestsSigned="false"'), // repeated attribute
      doc.replace('entityID="https://idp.example.com/metadata"', 'entityID="https://idp.example.com/metadata'), // unclosed attribute
      '',
      '{"entityId": "https://idp.example.com"}',
    ]) {
      const e = refused(bad, /not well-formed XML|not SAML 2\.0 metadata/);
      assert.doesNotMatch(e.message, /xmldom|line|col|@#|\[/i);
    }
    refused('<html><body><h1>Sign in</h1></body></html>', /not SAML 2\.0 metadata/);
  });

  it('refuses metadata without a signing certificate', () => {
    refused(entity({ keys: key(encryption.certPem, 'encryption') }), /no signing certificate/);
    refused(entity({ keys: '' }), /no signing certificate/);
    const keyName = `<md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="${DS}"><ds:KeyName>idp-2026</ds:KeyName></ds:KeyInfo></md:KeyDescriptor>`;
    refused(entity({ keys: keyName }), /no signing certificate/);
  });

  it('refuses metadata whose signing certificate is unusable, saying which one and why', () => {
    const sha1 = makeCertificate({ digest: 'sha1' });
    refused(
      entity({ keys: key(current.certPem, 'signing') + key(sha1.certPem, 'signing') }),
      /Signing certificate 2 in the IdP metadata cannot be used\. .*SHA-1/,
    );
    const garbage = `<md:KeyDescriptor><ds:KeyInfo xmlns:ds="${DS}"><ds:X509Data><ds:X509Certificate>not base64!</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
    refused(entity({ keys: garbage }), /Signing certificate 1 .* not a certificate/);
  });

  it('refuses metadata without an HTTP-Redirect or HTTP-POST sign-in service; one of them is enough', () => {
    refused(entity({ services: sso(ARTIFACT, 'https://idp.example.com/artifact') }), /no SingleSignOnService for the HTTP-Redirect or HTTP-POST/);
    refused(entity({ services: '' }), /no SingleSignOnService/);
    assert.deepEqual(parseIdpMetadata(entity({ services: sso(POST, 'https://idp.example.com/post') })).signInEndpoints, {
      post: 'https://idp.example.com/post',
    });
    const two = sso(REDIRECT, 'https://idp.example.com/first') + sso(REDIRECT, 'https://idp.example.com/second');
    assert.deepEqual(
      parseIdpMetadata(entity({ services: two })).signInEndpoints,
      { redirect: 'https://idp.example.com/first' },
      'the first of a binding',
    );
  });

  it('refuses a sign-in endpoint that is not absolute https (http only on the local machine)', () => {
    refused(entity({ services: sso(REDIRECT, 'http://idp.example.com/sso') }), /HTTP-Redirect sign-in endpoint is not an https URL/);
    refused(entity({ services: sso(POST, '/sso/post') }), /HTTP-POST sign-in endpoint is not an absolute URL/);
    refused(entity({ services: sso(REDIRECT, 'javascript:alert(1)') }), /not an https URL/);
    refused(entity({ services: sso(REDIRECT, 'https://user:secret@idp.example.com/sso') }), /user name or password/);
    refused(
      entity({ services: sso(REDIRECT, 'https://idp.example.com/ok') + sso(POST, 'http://idp.example.com/post') }),
      /HTTP-POST .* not an https URL/,
    );
    for (const local of ['http://localhost:8080/sso', 'http://127.0.0.1:8080/sso', 'http://[::1]:8080/sso']) {
      assert.equal(parseIdpMetadata(entity({ services: sso(REDIRECT, local) })).signInEndpoints.redirect, local);
    }
    refused(entity({ services: sso(REDIRECT, 'http://localhost.example.com/sso') }), /not an https URL/);
  });

  it('refuses metadata with no entityID, or with an IdP role for SAML 1.1 only', () => {
    refused(entity({ entityId: '' }), /no entityID/);
    refused(entity({ protocols: 'urn:oasis:names:tc:SAML:1.1:protocol' }), /no SAML 2\.0 identity provider/);
    assert.equal(
      parseIdpMetadata(entity({ protocols: `urn:oasis:names:tc:SAML:1.1:protocol ${SAML2}` })).entityId,
      'https://idp.example.com/metadata',
    );
  });

  it('refuses more than 1 MiB (counted in UTF-8 bytes) before parsing', () => {
    const doc = entity();
    const pad = (n: number, char = 'x') => `<!-- ${char.repeat(n)} -->`;
    const atLimit = doc + pad(METADATA_MAX_BYTES - Buffer.byteLength(doc) - 9);
    assert.equal(Buffer.byteLength(atLimit), METADATA_MAX_BYTES);
    assert.doesNotThrow(() => parseIdpMetadata(atLimit));
    refused(`${atLimit} `, /larger than 1 MiB/);
    const wide = doc + pad(400_000, 'é€'); // under a million characters, over a MiB in UTF-8
    assert.ok(wide.length < METADATA_MAX_BYTES);
    refused(wide, /larger than 1 MiB/);
  });
});
