// (b) The minimal reference token endpoint: what client_credentials costs with nothing but the
// essentials. One in-memory client, its secret kept as a SHA-256 digest and checked with
// timingSafeEqual, HTTP Basic, a form or JSON body, an ES256 JWT signed with jose. No database,
// no throttle, no audit: the floor any real issuer is measured against.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';
import { AUDIENCE, CLIENT_ID, CLIENT_SECRET, portFromEnv } from '../fixtures.js';

const port = portFromEnv();
const issuer = `http://127.0.0.1:${port}`;
const sha256 = (s: string) => createHash('sha256').update(s).digest();
const clients = new Map([[CLIENT_ID, { digest: sha256(CLIENT_SECRET), tenant: '1' }]]);
const { privateKey } = await generateKeyPair('ES256');

const app = Fastify({ logger: false });
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
  done(null, Object.fromEntries(new URLSearchParams(body as string)));
});
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/token', async (req, reply) => {
  const auth = req.headers.authorization ?? '';
  const [id, secret] = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString().split(':') : [];
  const client = id === undefined ? undefined : clients.get(id);
  if (!client || secret === undefined || !timingSafeEqual(client.digest, sha256(secret))) {
    return reply.code(401).send({ error: 'invalid_client' });
  }
  if ((req.body as { grant_type?: string } | undefined)?.grant_type !== 'client_credentials') {
    return reply.code(400).send({ error: 'unsupported_grant_type' });
  }
  const now = Math.floor(Date.now() / 1000);
  const accessToken = await new SignJWT({ client_id: id, tid: client.tenant, scope: 'api' })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
    .setIssuer(issuer)
    .setSubject(id!)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .setJti(randomUUID())
    .sign(privateKey);
  reply.header('cache-control', 'no-store');
  return { access_token: accessToken, token_type: 'Bearer', expires_in: 3600 };
});
await app.listen({ port, host: '127.0.0.1' });
