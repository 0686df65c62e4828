// Throw-away RSA-2048 key pairs with self-signed certificates, made by openssl as an operator
// would make them (and as real IdPs ship them: a self-signed signing certificate is the norm in
// SAML metadata). Valid for two days: long enough for any test run, short enough that a leaked
// one is worthless.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface KeyPair {
  /** PKCS#8 PEM, unencrypted */
  privateKeyPem: string;
  /** the self-signed X.509 certificate, PEM */
  certificatePem: string;
  /** the certificate's DER as one line of base64: the form metadata and KeyInfo carry */
  certificateBase64: string;
}

/** Makes a key pair in `dir` (files `<name>.key` and `<name>.crt`); about 0.1-0.3 s. */
export async function createKeyPair(dir: string, name: string, commonName = 'idp.test'): Promise<KeyPair> {
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.crt`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${commonName}`,
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]);
  const [privateKeyPem, certificatePem] = await Promise.all([readFile(keyFile, 'utf8'), readFile(certFile, 'utf8')]);
  return { privateKeyPem, certificatePem, certificateBase64: pemBody(certificatePem) };
}

function pemBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}
