// The IdP metadata fetch against server-side request forgery (security-tests.md section H).
// No test opens a socket to anything but loopback: the resolver is a fake, and the connector is a
// stub that records what it was asked to dial and either refuses (where nothing may be dialed,
// so a broken check fails the test without sending traffic) or dials a loopback server that
// stands in for the IdP. https is served by a loopback TLS server whose certificate names
// idp.example.com, so the tests also show TLS checking the URL's host while the socket goes to
// the address that was checked.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import { type DialTarget, type FetchOptions, fetchPublicUrl, type ResolvedAddress } from '../../src/sso/safe-fetch.js';
import { BLOCKED_RANGES } from './blocked-ranges.js';
import { makeCertificate } from '../helpers/openssl.js';

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';
const PREFIX = 'The metadata URL could not be fetched: ';

/** A fake resolver: answers per host (a list, or one list per call in turn), and records every question. */
function fakeResolver(answers: Record<string, string[] | string[][]>) {
  const asked: string[] = [];
  const resolver = async (host: string): Promise<ResolvedAddress[]> => {
    asked.push(host);
    const answer = answers[host];
    if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    const turn = Array.isArray(answer[0])
      ? (answer as string[][])[Math.min(asked.filter((h) => h === host).length - 1, answer.length - 1)]!
      : (answer as string[]);
    return turn.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolver, asked };
}

/** A connector that records each call and dials the loopback port given, or (none given) refuses to dial at all. */
function stubConnector(loopbackPort?: number) {
  const dialed: DialTarget[] = [];
  const connect_ = (target: DialTarget): Socket => {
    dialed.push(target);
    if (loopbackPort === undefined) throw new Error(`the connector was called for ${target.address}`);
    return connect(loopbackPort, '127.0.0.1');
  };
  return { connect: connect_, dialed };
}

/** Asserts the fetch fails with exactly `reason` (the whole public message), and nothing of the server's. */
async function refused(promise: Promise<unknown>, reason: string | RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof AppError, String(e));
    assert.equal(e.code, 'BAD_USER_INPUT');
    if (typeof reason === 'string') assert.equal(e.message, PREFIX + reason);
    else assert.match(e.message, reason);
    assert.ok(e.message.startsWith(PREFIX));
    return true;
  });
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}

const METADATA = '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com"/>';

