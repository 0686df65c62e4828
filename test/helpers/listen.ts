// A test app on a real loopback socket (port 0: the system picks a free one), for clients that
// speak HTTP themselves (fetch, the GraphQL-over-HTTP audit) rather than app.inject().
import type { TestApp } from './app.js';

/** Starts listening on 127.0.0.1 (on `port`, else one the system picks) and returns the base URL, e.g. http://127.0.0.1:41234. */
export async function listen(t: TestApp, port = 0): Promise<string> {
  await t.service.app.listen({ port, host: '127.0.0.1' });
  const address = t.service.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the app is not listening on a TCP port');
  return `http://127.0.0.1:${address.port}`;
}
