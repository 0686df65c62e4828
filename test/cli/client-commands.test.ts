// test-runner: own process (it replaces globalThis.fetch for one test)
// The client commands (login, token, whoami, logout) as a user runs them, without a browser:
// every bad command line answered with exit 2 and a pointer to the help (options may come before
// the command's name); an unreachable server or one that is not Gatehouse named as such; `token`
// by client credentials (secret from the environment, --json, --scope, a wrong secret); `whoami`
// on a token the server stopped accepting, an expired one, and a loosened file (with a chmod that
// a shell reads as one word); logout revoking the token on the server (or saying why it could not)
// and leaving no login current; crafted credentials files; which
// pages --open hands to the browser; metadata that names another server, or redirects; and
// login's polling against a scripted server: every RFC 8628 answer (slow_down makes the next poll
// wait 5 s longer; a server error or no answer in time is retried three times), a missing
// expires_in, control characters from the server, Ctrl-C at the prompt; and the Python example's
// failures against the same server.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { discover } from '../../src/cli/client/discovery.js';
import { refusalToOpen } from '../../src/cli/client/open-page.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, startTestApp, type TestApp } from '../helpers/app.js';
import { BIN, ensureBuilt, exitOf, freePort, gatehouse, killAll, oneLine, PATIENCE_MS, spawned, waitFor } from '../helpers/cli.js';
import { listen } from '../helpers/listen.js';
import { makeCertificate } from '../helpers/openssl.js';
import { createClient } from '../helpers/seed.js';

ensureBuilt();

const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-client-commands-'));
let dirs = 0;
const freshDir = () => join(tmp, `config-${++dirs}`);

async function run(args: string[], env: Record<string, string> = {}) {
  const p = gatehouse(args, { GATEHOUSE_CONFIG_DIR: freshDir(), ...env });
  const r = await exitOf(p, PATIENCE_MS);
  return { code: r.code, stdout: p.stdout(), stderr: p.stderr() };
}

/** Closes what a test left open when it failed half-way (a scripted server, a child process). */
const cleanups: (() => void)[] = [];

after(async () => {
  for (const cleanup of cleanups) cleanup();
  await killAll();
  rmSync(tmp, { recursive: true, force: true });
});