describe('fetchPublicUrl: refused before any connection', () => {
  const nothingDialed = () => {
    const { resolver, asked } = fakeResolver({});
    const { connect, dialed } = stubConnector();
    return { options: { allowPrivate: false, resolver, connect } satisfies FetchOptions, asked, dialed };
  };

  for (const { range, inside } of BLOCKED_RANGES) {
    it(`refuses literal addresses in ${range}`, async () => {
      const { options, asked, dialed } = nothingDialed();
      // A zone index (fe80::1%eth0) cannot be written in a URL at all.
      for (const address of inside.filter((a) => !a.includes('%'))) {
        const host = address.includes(':') ? `[${address}]` : address;
        await refused(fetchPublicUrl(`https://${host}/metadata`, options), 'the address is not public');
      }
      assert.deepEqual(dialed, []);
      assert.deepEqual(asked, [], 'an IP literal is not resolved');
    });
  }

  it('refuses alternate spellings of loopback and private addresses, as the WHATWG URL parser normalises them', async () => {
    const { options, asked, dialed } = nothingDialed();
    const spellings: [string, string][] = [
      ['https://2130706433/', '127.0.0.1'],
      ['https://0x7f.1/', '127.0.0.1'],
      ['https://127.1/', '127.0.0.1'],
      ['https://017700000001/', '127.0.0.1'],
      ['https://012.1.2.3/', '10.1.2.3'],
      ['https://0/', '0.0.0.0'],
      ['https://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
      ['https://[::fFFf:127.0.0.1]/', '[::ffff:7f00:1]'],
      ['https://[0:0:0:0:0:ffff:a9fe:a9fe]/', '[::ffff:a9fe:a9fe]'],
      ['https://[::]/', '[::]'],
      ['https://[64:ff9b::127.0.0.1]/', '[64:ff9b::7f00:1]'],
    ];
    for (const [url, normal] of spellings) {
      assert.equal(new URL(url).hostname, normal);
      await refused(fetchPublicUrl(url, options), 'the address is not public');
    }
    assert.deepEqual(dialed, []);
    assert.deepEqual(asked, []);
  });

  it('refuses the cloud metadata host by name, whatever it resolves to', async () => {
    const { resolver, asked } = fakeResolver({ 'metadata.google.internal': [PUBLIC_V4] });
    const { connect, dialed } = stubConnector();
    for (const url of ['https://metadata.google.internal/computeMetadata/v1/', 'https://METADATA.google.internal./']) {
      await refused(fetchPublicUrl(url, { allowPrivate: false, resolver, connect }), 'the address is not public');
    }
    assert.deepEqual(asked, []);
    assert.deepEqual(dialed, []);
  });

  it('refuses a name if any one of its addresses is not public (one public and one private record)', async () => {
    const { resolver, asked } = fakeResolver({
      'mixed.example.com': [PUBLIC_V4, '10.0.0.7'],
      'mixed6.example.com': [PUBLIC_V6, 'fd00::7'],
      'private-last.example.com': [PUBLIC_V4, PUBLIC_V6, '::ffff:127.0.0.1'],
      'localhost.example.com': ['127.0.0.1', '::1'],
    });
    const { connect, dialed } = stubConnector();
    for (const host of ['mixed.example.com', 'mixed6.example.com', 'private-last.example.com', 'localhost.example.com']) {
      await refused(fetchPublicUrl(`https://${host}/metadata`, { allowPrivate: false, resolver, connect }), 'the address is not public');
    }
    assert.deepEqual(asked, ['mixed.example.com', 'mixed6.example.com', 'private-last.example.com', 'localhost.example.com'], 'one lookup each');
    assert.deepEqual(dialed, []);
  });

  it('refuses other schemes (file:, gopher:, data:, ftp:, and http: unless private targets are allowed)', async () => {
    const { options, dialed, asked } = nothingDialed();
    for (const url of [
      'file:///etc/passwd',
      'gopher://idp.example.com:70/_GET',
      'data:text/xml,<x/>',
      'ftp://idp.example.com/metadata.xml',
      'http://idp.example.com/metadata',
      'javascript:alert(1)',
    ]) {
      await refused(fetchPublicUrl(url, options), 'only https URLs are accepted');
      await refused(fetchPublicUrl(url.replace('http:', 'ws:'), options), 'only https URLs are accepted');
    }
    for (const url of ['file:///etc/passwd', 'gopher://localhost/', 'ftp://127.0.0.1/']) {
      await refused(fetchPublicUrl(url, { ...options, allowPrivate: true }), 'only https URLs are accepted');
    }
    assert.deepEqual(dialed, []);
    assert.deepEqual(asked, []);
  });

  it('refuses a port other than 443 (https://host:22), a user name or password, and what is not a URL', async () => {
    const { options, dialed, asked } = nothingDialed();
    await refused(fetchPublicUrl('https://idp.example.com:22/', options), 'only the standard https port is accepted');
    await refused(fetchPublicUrl('https://idp.example.com:8443/metadata', options), 'only the standard https port is accepted');
    await refused(fetchPublicUrl('https://admin:secret@idp.example.com/metadata', options), 'URLs with a user name or password are not accepted');
    await refused(fetchPublicUrl('https://admin@idp.example.com/metadata', options), 'URLs with a user name or password are not accepted');
    await refused(fetchPublicUrl('idp.example.com/metadata', options), 'it is not a valid URL');
    await refused(fetchPublicUrl('https://[fe80::1%25eth0]/', options), 'it is not a valid URL');
    assert.deepEqual(dialed, []);
    assert.deepEqual(asked, []);
  });

  it('reports a name that does not resolve, or resolves to nothing, as unreachable', async () => {
    const { resolver } = fakeResolver({ 'empty.example.com': [] });
    const { connect, dialed } = stubConnector();
    await refused(fetchPublicUrl('https://nxdomain.example.com/', { allowPrivate: false, resolver, connect }), 'the server could not be reached');
    await refused(fetchPublicUrl('https://empty.example.com/', { allowPrivate: false, resolver, connect }), 'the server could not be reached');
    assert.deepEqual(dialed, []);
  });
});

describe('fetchPublicUrl over TLS, dialing the checked address and checking the certificate against the URL’s host', () => {
  const { certPem, keyPem } = makeCertificate({ subject: '/CN=idp.example.com', altName: 'DNS:idp.example.com' });
  const seen: { path: string; host: string | undefined; servername: string | false | null }[] = [];
  let port = 0;

  /** Routes: /metadata, /redirect?to=<Location>, /hops/<n> (n redirects before /metadata), /error/<status>, /no-location. */
  const server = createHttpsServer({ key: keyPem, cert: certPem }, (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'https://idp.example.com');
    seen.push({ path: url.pathname, host: req.headers.host, servername: (req.socket as TLSSocket).servername });
    const hops = /^\/hops\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(METADATA);
    } else if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to')! }).end('moved');
    } else if (hops) {
      const n = Number(hops[1]);
      res.writeHead(n % 2 === 0 ? 301 : 307, { location: n === 1 ? '/metadata' : `/hops/${n - 1}` }).end();
    } else if (url.pathname.startsWith('/error/')) {
      res.statusMessage = 'Internal Banner Apache/2.4.1 (secret-host-17)';
      res.writeHead(Number(url.pathname.slice(7)), { 'content-type': 'text/html' }).end('<h1>secret upstream body</h1>');
    } else if (url.pathname === '/no-location') {
      res.writeHead(302).end();
    } else {
      res.writeHead(404).end();
    }
  });

  before(async () => {
    port = await listen(server);
  });
  after(() => close(server));

  /** Options for a fetch of idp.example.com (resolving to public addresses) that dials the loopback server. */
  function tlsOptions(answers: Record<string, string[] | string[][]> = { 'idp.example.com': [PUBLIC_V4] }, extra: Partial<FetchOptions> = {}) {
    const { resolver, asked } = fakeResolver(answers);
    const { connect, dialed } = stubConnector(port);
    return { options: { allowPrivate: false, resolver, connect, ca: certPem, ...extra } satisfies FetchOptions, asked, dialed };
  }

  it('fetches the document: dials the resolved public address on 443, TLS names the original host', async () => {
    seen.length = 0;
    const { options, asked, dialed } = tlsOptions();
    const fetched = await fetchPublicUrl('https://idp.example.com/metadata', options);
    assert.deepEqual(fetched, { body: METADATA, finalUrl: 'https://idp.example.com/metadata', contentType: 'application/samlmetadata+xml' });
    assert.deepEqual(asked, ['idp.example.com']);
    assert.deepEqual(dialed, [{ address: PUBLIC_V4, port: 443, family: 4, servername: 'idp.example.com', host: 'idp.example.com' }]);
    assert.deepEqual(
      seen,
      [{ path: '/metadata', host: 'idp.example.com', servername: 'idp.example.com' }],
      'SNI and Host name the URL’s host, no port',
    );
  });

  it('dials an IPv6 answer as IPv6', async () => {
    const { options, dialed } = tlsOptions({ 'idp.example.com': [PUBLIC_V6] });
    await fetchPublicUrl('https://idp.example.com/metadata', options);
    assert.equal(dialed[0]!.address, PUBLIC_V6);
    assert.equal(dialed[0]!.family, 6);
  });

  it('still validates the certificate: another host name, or no trusted CA, fails', async () => {
    const other = tlsOptions({ 'other.example.com': [PUBLIC_V4] });
    await refused(fetchPublicUrl('https://other.example.com/metadata', other.options), "the server's TLS certificate is not valid");
    assert.equal(other.dialed.length, 1, 'the socket was made; TLS refused it');
    const untrusted = tlsOptions(undefined, { ca: undefined });
    await refused(fetchPublicUrl('https://idp.example.com/metadata', untrusted.options), "the server's TLS certificate is not valid");
  });

  it('resists DNS rebinding: one lookup per hop, and the socket goes to the address that was checked', async () => {
    // The name answers public first, private afterwards. The fetch must use the first answer and
    // never ask again: a second lookup (by the HTTP client, at connect time) would get the private one.
    const rebinding = tlsOptions({ 'idp.example.com': [[PUBLIC_V4], ['127.0.0.1']] });
    await fetchPublicUrl('https://idp.example.com/metadata', rebinding.options);
    assert.deepEqual(rebinding.asked, ['idp.example.com'], 'exactly one lookup');
    assert.deepEqual(
      rebinding.dialed.map((d) => d.address),
      [PUBLIC_V4],
    );

    // Each hop of a redirect is resolved once and checked again: the second answer is private.
    const hop = tlsOptions({ 'idp.example.com': [[PUBLIC_V4], ['10.0.0.9']] });
    await refused(fetchPublicUrl('https://idp.example.com/hops/1', hop.options), 'the address is not public');
    assert.deepEqual(hop.asked, ['idp.example.com', 'idp.example.com'], 'one lookup per hop');
    assert.deepEqual(
      hop.dialed.map((d) => d.address),
      [PUBLIC_V4],
      'the private answer was never dialed',
    );
  });

  it('refuses a redirect to a private address, by literal or by name', async () => {
    const literal = tlsOptions();
    await refused(
      fetchPublicUrl(`https://idp.example.com/redirect?to=${encodeURIComponent('https://169.254.169.254/latest/meta-data/')}`, literal.options),
      'the address is not public',
    );
    assert.equal(literal.dialed.length, 1, 'only the first hop was dialed');

    const named = tlsOptions({ 'idp.example.com': [PUBLIC_V4], 'intranet.example.com': ['192.168.1.10'] });
    await refused(
      fetchPublicUrl(`https://idp.example.com/redirect?to=${encodeURIComponent('https://intranet.example.com/')}`, named.options),
      'the address is not public',
    );
    assert.deepEqual(named.asked, ['idp.example.com', 'intranet.example.com']);
    assert.equal(named.dialed.length, 1);

    const port22 = tlsOptions();
    await refused(
      fetchPublicUrl(`https://idp.example.com/redirect?to=${encodeURIComponent('https://idp.example.com:22/')}`, port22.options),
      'only the standard https port is accepted',
    );
    assert.equal(port22.dialed.length, 1);
  });

  it('refuses a redirect from https to http, even where http is allowed', async () => {
    for (const allowPrivate of [false, true]) {
      const { options, dialed } = tlsOptions(undefined, { allowPrivate });
      await refused(
        fetchPublicUrl(`https://idp.example.com/redirect?to=${encodeURIComponent('http://idp.example.com/metadata')}`, options),
        'it redirected from https to http',
      );
      assert.equal(dialed.length, 1);
    }
  });

  it('follows up to 3 redirects (relative Locations resolved against the current URL), and refuses a 4th', async () => {
    const three = tlsOptions();
    const fetched = await fetchPublicUrl('https://idp.example.com/hops/3', three.options);
    assert.equal(fetched.body, METADATA);
    assert.equal(fetched.finalUrl, 'https://idp.example.com/metadata');
    assert.equal(three.asked.length, 4, 'one lookup per hop');
    assert.equal(three.dialed.length, 4);

    const four = tlsOptions();
    await refused(fetchPublicUrl('https://idp.example.com/hops/4', four.options), 'too many redirects');
    assert.equal(four.dialed.length, 4, 'the 4th redirect is not followed');

    const fewer = tlsOptions(undefined, { maxRedirects: 0 });
    await refused(fetchPublicUrl('https://idp.example.com/hops/1', fewer.options), 'too many redirects');
  });

  it('answers every failure with one fixed reason, never the status, status text, banner or body', async () => {
    for (const status of [400, 401, 403, 404, 500, 502]) {
      const { options } = tlsOptions();
      await assert.rejects(fetchPublicUrl(`https://idp.example.com/error/${status}`, options), (e: Error) => {
        assert.equal(e.message, `${PREFIX}the server answered with an error`);
        assert.doesNotMatch(e.message, new RegExp(`${status}|Apache|secret|Banner`));
        return true;
      });
    }
    await refused(fetchPublicUrl('https://idp.example.com/no-location', tlsOptions().options), 'it redirected to an invalid URL');
  });
});

