// The load generator, run as a child process of compare.ts (never inside a server's process):
//   node --import tsx bench/compare/load.ts '<json LoadSpec>'
// Prints one JSON line with autocannon's figures and this process's own CPU time during the run,
// so the report can show what the load generator took from the same cores as the server.
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  durationS: number;
  /** Replaces `[<id>]` in the body with a number unique to each request (autocannon's own
   * idReplacement sent nothing at all in a trial, so this uses setupRequest). */
  uniqueBody?: boolean;
}

export interface LoadResult {
  reqPerS: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  /** CPU of this load process during the run, as a fraction of one core. */
  loadCpu: number;
}

const spec = JSON.parse(process.argv[2]!) as LoadSpec;
let seq = 0;
const t0 = performance.now();
const c0 = process.cpuUsage();
const r = await autocannon({
  url: spec.url,
  method: spec.method,
  headers: spec.headers,
  connections: spec.connections,
  duration: spec.durationS,
  ...(spec.body === undefined ? {} : { body: spec.body }),
  ...(spec.uniqueBody
    ? { requests: [{ setupRequest: (req: { body?: string }) => ({ ...req, body: spec.body!.replace('[<id>]', `${process.pid}-${++seq}`) }) }] }
    : {}),
});
const c1 = process.cpuUsage(c0);
const wallMs = performance.now() - t0;
const out: LoadResult = {
  reqPerS: r.requests.average,
  p50: r.latency.p50,
  p99: r.latency.p99,
  total: r.requests.total,
  non2xx: r.non2xx,
  errors: r.errors + r.timeouts,
  statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
  loadCpu: (c1.user + c1.system) / 1000 / wallMs,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
