// npm run bench -- --only signing [--no-write]
//
// What one ES256 access token costs to sign, three ways, in this process: jose's SignJWT (over
// WebCrypto), Gatehouse's signer (keys/compact-jws.ts: node:crypto's asynchronous sign, on the
// thread pool) and node:crypto's synchronous sign. 32 signings are kept in flight, as 32 busy
// connections would; the figures are wall time per token (what bounds tokens per second when
// signing is all there is) and the process's CPU time per token (both threads: the JavaScript
// thread and the thread pool). Medians of 3 rounds of 10,000 tokens, the three interleaved.
// Writes the section between the signing markers of docs/benchmarks.md.
import { randomUUID, sign } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { es256Signer } from '../src/keys/compact-jws.js';
import { writeSection } from './compare/report.js';

const { values: args } = parseArgs({ options: { 'no-write': { type: 'boolean', default: false } } });
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = await exportJWK(privateKey);
const signer = es256Signer(jwk);
const { createPrivateKey } = await import('node:crypto');
const keyObject = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });

const header = { alg: 'ES256', kid: 'bench-kid', typ: 'at+jwt' } as const;
function claims() {
  const now = Math.floor(Date.now() / 1000);
  return {
    tid: '1',
    region: 'us1',
    pty: 'client',
    client_id: 'bench-compare-client',
    secret_id: randomUUID(),
    iss: 'http://127.0.0.1:8080',
    sub: randomUUID(),
    aud: 'http://127.0.0.1:8080',
    iat: now,
    exp: now + 36_000,
    jti: randomUUID(),
  };
}
const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

const ways: Record<string, () => Promise<string>> = {
  'jose SignJWT (WebCrypto)': () => new SignJWT(claims()).setProtectedHeader(header).sign(privateKey),
  "Gatehouse's signer (node:crypto, asynchronous)": () => signer.sign(header, claims()),
  'node:crypto, synchronous': async () => {
    const input = `${encode(header)}.${encode(claims())}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: keyObject, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  },
};

async function round(f: () => Promise<string>, n: number): Promise<{ wallUs: number; cpuUs: number }> {
  let started = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (started < n) {
        started++;
        await f();
      }
    }),
  );
  const cpu = process.cpuUsage(c0);
  return { wallUs: (1000 * (performance.now() - t0)) / n, cpuUs: (cpu.user + cpu.system) / n };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const results = new Map(Object.keys(ways).map((k) => [k, { wall: [] as number[], cpu: [] as number[] }]));
const ROUNDS = 3;
const TOKENS = 10_000;
for (const f of Object.values(ways)) await round(f, 2_000); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, f] of Object.entries(ways)) {
    const { wallUs, cpuUs } = await round(f, TOKENS);
    results.get(name)!.wall.push(wallUs);
    results.get(name)!.cpu.push(cpuUs);
  }
}
const rows = [...results].map(
  ([name, { wall, cpu }]) =>
    `| ${name} | ${median(wall).toFixed(1)} | ${Math.round(1e6 / median(wall)).toLocaleString('en-US')} | ${median(cpu).toFixed(1)} |`,
);
const section = [
  '## Signing one access token (`npm run bench -- --only signing`)',
  '',
  `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}: ` +
    `ES256, the claims Gatehouse issues, 32 signings in flight, medians of ${ROUNDS} rounds of ${TOKENS.toLocaleString('en-US')} tokens (bench/signing.ts).`,
  '',
  '| Way | wall µs per token | tokens/s, signing alone | CPU µs per token (all threads) |',
  '|---|---|---|---|',
  ...rows,
].join('\n');
process.stdout.write(`${section}\n`);
if (!args['no-write']) writeSection(new URL('../docs/benchmarks.md', import.meta.url).pathname, 'signing', section);