describe('fetchPublicUrl limits, against loopback http servers (private targets allowed, as in development)', () => {
  const servers: Server[] = [];
  /** Starts a loopback http server with this handler; returns its base URL. */
  async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
    const server = createHttpServer(handler);
    servers.push(server);
    return `http://127.0.0.1:${await listen(server)}`;
  }
  after(() => Promise.all(servers.map(close)));

  it('fetches from a loopback server when private targets are allowed, and refuses the same URL when not', async () => {
    const base = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/xml' }).end(METADATA));
    const fetched = await fetchPublicUrl(`${base}/metadata`, { allowPrivate: true });
    assert.deepEqual(fetched, { body: METADATA, finalUrl: `${base}/metadata`, contentType: 'text/xml' });
    const byName = await fetchPublicUrl(`${base.replace('127.0.0.1', 'localhost')}/metadata`, { allowPrivate: true });
    assert.equal(byName.body, METADATA, 'through the system resolver');

    const { connect, dialed } = stubConnector();
    await refused(fetchPublicUrl(`${base}/metadata`, { allowPrivate: false, connect }), 'only https URLs are accepted');
    await refused(
      fetchPublicUrl(`${base.replace('http:', 'https:')}/metadata`, { allowPrivate: false, connect }),
      'only the standard https port is accepted',
    );
    await refused(fetchPublicUrl('https://127.0.0.1/metadata', { allowPrivate: false, connect }), 'the address is not public');
    await refused(fetchPublicUrl('https://localhost/metadata', { allowPrivate: false, connect }), 'the address is not public');
    assert.deepEqual(dialed, []);
  });

  it('aborts a body over the cap while streaming it (2 MiB against 1 MiB)', async () => {
    let written = 0;
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/xml' }); // chunked: no length announced
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = () => {
        while (written < 2 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => {});
      pump();
    });
    await refused(fetchPublicUrl(`${base}/big`, { allowPrivate: true }), 'it is larger than 1 MiB');
  });

  it('refuses an announced Content-Length over the cap without reading the body', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
      res.write('<'); // and then nothing: a fetch that waited for the body would hit the deadline instead
    });
    await refused(fetchPublicUrl(`${base}/announced`, { allowPrivate: true }), 'it is larger than 1 MiB');
  });

  it('accepts a body of exactly maxBytes and refuses one byte more', async () => {
    const base = await serve((req, res) => res.writeHead(200).end('y'.repeat(req.url === '/exact' ? 1000 : 1001)));
    assert.equal((await fetchPublicUrl(`${base}/exact`, { allowPrivate: true, maxBytes: 1000 })).body.length, 1000);
    await refused(fetchPublicUrl(`${base}/over`, { allowPrivate: true, maxBytes: 1000 }), 'it is larger than 1000 bytes');
  });

  it('gives up on a slow server at the deadline (a byte a second; 300 ms allowed)', async () => {
    const timers: NodeJS.Timeout[] = [];
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.on('error', () => {});
      timers.push(setInterval(() => res.write('<'), 1000));
    });
    const started = Date.now();
    await refused(fetchPublicUrl(`${base}/slow`, { allowPrivate: true, timeoutMs: 300 }), 'it took longer than 0.3 s');
    assert.ok(Date.now() - started < 3000, 'well under the 5 s default');
    for (const t of timers) clearInterval(t);
  });

  it('counts connection, headers and name resolution in the deadline', async () => {
    const silent = await serve(() => {}); // accepts, never answers
    await refused(fetchPublicUrl(`${silent}/`, { allowPrivate: true, timeoutMs: 300 }), 'it took longer than 0.3 s');
    const neverResolves = () => new Promise<ResolvedAddress[]>(() => {});
    const { connect, dialed } = stubConnector();
    await refused(
      fetchPublicUrl('https://idp.example.com/', { allowPrivate: false, resolver: neverResolves, connect, timeoutMs: 300 }),
      'it took longer than 0.3 s',
    );
    assert.deepEqual(dialed, []);
  });

  it('reports a closed port as unreachable', async () => {
    const server = createHttpServer();
    const port = await listen(server);
    await close(server);
    await refused(fetchPublicUrl(`http://127.0.0.1:${port}/`, { allowPrivate: true }), 'the server could not be reached');
  });
});
