// Test certificates made by the openssl command line, as an IdP administrator would make them:
// each call works in a temporary folder of its own and returns PEM text.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface MadeCertificate {
  certPem: string;
  keyPem: string;
}

export interface CertificateRequest {
  /** openssl -subj form, e.g. '/CN=idp.example.com/O=Example' */
  subject?: string;
  /** openssl -newkey argument: 'rsa:2048', 'rsa:1024', 'ec' (P-256) */
  key?: string;
  /** the digest the certificate is signed with */
  digest?: 'sha256' | 'sha1' | 'sha384';
  days?: number;
  /** sign with RSASSA-PSS (RFC 4055) rather than PKCS #1 v1.5 */
  pss?: boolean;
  /** subjectAltName, e.g. 'DNS:idp.example.com' */
  altName?: string;
  /** exact validity (YYYYMMDDHHMMSSZ), for certificates that expired long ago; made with `openssl ca` */
  validity?: { notBefore: string; notAfter: string };
}

export function makeCertificate(request: CertificateRequest = {}): MadeCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-sso-cert-'));
  try {
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const subject = request.subject ?? '/CN=idp.example.com';
    const key = request.key ?? 'rsa:2048';
    const newkey = key === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'] : ['-newkey', key];
    const digest = `-${request.digest ?? 'sha256'}`;
    const sigopt = request.pss ? ['-sigopt', 'rsa_padding_mode:pss'] : [];
    const ext = request.altName === undefined ? [] : ['-addext', `subjectAltName=${request.altName}`];
    if (request.validity === undefined) {
      run(
        'req',
        '-x509',
        ...newkey,
        '-nodes',
        digest,
        ...sigopt,
        '-days',
        String(request.days ?? 1),
        '-subj',
        subject,
        ...ext,
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
      );
    } else {
      // `openssl req -x509` (OpenSSL 3.0) sets no start date; `openssl ca -selfsign` takes both.
      writeFileSync(join(dir, 'index.txt'), '');
      writeFileSync(join(dir, 'serial'), '01\n');
      writeFileSync(
        join(dir, 'ca.cnf'),
        [
          '[ca]',
          'default_ca = local',
          '[local]',
          'database = index.txt',
          'new_certs_dir = .',
          'serial = serial',
          `default_md = ${request.digest ?? 'sha256'}`,
          'policy = any',
          '[any]',
          'commonName = supplied',
          'organizationName = optional',
          'countryName = optional',
          '',
        ].join('\n'),
      );
      run('req', '-new', ...newkey, '-nodes', '-subj', subject, '-keyout', 'key.pem', '-out', 'csr.pem');
      const { notBefore, notAfter } = request.validity;
      run(
        'ca',
        '-batch',
        '-selfsign',
        '-preserveDN',
        '-config',
        'ca.cnf',
        '-keyfile',
        'key.pem',
        '-in',
        'csr.pem',
        '-startdate',
        notBefore,
        '-enddate',
        notAfter,
        '-notext',
        '-out',
        'cert.pem',
      );
    }
    return { certPem: readFileSync(join(dir, 'cert.pem'), 'utf8'), keyPem: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The base64 body of a PEM block, on one line (what <ds:X509Certificate> usually holds). */
export function pemBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}
