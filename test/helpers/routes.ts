// The routes an app serves, read from Fastify's route tree (printRoutes), for the tests that must
// cover every route of a kind (the forms' CSRF check, the console's page matrix): a route added
// without its case fails them.
import type { TestApp } from './app.js';

/** Every route as `{ path, methods }`, the path whole (the tree prints each segment under its parent). */
export function servedRoutes(t: TestApp): { path: string; methods: string[] }[] {
  const stack: string[] = [];
  const found: { path: string; methods: string[] }[] = [];
  for (const line of t.service.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (m[3]) found.push({ path: stack.join(''), methods: m[3].split(', ') });
  }
  return found;
}
