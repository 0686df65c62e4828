// (a) The HTTP ceiling: Fastify answering a constant JSON object, with nothing behind it. Every
// other server's req/s is bounded by this on the same machine.
import Fastify from 'fastify';
import { portFromEnv } from '../fixtures.js';

const app = Fastify({ logger: false });
// the same form body the token endpoints get, read and ignored
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, body));
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/token', async () => ({ hello: 'world' }));
await app.listen({ port: portFromEnv(), host: '127.0.0.1' });