// independent cases (a fake server and a folder each): run together, they wait together
describe('client commands: command lines and servers they cannot use', { concurrency: true }, () => {
  it('every client command has --help', async () => {
    for (const command of ['login', 'token', 'whoami', 'logout']) {
      const r = await run([command, '--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, new RegExp(`^Usage:\\n  gatehouse ${command}`));
    }
  });

  const usage: [string[], RegExp][] = [
    [['login', '--username', 'a@example.com'], /the server address is missing: give --url or GATEHOUSE_URL/],
    [['login', '--url', 'not a url', '--username', 'a@example.com'], /"not a url" is not a URL/],
    [['login', '--url', 'ftp://example.com', '--username', 'a@example.com'], /must start with https:\/\//],
    [['login', '--url', 'http://127.0.0.1:1'], /no account named: give --username/],
    [['token', '--client-id', 'abc', '--url', 'http://127.0.0.1:1'], /the client secret is missing: set GATEHOUSE_CLIENT_SECRET/],
    [['token', '--client-secret', 'abc'], /--client-secret needs --client-id/],
    [['token', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['whoami', 'extra'], /Unexpected argument 'extra'/],
    [['whoami', '--url', ''], /--url is empty: give the server's address/],
    [['token', '--url', ''], /--url is empty: give the server's address/],
    [['logout', '--url', ''], /--url is empty: give the server's address/],
    // the options of a client command may come before its name
    [['--url', '', 'whoami'], /--url is empty: give the server's address/],
    [['--frobnicate', 'token'], /Unknown option '--frobnicate'/],
  ];
  for (const [args, message] of usage) {
    it(`gatehouse ${args.join(' ')}: exit 2, what was wrong, where the help is`, async () => {
      const r = await run(args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      const command = args.find((a) => ['login', 'token', 'whoami', 'logout'].includes(a));
      assert.match(r.stderr, new RegExp(`see gatehouse ${command} --help\\n$`));
    });
  }

  it('a server that does not answer, and one that is not Gatehouse', async () => {
    const port = await freePort();
    const refused = await run(['login', '--url', `http://127.0.0.1:${port}`, '--username', 'a@example.com']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /^gatehouse login: cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused; check the address and that the server is running\n$/,
    );

    const other = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
    const notOurs = await run(['login', '--url', url, '--username', 'a@example.com']);
    other.close();
    assert.equal(notOurs.code, 1);
    assert.match(notOurs.stderr, /answered HTTP 404 without JSON; is this the address of a Gatehouse server\?/);
  });

  it('plain http to another machine is warned about', async () => {
    const r = await run(['token', '--url', 'http://192.0.2.1:1', '--client-id', 'x'], { GATEHOUSE_CLIENT_SECRET: 'y' });
    assert.match(r.stderr, /warning: http:\/\/192\.0\.2\.1:1 is plain http/);
  });
});

describe('client commands against a running service', () => {
  let t: TestApp;
  let base: string;

  before(async () => {
    const port = await freePort();
    t = await startTestApp({ engine: 'pglite', env: { GATEHOUSE_BASE_URL: `http://127.0.0.1:${port}` } });
    base = await listen(t, port);
  });
  after(async () => t?.close());

  const version = (token: string) => fetch(`${base}/assets/version`, { headers: { authorization: `Bearer ${token}` } });

  it('token by client credentials: the secret from the environment, the token alone or JSON, narrowed by --scope', async () => {
    const env = { GATEHOUSE_URL: base, GATEHOUSE_CLIENT_ID: ROOT_CLIENT_ID, GATEHOUSE_CLIENT_SECRET: ROOT_CLIENT_SECRET };
    const plain = await run(['token'], env);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/, 'the token and nothing else');
    assert.equal((await version(plain.stdout.trim())).status, 200);

    const json = await run(['token', '--json', '--scope', 'Administrator'], env);
    assert.equal(json.code, 0, json.stderr);
    const body = JSON.parse(json.stdout);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'Administrator');
    assert.equal(typeof body.expires_in, 'number');
  });

  it('token: a wrong secret or a role the client lacks is refused with what to check', async () => {
    const wrong = await run(['token', '--url', base, '--client-id', ROOT_CLIENT_ID], { GATEHOUSE_CLIENT_SECRET: 'wrong' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^gatehouse token: the server refused a token \(invalid_client: .*\); check the client id and secret/);
    assert.equal(wrong.stdout, '');
    const analyst = await createClient(t, await t.rootToken(), 'cli-analyst');
    const scope = await run(['token', '--url', base, '--client-id', analyst.clientId, '--scope', 'Administrator'], {
      GATEHOUSE_CLIENT_SECRET: analyst.secret,
    });
    assert.equal(scope.code, 1);
    assert.match(scope.stderr, /invalid_scope: .*; name only roles the client holds/);
  });

  /** A configuration folder holding a login to this service with `token`, as login leaves it. */
  function storedLogin(token: string, expiresAt = new Date(Date.now() + 3_600_000)): string {
    const dir = freshDir();
    const login = {
      url: base,
      username: 'cli@example.com',
      access_token: token,
      token_type: 'Bearer',
      expires_at: expiresAt.toISOString(),
      obtained_at: new Date().toISOString(),
    };
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ version: 1, current: base, logins: { [base]: login } }), { mode: 0o600 });
    return dir;
  }

  it('whoami and token on a stored login; a token the server stopped accepting, an expired one, a loosened file', async () => {
    const client = await createClient(t, await t.rootToken(), 'cli-whoami');
    const dir = storedLogin(await t.token(client.clientId, client.secret));
    const who = await run(['whoami', '--json'], { GATEHOUSE_CONFIG_DIR: dir });
    assert.equal(who.code, 0, who.stderr);
    assert.deepEqual((({ kind, id, roles }) => ({ kind, id, roles }))(JSON.parse(who.stdout)), { kind: 'client', id: client.id, roles: ['Analyst'] });

    chmodSync(join(dir, 'credentials.json'), 0o644);
    const loose = await run(['token'], { GATEHOUSE_CONFIG_DIR: dir });
    assert.equal(loose.code, 0);
    assert.match(loose.stderr, /warning: .*credentials\.json is readable by other users; run: chmod 600 '.*credentials\.json'\n/);

    await t.gql(await t.rootToken(), 'mutation($id: ID!) { deleteClient(id: $id) { id } }', { id: client.id });
    const revoked = await run(['whoami'], { GATEHOUSE_CONFIG_DIR: dir });
    assert.equal(revoked.code, 1);
    assert.match(revoked.stderr, /no longer accepts the token of cli@example\.com .*; run: gatehouse login --url http/);

    const expired = storedLogin('eyJ.x.y', new Date(Date.now() - 1000));
    for (const command of ['whoami', 'token']) {
      const r = await run([command], { GATEHOUSE_CONFIG_DIR: expired });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /the token for .* expired at .*; run: gatehouse login --url /);
    }

    const broken = freshDir();
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, 'credentials.json'), 'not json');
    const r = await run(['whoami'], { GATEHOUSE_CONFIG_DIR: broken });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /credentials\.json is not a file gatehouse wrote; remove it and run gatehouse login again/);
    assert.equal(readFileSync(join(broken, 'credentials.json'), 'utf8'), 'not json', 'left as it was');
  });

  it('logout revokes the token on the server, then forgets it; a server out of reach is reported, the login forgotten all the same', async () => {
    const made = await t.gql(await t.rootToken(), 'mutation($e: String!) { createUser(email: $e) { user { id } } }', { e: 'cli-logout@example.com' });
    assert.equal(made.body.errors, undefined, made.text);
    const token = (await t.service.services.tokens.issue({ kind: 'user', id: made.body.data.createUser.user.id, tenantId: '1' })).token;
    const dir = storedLogin(token);
    assert.equal((await version(token)).status, 200);
    const out = await run(['logout'], { GATEHOUSE_CONFIG_DIR: dir });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /^Logged out of http:\/\/127\.0\.0\.1:\d+ \(cli@example\.com\): the token was revoked on the server and is no longer kept on this machine\.\n$/,
    );
    assert.equal(out.stderr, '');
    assert.equal((await version(token)).status, 401, 'the server no longer accepts it');
    assert.ok(forgotten(dir), 'no login kept');

    const nobody = `http://127.0.0.1:${await freePort()}`;
    const away = credentialsDir([nobody], nobody);
    const offline = await run(['logout'], { GATEHOUSE_CONFIG_DIR: away });
    assert.equal(offline.code, 0, offline.stderr);
    assert.match(offline.stdout, /^Logged out of http:\/\/127\.0\.0\.1:\d+ \(user0@example\.com\): the token is no longer kept on this machine\.\n$/);
    assert.match(
      offline.stderr,
      /^warning: could not revoke the token on the server: cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused; .*\. The token stays valid there until \d{4}-/,
    );
    assert.ok(forgotten(away), 'no login kept, though the token could not be revoked');
  });
});

