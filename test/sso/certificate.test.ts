// An IdP signing certificate as a tenant admin pastes it (PEM or base64 body), checked for what
// SAML needs (security-tests.md item 86): one certificate, an RSA key of 2048 bits or more, not
// signed with SHA-1. Certificates are made by openssl, as an IdP's administrator makes them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { CERTIFICATE_MAX_CHARS, isExpired, parseCertificate } from '../../src/sso/certificate.js';
import { makeCertificate, pemBody } from '../helpers/openssl.js';

const madeAt = Date.now();
const good = makeCertificate({ subject: '/C=US/O=Example, Inc./CN=idp.example.com', days: 30 });

/** Asserts a BAD_USER_INPUT refusal whose message matches `message`. */
function refused(text: string, message: RegExp): void {
  assert.throws(
    () => parseCertificate(text),
    (e: unknown) => {
      assert.ok(e instanceof AppError, String(e));
      assert.equal(e.code, 'BAD_USER_INPUT');
      assert.match(e.message, message);
      return true;
    },
  );
}

describe('parseCertificate', () => {
  it('reads a PEM certificate: names, dates and fingerprint as openssl made them', () => {
    const cert = parseCertificate(good.certPem);
    assert.equal(cert.subject, 'C=US, O=Example\\, Inc., CN=idp.example.com');
    assert.equal(cert.issuer, cert.subject, 'self-signed');
    const days = (cert.expiresAt.getTime() - cert.notBefore.getTime()) / 86_400_000;
    assert.equal(days, 30);
    // when it was made (at this file's loading, which may be long before this test runs when
    // files share a process)
    assert.ok(Math.abs(cert.notBefore.getTime() - madeAt) < 60_000, 'valid from when it was made');
    assert.equal(cert.fingerprint256, new X509Certificate(good.certPem).fingerprint256);
    assert.match(cert.fingerprint256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(cert.der, pemBody(good.certPem));
    assert.equal(isExpired(cert, new Date()), false);
  });

  it('normalises the PEM to 64-character lines, whatever the layout it was given in', () => {
    const messy = `\r\n  ${good.certPem.replace(/\n/g, '\r\n').replace('-----BEGIN CERTIFICATE-----', '-----BEGIN CERTIFICATE-----   ')}\n\n`;
    const cert = parseCertificate(messy);
    assert.equal(cert.pem, parseCertificate(good.certPem).pem);
    const lines = cert.pem.trimEnd().split('\n');
    assert.equal(lines[0], '-----BEGIN CERTIFICATE-----');
    assert.equal(lines.at(-1), '-----END CERTIFICATE-----');
    for (const line of lines.slice(1, -2)) assert.equal(line.length, 64);
    assert.ok(lines.at(-2)!.length <= 64);
    assert.ok(cert.pem.endsWith('\n'));
    assert.doesNotThrow(() => new X509Certificate(cert.pem));
  });

  it('reads a bare base64 body, on one line or broken over lines with spaces', () => {
    const body = pemBody(good.certPem);
    const fingerprint = parseCertificate(good.certPem).fingerprint256;
    assert.equal(parseCertificate(body).fingerprint256, fingerprint);
    const wrapped = body.match(/.{1,76}/g)!.join('\n    ');
    assert.equal(parseCertificate(`\n    ${wrapped}\n`).fingerprint256, fingerprint);
  });

  it('refuses what is not a certificate, without echoing it', () => {
    refused('', /empty/);
    refused('hello, world', /not a certificate/);
    refused('bm90IGEgY2VydGlmaWNhdGU=', /not a readable X\.509 certificate/); // base64 of text
    refused(pemBody(good.certPem).slice(0, 400), /not a readable X\.509 certificate/); // truncated
    refused(good.certPem.replace('-----END CERTIFICATE-----', ''), /incomplete/);
    refused(`subject=CN = idp.example.com\n${good.certPem}`, /text around it/);
    refused(`${good.certPem.slice(0, 100)}!${good.certPem.slice(100)}`, /not a certificate/);
    refused(good.keyPem, /private key/);
    refused(`${good.certPem}${good.keyPem}`, /private key/);
    const publicKey = new X509Certificate(good.certPem).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    refused(publicKey, /PEM block is not a certificate/);
    assert.throws(
      () => parseCertificate('<script>alert(1)</script>'),
      (e: Error) => !e.message.includes('script'),
    );
  });

  it('refuses two certificates, as two PEM blocks or as two DER bodies in one base64 string', () => {
    const other = makeCertificate({ subject: '/CN=other.example.com' });
    refused(`${good.certPem}\n${other.certPem}`, /more than one certificate/);
    const both = Buffer.concat([Buffer.from(pemBody(good.certPem), 'base64'), Buffer.from(pemBody(other.certPem), 'base64')]);
    refused(both.toString('base64'), /more than one certificate/);
  });

  it('refuses input over 16 KiB before reading it', () => {
    refused(`${good.certPem}${' '.repeat(CERTIFICATE_MAX_CHARS)}`, /larger than 16 KiB/);
  });

  it('refuses an RSA key under 2048 bits, and a key SAML cannot verify with (EC)', () => {
    refused(makeCertificate({ key: 'rsa:1024' }).certPem, /RSA key has 1024 bits; at least 2048/);
    refused(makeCertificate({ key: 'ec' }).certPem, /not RSA \(it is EC\)/);
    assert.doesNotThrow(() => parseCertificate(makeCertificate({ key: 'rsa:3072', digest: 'sha384' }).certPem));
  });

  it('refuses a certificate signed with SHA-1', () => {
    const sha1 = makeCertificate({ digest: 'sha1' });
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: sha1.certPem }).toString();
    assert.match(text, /Signature Algorithm: sha1WithRSAEncryption/, 'the fixture is what it claims');
    assert.equal(new X509Certificate(sha1.certPem).subject, 'CN=idp.example.com', 'and readable otherwise');
    refused(sha1.certPem, /signed with SHA-1/);
    refused(pemBody(sha1.certPem), /signed with SHA-1/);
  });

  it('reads the hash of an RSASSA-PSS signature from its parameters: SHA-256 passes, SHA-1 does not', () => {
    const pss256 = makeCertificate({ pss: true });
    assert.match(
      execFileSync('openssl', ['x509', '-noout', '-text'], { input: pss256.certPem }).toString(),
      /rsassaPss[\s\S]*Hash Algorithm: sha256/,
    );
    assert.doesNotThrow(() => parseCertificate(pss256.certPem));
    refused(makeCertificate({ pss: true, digest: 'sha1' }).certPem, /signed with SHA-1/);
  });

  it('parses an expired certificate (the caller decides), and isExpired says so', () => {
    const old = makeCertificate({
      subject: '/C=US/O=Example, Inc./CN=old-idp.example.com',
      validity: { notBefore: '20200101000000Z', notAfter: '20200102000000Z' },
    });
    const cert = parseCertificate(old.certPem);
    assert.equal(cert.notBefore.toISOString(), '2020-01-01T00:00:00.000Z');
    assert.equal(cert.expiresAt.toISOString(), '2020-01-02T00:00:00.000Z');
    assert.equal(cert.subject, 'C=US, O=Example\\, Inc., CN=old-idp.example.com');
    assert.equal(isExpired(cert, new Date()), true);
    assert.equal(isExpired(cert, new Date('2020-01-02T00:00:00Z')), false, 'notAfter itself is still valid');
    assert.equal(isExpired(cert, new Date('2020-01-02T00:00:01Z')), true);
  });
});
