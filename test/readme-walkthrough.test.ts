// The README walkthrough, run verbatim (the shell block between the walkthrough markers) against
// the built executable, as a reader would run it: in a folder of its own (a checkout in all but
// name: package.json, bin/, dist/ and node_modules/ linked from this one), so that the suite never
// deletes the ./walkthrough-data or walkthrough.log a reader made in the checkout; and with
// another server on 8080, as the reader's first `npm start` would be. Then the README's commands
// to sign in on what it made; and the walkthrough against a port already taken, which must stop
// and say why instead of talking to whatever answers there.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanEnv, ensureBuilt, get, PATIENCE_MS, root, waitFor } from './helpers/cli.js';

/** the walkthrough's own port */
const PORT = 8090;
/** the port of the README's first command, `npm start` */
const FIRST_SERVER_PORT = 8080;

function block(name: string): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const m = new RegExp(`<!-- ${name}:start -->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${name}:end -->`).exec(readme);
  assert.ok(m, `README has a ${name} block`);
  return m[1]!;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** Something else answering HTTP on `port`, as another server would: 200 and `{}` to every request. */
function impostor(port: number): Promise<{ requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createHttpServer((req: IncomingMessage, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ requests, close: () => new Promise<void>((r) => server.close(() => r())) }));
  });
}

/** A folder that runs like the checkout: `npm start` there serves with its data in that folder. */
function checkoutLike(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-walkthrough-'));
  for (const name of ['package.json', 'bin', 'dist', 'node_modules']) symlinkSync(join(root, name), join(dir, name));
  return dir;
}

function runBlock(script: string, cwd: string) {
  return spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], {
    cwd,
    env: cleanEnv({ npm_config_update_notifier: 'false' }),
    encoding: 'utf8',
    timeout: 110_000,
  });
}

describe('the README walkthrough', () => {
  const made: string[] = [];
  before(async () => {
    ensureBuilt();
    assert.ok(await portFree(PORT), `port ${PORT} must be free: the walkthrough uses it`);
  });
  after(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  it('works verbatim, in a folder of its own, while another server answers on 8080; then its server starts again for signing in', {
    timeout: 180_000,
  }, async () => {
    const cwd = checkoutLike();
    made.push(cwd);
    // the reader's first `npm start` may still run; if 8080 is taken already, that is the case too
    const first = (await portFree(FIRST_SERVER_PORT)) ? await impostor(FIRST_SERVER_PORT) : undefined;
    try {
      const run = runBlock(block('walkthrough'), cwd);
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
      assert.match(out, /console: 303 to http:\/\/127\.0\.0\.1:8090\/login\?return_to=%2Fconsole%2Ftenant%3Ftenant%3D\d+/);
      assert.deepEqual(first?.requests ?? [], [], 'nothing was sent to the server on 8080');
    } finally {
      await first?.close();
    }

    // the README's way back in: the first start's administrator from the log, the server again
    const signin = spawn('bash', ['-e', '-c', block('walkthrough-signin')], {
      cwd,
      env: cleanEnv({ npm_config_update_notifier: 'false' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    signin.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    signin.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => signin.once('close', (code) => resolve(code)));
    try {
      await waitFor(`the server on ${PORT}`, PATIENCE_MS, async () => ((await get(PORT, '/healthz'))?.status === 200 ? true : undefined));
      // what the README says to sign in with is what the first start used, and its log holds no secret
      const readme = readFileSync(join(root, 'README.md'), 'utf8');
      const password = /^export GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD=(\S+)$/m.exec(block('walkthrough'))![1]!;
      assert.ok(
        readme.includes(`sign in as \`admin@gatehouse.local\` with the password\nthe walkthrough set, \`${password}\``),
        'the README names it',
      );
      const log = readFileSync(join(cwd, 'walkthrough.log'), 'utf8');
      assert.match(log, /^ {2}admin e-mail: +admin@gatehouse\.local$/m);
      assert.match(log, /^ {2}admin password: +\(from GATEHOUSE_BOOTSTRAP_ADMIN_PASSWORD\)$/m);
      assert.match(log, /^ {2}client_secret: +\(from GATEHOUSE_BOOTSTRAP_CLIENT_SECRET\)$/m);
      assert.match(log, new RegExp(`^ {2}sign in at: +http://127\\.0\\.0\\.1:${PORT}/login `, 'm'));
      const page = await get(PORT, '/login');
      assert.equal(page?.status, 200);
      assert.match(page!.text, /<form/);
    } finally {
      // Ctrl-C, as in the terminal the README has it typed in: every process of the group
      interrupt(signin);
      assert.equal(await exited, 130, `the server stopped cleanly:\n${out}`);
    }
    assert.match(out, /"msg":"shutting down"/);
    assert.equal(existsSync(join(cwd, 'walkthrough-data', 'gatehouse.lock')), false, 'the data folder was released');
  });

  it('with its port taken, it stops and shows why, and sends nothing to what answers there', { timeout: 120_000 }, async () => {
    const cwd = checkoutLike();
    made.push(cwd);
    const other = await impostor(PORT);
    try {
      const run = runBlock(block('walkthrough'), cwd);
      assert.notEqual(run.status, 0);
      assert.match(run.stdout, /cannot listen on 127\.0\.0\.1:8090 \(PORT\): the address is already in use/);
      assert.match(run.stdout, /The server did not start: the log above says why\./);
      assert.deepEqual(other.requests, []);
    } finally {
      await other.close();
    }
  });
});

/** SIGINT to the whole process group (bash, npm and the server), as a terminal's Ctrl-C reaches all of them. */
function interrupt(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGINT');
  } catch {
    /* gone already */
  }
}