/** A credentials folder as login leaves it, with these logins (token only, no server behind them). */
function credentialsDir(servers: string[], current: string | undefined, dir = freshDir()): string {
  const logins = Object.fromEntries(
    servers.map((url, i) => [
      url,
      {
        url,
        username: `user${i}@example.com`,
        access_token: `token-${i}`,
        token_type: 'Bearer',
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        obtained_at: new Date().toISOString(),
      },
    ]),
  );
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'credentials.json'), JSON.stringify({ version: 1, ...(current ? { current } : {}), logins }), { mode: 0o600 });
  return dir;
}

const readCredentials = (dir: string) => JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8'));
/** no login kept in the folder (the file goes with the last one) */
const forgotten = (dir: string) => !existsSync(join(dir, 'credentials.json')) || Object.keys(readCredentials(dir).logins).length === 0;

describe('client commands: the kept logins', () => {
  const prod = 'https://prod.example.com';
  const staging = 'https://staging.example.com';

  it('logout of the current server leaves none current, says which remain; the others are then picked with --url', async () => {
    const dir = credentialsDir([prod, staging], staging);
    // no server behind these addresses: logout's revocation fails fast and is only a warning
    const out = await run(['logout'], { GATEHOUSE_CONFIG_DIR: dir, GATEHOUSE_HTTP_TIMEOUT_MS: '3000' });
    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /^Logged out of https:\/\/staging\.example\.com \(user1@example\.com\).*\nStill logged in to: https:\/\/prod\.example\.com; use --url/,
    );
    const file = readCredentials(dir);
    assert.deepEqual(Object.keys(file.logins), [prod]);
    assert.equal(file.current, undefined, 'no other login was made current');

    for (const command of ['token', 'whoami']) {
      const r = await run([command], { GATEHOUSE_CONFIG_DIR: dir });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /no current login .*; still logged in to: https:\/\/prod\.example\.com; use --url \(or GATEHOUSE_URL\) to pick one\n$/);
    }
    const again = await run(['logout'], { GATEHOUSE_CONFIG_DIR: dir, GATEHOUSE_HTTP_TIMEOUT_MS: '3000' });
    assert.match(again.stdout, /^No current login; nothing to forget; still logged in to: https:\/\/prod\.example\.com/);
    assert.deepEqual(Object.keys(readCredentials(dir).logins), [prod], 'nothing forgotten without --url');

    // options before the command name
    const token = await run(['--url', prod, 'token'], { GATEHOUSE_CONFIG_DIR: dir });
    assert.equal(token.code, 0, token.stderr);
    assert.equal(token.stdout, 'token-0\n');
    const json = await run(['--json', 'token', '--url', prod], { GATEHOUSE_CONFIG_DIR: dir });
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).access_token, 'token-0');
  });

  it('the chmod advice on a loosened file is one shell word, whatever the folder is called', async () => {
    const dir = credentialsDir([prod], prod, join(tmp, "Application Support's", 'gatehouse'));
    chmodSync(join(dir, 'credentials.json'), 0o644);
    const r = await run(['token'], { GATEHOUSE_CONFIG_DIR: dir });
    assert.equal(r.code, 0, r.stderr);
    const advice = /run: chmod 600 (.*)\n/.exec(r.stderr)?.[1];
    assert.ok(advice, r.stderr);
    // the shell's reading of it names the file
    const { stdout } = spawnSync('sh', ['-c', `printf %s ${advice}`], { encoding: 'utf8' });
    assert.equal(stdout, join(dir, 'credentials.json'));
  });

  it('a file gatehouse did not write is refused, not trusted: another version, a current login it does not hold', async () => {
    for (const content of [
      { version: 2, logins: {} },
      { version: 1, current: 'constructor', logins: {} },
      { version: 1, logins: { [prod]: { url: staging, username: 'a', access_token: 't', token_type: 'Bearer', obtained_at: 'x' } } },
    ]) {
      const dir = freshDir();
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, 'credentials.json'), JSON.stringify(content), { mode: 0o600 });
      const r = await run(['token'], { GATEHOUSE_CONFIG_DIR: dir });
      assert.equal(r.code, 1, JSON.stringify(content));
      assert.match(r.stderr, /credentials\.json is not a file gatehouse wrote; remove it and run gatehouse login again\n$/);
    }
  });
});

