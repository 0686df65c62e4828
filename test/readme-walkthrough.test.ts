// The README walkthrough, run verbatim (the shell block between the walkthrough markers) against
// the built executable on port 8080, as a reader would run it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function walkthrough(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const m = /<!-- walkthrough:start -->\s*```sh\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme);
  assert.ok(m, 'README has a walkthrough block');
  return m[1]!;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

test('the README walkthrough works verbatim', { timeout: 120_000 }, async () => {
  assert.ok(await portFree(8080), 'port 8080 must be free: the walkthrough uses the default port');
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('GATEHOUSE_') || key === 'DATABASE_URL' || key === 'PORT') delete env[key];
  try {
    const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', walkthrough()], { cwd: root, env, encoding: 'utf8', timeout: 110_000 });
    const out = run.stdout;
    assert.equal(run.status, 0, `walkthrough failed:\n${out}\n${run.stderr}`);
    assert.match(out, /"tag":"\d+\.\d+\.\d+"/); // version endpoint
    assert.match(out, /"client_secret": "gatehouse_cs_[0-9A-Za-z]{49}"/); // createClient
    assert.match(out, /"name": "ci-pipeline"/); // clients list
    assert.match(out, /old secret: 401/);
    assert.match(out, /new secret: 200/);
    assert.match(out, /"enabled_in_pilot": true/); // child tenant
    assert.match(out, /"totalCount": 2/); // search
    assert.match(out, /"revoked_at": "\d{4}-/); // deleteClient
    assert.match(out, /deleted client token: 401/);
    assert.match(out, /"status": "Testing"/); // SSO connection configured by hand
    assert.match(out, /"certName": "acme-2026"/);
    assert.match(out, /SP metadata: 200 application\/samlmetadata\+xml/);
  } finally {
    rmSync(join(root, 'walkthrough-data'), { recursive: true, force: true });
    rmSync(join(root, 'walkthrough.log'), { force: true });
    rmSync(join(root, 'idp-cert.pem'), { force: true });
  }
});
