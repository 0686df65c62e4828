// Types for the two devDependencies of the comparison that ship none. First autocannon: the part
// of its programmatic API that load.ts uses
// @types/autocannon would be one more dependency for four fields).
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    /** Per-request hooks; setupRequest may rewrite the request (here: its body). */
    requests?: { setupRequest: (req: { body?: string }) => { body?: string } }[];
  }
  interface Result {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}

// oidc-provider ships no types either; the comparison uses its constructor and listen only.
declare module 'oidc-provider' {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    listen(port: number, host: string): unknown;
  }
}