describe('gatehouse login --open: which pages it hands to the browser', () => {
  const base = 'https://gatehouse.example.com';
  it('only an http(s) page on the server of --url', () => {
    assert.equal(refusalToOpen(`${base}/device?user_code=BCDF-GHJK`, base), undefined);
    assert.equal(refusalToOpen(`${base}/device`, `${base}/tenant-a`), undefined, 'the origin counts, not the path');
    assert.match(refusalToOpen('https://evil.example.net/device', base)!, /not on https:\/\/gatehouse\.example\.com/);
    assert.match(refusalToOpen('http://gatehouse.example.com/device', base)!, /not on https:/, 'no downgrade to http');
    assert.match(refusalToOpen('https://gatehouse.example.com:8443/device', base)!, /not on/);
    assert.match(refusalToOpen('file:///etc/passwd', base)!, /not an http\(s\) address/);
    assert.match(refusalToOpen('javascript:alert(1)', base)!, /not an http\(s\) address/);
    assert.match(refusalToOpen('calc.exe', base)!, /not a URL/);
  });
});

/** Listens on a port of the system's choosing on 127.0.0.1; resolves with the port. */
function onLoopback(server: Server | import('node:https').Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

describe('https to a server whose TLS is missing or untrusted: said in words, with what to do', () => {
  it('a server that speaks plain http: use http://, or set up TLS', async () => {
    const plain = createServer((_req, res) => res.end('{}'));
    const port = await onLoopback(plain);
    try {
      await assert.rejects(discover(`https://127.0.0.1:${port}`), (err: Error) => {
        assert.equal(err.name, 'ClientFailure');
        assert.equal(
          err.message,
          `https://127.0.0.1:${port} does not answer in TLS: the server there speaks plain http. Use http://127.0.0.1:${port} instead ` +
            '(only on this machine or a trusted network: the token would travel unencrypted), or set up TLS (https) for the server',
        );
        assert.doesNotMatch(err.message, /SSL routines|ssl3_get_record|openssl/i);
        return true;
      });
    } finally {
      plain.close();
    }
  });

  it('a self-signed certificate: fix it, or name the authority in NODE_EXTRA_CA_CERTS', async () => {
    const { certPem, keyPem } = makeCertificate({ subject: '/CN=127.0.0.1', altName: 'IP:127.0.0.1' });
    const tls = createHttpsServer({ cert: certPem, key: keyPem }, (_req, res) => res.end('{}'));
    const port = await onLoopback(tls);
    try {
      await assert.rejects(
        discover(`https://127.0.0.1:${port}`),
        /^ClientFailure: the TLS certificate of https:\/\/127\.0\.0\.1:\d+ is not trusted: it is self-signed\. Fix the server's certificate, or, if your own authority signed it, name that authority's certificate in NODE_EXTRA_CA_CERTS=FILE$/,
      );
    } finally {
      tls.close();
    }
  });
});

describe('discovery: the metadata must be the server the user named', () => {
  const base = 'https://gatehouse.example.com';
  const withMetadata = async (metadata: object) => {
    const real = globalThis.fetch;
    globalThis.fetch = () => Promise.resolve(Response.json(metadata));
    try {
      return await discover(base);
    } finally {
      globalThis.fetch = real;
    }
  };
  it('an http endpoint of a server reached by https is refused; the issuer may carry a trailing slash', async () => {
    const token_endpoint = `${base}/auth/api/v2/auth/token`;
    assert.equal((await withMetadata({ issuer: `${base}/`, token_endpoint })).token_endpoint, token_endpoint);
    await assert.rejects(
      withMetadata({ issuer: base, token_endpoint: 'http://gatehouse.example.com/auth/api/v2/auth/token' }),
      /names a token_endpoint that is not https .*; gatehouse will not send a login over plain http/,
    );
    await assert.rejects(
      withMetadata({ issuer: base, token_endpoint, device_authorization_endpoint: 'https://elsewhere.example.net/device/code' }),
      /names a device_authorization_endpoint on another server \(https:\/\/elsewhere\.example\.net\)/,
    );
  });
});

interface Answer {
  status: number;
  body?: object;
  /** a raw answer (an HTML page) instead of JSON */
  text?: string;
  /** never answer */
  hang?: boolean;
}

/** A server that answers the device flow from a script, recording when each poll came. */
async function scriptedServer(
  answers: Answer[],
  opts: { interval: number; metadata?: (base: string) => Answer; start?: (base: string) => Record<string, unknown> },
) {
  const polls: number[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const answer = (a: Answer) => {
      if (a.hang) return;
      if (a.text !== undefined) return res.writeHead(a.status, { 'content-type': 'text/html' }).end(a.text);
      const { location, ...body } = (a.body ?? {}) as { location?: string };
      return res.writeHead(a.status, { 'content-type': 'application/json', ...(location ? { location } : {}) }).end(JSON.stringify(body));
    };
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    if (req.url === '/.well-known/oauth-authorization-server')
      return answer(
        opts.metadata?.(base) ?? {
          status: 200,
          body: { issuer: base, token_endpoint: `${base}/token`, device_authorization_endpoint: `${base}/device/code` },
        },
      );
    if (req.url === '/device/code')
      return answer({
        status: 200,
        body: opts.start?.(base) ?? {
          device_code: 'dc',
          user_code: 'BCDF-GHJK',
          verification_uri: `${base}/device`,
          verification_uri_complete: `${base}/device?user_code=BCDF-GHJK`,
          expires_in: 600,
          interval: opts.interval,
        },
      });
    polls.push(Date.now());
    return answer(answers.shift() ?? { status: 400, body: { error: 'expired_token' } });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  cleanups.push(close);
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, polls, close };
}

/** A JWT-shaped token (unsigned) with these claims. */
const jwt = (claims: object) => `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

// independent cases (a fake server and a folder each): run together, they wait together
describe('gatehouse login: what each answer of the token endpoint leads to (RFC 8628 section 3.5)', { concurrency: true }, () => {
  const pending = { status: 400, body: { error: 'authorization_pending' } };
  const login = (url: string, env: Record<string, string> = {}) => run(['login', '--url', url, '--username', 'a@example.com'], env);

  it('slow_down: every later poll waits 5 seconds longer; a server error is retried; then the token', async () => {
    const s = await scriptedServer(
      [
        { status: 400, body: { error: 'slow_down' } },
        { status: 503, body: {} },
        { status: 200, body: { access_token: 'eyJ.a.b', token_type: 'Bearer', expires_in: 3600 } },
      ],
      { interval: 1 },
    );
    const dir = freshDir();
    const r = await login(s.url, { GATEHOUSE_CONFIG_DIR: dir });
    s.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(s.polls.length, 3);
    // the intervals are lower bounds: a loaded machine only makes them longer
    assert.ok(s.polls[1]! - s.polls[0]! >= 6000, `after slow_down the next poll came ${s.polls[1]! - s.polls[0]!} ms later (at least 6 s)`);
    assert.ok(s.polls[2]! - s.polls[1]! >= 6000, 'and stays slower');
    assert.match(r.stdout, /poll more slowly: every 6 seconds/);
    assert.equal(readCredentials(dir).logins[s.url].access_token, 'eyJ.a.b');
  });

  it('three failures in a row (an error page, a 503, no JSON) are retried; the token still comes; a folder open to others is closed to them', async () => {
    const s = await scriptedServer(
      [
        { status: 502, text: '<h1>Bad gateway</h1>' },
        { status: 503, body: {} },
        { status: 500, body: { error: 'server_error' } },
        { status: 200, body: { access_token: 'eyJ.a.b', token_type: 'Bearer', expires_in: 3600 } },
      ],
      {
        interval: 1,
        metadata: (base) => ({
          status: 200,
          body: { issuer: `${base}/`, token_endpoint: `${base}/token`, device_authorization_endpoint: `${base}/device/code` },
        }),
      },
    );
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    const r = await login(s.url, { GATEHOUSE_CONFIG_DIR: dir });
    s.close();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(s.polls.length, 4);
    assert.equal(statSync(dir).mode & 0o777, 0o700, "the folder is the owner's only");
    assert.equal(statSync(join(dir, 'credentials.json')).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['credentials.json'], 'no temporary file left behind');
  });

  it('a token endpoint that never answers: each poll gives up in time and is retried three times; then the login ends, saying why', async () => {
    const s = await scriptedServer(
      [
        { status: 0, hang: true },
        { status: 0, hang: true },
        { status: 0, hang: true },
        { status: 0, hang: true },
      ],
      {
        interval: 1,
      },
    );
    const dir = freshDir();
    // long enough that discovery and the device-code request, which answer at once, never time
    // out on a loaded machine; only the hanging polls do
    const r = await login(s.url, { GATEHOUSE_CONFIG_DIR: dir, GATEHOUSE_HTTP_TIMEOUT_MS: '2500' });
    s.close();
    assert.equal(r.code, 1, r.stderr);
    assert.equal(s.polls.length, 4, 'the first poll and three retries');
    assert.match(
      r.stderr,
      /^gatehouse login: the server failed 4 polls in a row \(the last: no answer within 2\.5 s\); nothing was stored\. Check that it is up/m,
    );
    assert.equal(existsSync(join(dir, 'credentials.json')), false);
  });

  it('a token answer without expires_in: the expiry of the JWT, else none (the server decides)', async () => {
    const exp = Math.floor(Date.now() / 1000) + 7200;
    for (const [token, expiresAt] of [
      [jwt({ sub: 'u', exp }), new Date(exp * 1000).toISOString()],
      ['opaque-token', undefined],
    ] as const) {
      const s = await scriptedServer([{ status: 200, body: { access_token: token, token_type: 'Bearer' } }], { interval: 1 });
      const dir = freshDir();
      const r = await login(s.url, { GATEHOUSE_CONFIG_DIR: dir });
      s.close();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(readCredentials(dir).logins[s.url].expires_at, expiresAt);
      assert.match(r.stdout, expiresAt ? new RegExp(`works until ${expiresAt}`) : /The server named no expiry/);
      const printed = await run(['token', '--json'], { GATEHOUSE_CONFIG_DIR: dir });
      assert.equal(printed.code, 0, `${token}: not taken for expired\n${printed.stderr}`);
      assert.equal(JSON.parse(printed.stdout).expiry, expiresAt);
    }
  });

  it('what the server says is printed without control characters (no terminal escapes)', async () => {
    const s = await scriptedServer([{ status: 400, body: { error: 'server_error', error_description: 'bo\x1b]0;pwned\x07\x1b[2Jom\u202e' } }], {
      interval: 1,
      start: (base) => ({
        device_code: 'dc',
        user_code: 'BCDF-\x1b[8mGHJK',
        verification_uri: `${base}/device\x1b[1A`,
        expires_in: 600,
        interval: 1,
      }),
    });
    const r = await login(s.url);
    s.close();
    assert.equal(r.code, 1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
    assert.doesNotMatch(r.stdout + r.stderr, /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/);
    assert.match(r.stdout, /BCDF-\[8mGHJK/);
    assert.match(r.stdout, /\/device\[1A\n/, 'the page without verification_uri_complete is verification_uri');
    assert.match(r.stderr, /the server refused the login \(server_error: bo\]0;pwned\[2Jom\)/);
  });

  const endings: [string, object, RegExp][] = [
    ['access_denied', { error: 'access_denied' }, /the login was denied in the browser; nothing was stored/],
    ['expired_token', { error: 'expired_token' }, /the code expired before it was approved; run gatehouse login again/],
    [
      'invalid_grant',
      { error: 'invalid_grant' },
      /the server no longer accepts this device code \(already used, or the account was disabled since\); run gatehouse login again/,
    ],
    ['another error', { error: 'server_error', error_description: 'boom' }, /the server refused the login \(server_error: boom\)/],
  ];
  for (const [name, body, message] of endings) {
    it(`${name}: exit 1 with what happened, nothing stored`, async () => {
      const s = await scriptedServer([pending, { status: 400, body }], { interval: 1 });
      const dir = freshDir();
      const r = await login(s.url, { GATEHOUSE_CONFIG_DIR: dir });
      s.close();
      assert.equal(r.code, 1);
      assert.match(r.stderr, message);
      assert.equal(s.polls.length, 2, 'polled until the answer, then stopped');
      assert.throws(() => readFileSync(join(dir, 'credentials.json')), /ENOENT/);
    });
  }
});

// independent cases (a fake server and a folder each): run together, they wait together
describe('gatehouse login: metadata that does not name the server given, refused before anything is sent', { concurrency: true }, () => {
  const login = (url: string) => run(['--url', url, 'login', '--username', 'a@example.com']);
  const refusals: [string, (base: string) => Answer, RegExp][] = [
    [
      'another issuer',
      (base) => ({
        status: 200,
        body: { issuer: 'http://127.0.0.1:9', token_endpoint: `${base}/token`, device_authorization_endpoint: `${base}/device/code` },
      }),
      /is not the address this server knows itself by: its metadata names the issuer http:\/\/127\.0\.0\.1:9 .*use that address as --url; otherwise its operator must set GATEHOUSE_BASE_URL/,
    ],
    [
      'an endpoint on another server',
      (base) => ({
        status: 200,
        body: { issuer: base, token_endpoint: `${base}/token`, device_authorization_endpoint: 'http://127.0.0.2:9/device/code' },
      }),
      /names a device_authorization_endpoint on another server \(http:\/\/127\.0\.0\.2:9\); gatehouse sends logins only to http:\/\/127\.0\.0\.1:\d+/,
    ],
    [
      'a redirect',
      (base) => ({ status: 301, body: { location: `${base}/gatehouse/.well-known/oauth-authorization-server` } }),
      /redirects to http:\/\/127\.0\.0\.1:\d+\/gatehouse\/\.well-known\/oauth-authorization-server; use that server's address as --url \(http:\/\/127\.0\.0\.1:\d+\/gatehouse\)\n$/,
    ],
  ];
  for (const [name, metadata, message] of refusals) {
    it(`${name}: exit 1, what is wrong and what to do`, async () => {
      const s = await scriptedServer([], { interval: 1, metadata });
      const r = await login(s.url);
      s.close();
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /^gatehouse login: /);
      assert.match(r.stderr, message);
      assert.equal(s.polls.length, 0);
    });
  }
});

describe('gatehouse login: Ctrl-C and a closed standard input at the username prompt', () => {
  it('Ctrl-C at the prompt: cancelled, exit 130, nothing stored', async () => {
    const dir = freshDir();
    // standard input is a pipe that stays open: the prompt waits for an answer
    const child = spawn(process.execPath, [BIN, 'login', '--url', 'http://127.0.0.1:1'], {
      env: { PATH: process.env.PATH ?? '', GATEHOUSE_CONFIG_DIR: dir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      await waitFor('the prompt', PATIENCE_MS, () => (stderr.includes('E-mail address to sign in as:') ? true : undefined));
      child.kill('SIGINT');
      const code = await Promise.race([exited, sleep(PATIENCE_MS, 'did not exit', { ref: false })]);
      assert.equal(code, 130, stderr);
      assert.match(stderr, /\ngatehouse: login cancelled; nothing was stored\n$/);
      assert.equal(existsSync(join(dir, 'credentials.json')), false);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('standard input closed without an answer: the usage message, exit 2', async () => {
    const r = await run(['login', '--url', 'http://127.0.0.1:1']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no account named: give --username .*; see gatehouse login --help\n$/);
  });
});

// independent cases (a fake server and a folder each): run together, they wait together
describe('examples/python/device_login.py against the scripted server: every failure one line, no traceback', { concurrency: true }, () => {
  const python = async (url: string, args: string[] = ['--username', 'a@example.com']) => {
    const p = spawned('python3', ['examples/python/device_login.py', '--url', url, ...args], {});
    const r = await exitOf(p, PATIENCE_MS);
    return { code: r.code, stdout: p.stdout(), stderr: p.stderr(), line: r.code === 0 ? '' : oneLine(p) };
  };
  const endings: [string, Answer[], RegExp][] = [
    [
      'denied (after a server error, retried)',
      [
        { status: 503, text: 'unavailable' },
        { status: 400, body: { error: 'access_denied' } },
      ],
      /^device login failed: the login was denied in the browser/,
    ],
    ['expired', [{ status: 400, body: { error: 'expired_token' } }], /^device login failed: the code expired before it was approved/],
    [
      'an HTML page',
      [{ status: 200, text: '<!doctype html><h1>Sign in</h1>' }],
      /^device login failed: .*\/token answered HTTP 200 without JSON; is this the address of a Gatehouse server\?$/,
    ],
  ];
  for (const [name, answers, message] of endings) {
    it(`${name}: exit 1`, async () => {
      const s = await scriptedServer(answers, {
        interval: 1,
        // no verification_uri_complete: the script shows verification_uri
        start: (base) => ({ device_code: 'dc', user_code: 'BCDF-GHJK', verification_uri: `${base}/device`, expires_in: 600, interval: 1 }),
      });
      const r = await python(s.url);
      s.close();
      assert.equal(r.code, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /Traceback/);
      assert.match(r.line, message);
      assert.match(r.stdout, /\/device\n/);
    });
  }

  it('standard input closed at the prompt: exit 1, what to give', async () => {
    const r = await python('http://127.0.0.1:1', []);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.line, /^device login failed: no account named: give --username/);
  });
});
