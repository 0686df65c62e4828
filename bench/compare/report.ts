// Turns the repetitions into the Markdown section of docs/benchmarks.md: the median of each
// figure over the repetitions, and ratios of req/s against the reference of the row's kind
// (the minimal issuer for tokens, graphql-jit for the clients query). Only ratios from one run
// mean anything: absolute req/s drift between runs and machines.
import { readFileSync, writeFileSync } from 'node:fs';

export interface Sample {
  reqPerS: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  /** server CPU time / wall time (1.0 = one core) */
  serverCpu: number;
  /** peak VmRSS of the server during the run, MB */
  serverRssMb: number;
  /** the load generator's own CPU, as a fraction of one core */
  loadCpu: number;
  /** the mutation load's req/s and non-2xx, on the rows that have one */
  sideReqPerS?: number;
  sideNon2xx?: number;
}

export interface Row {
  kind: string;
  server: string;
  connections: number;
  /** server name whose median req/s is this row's 1.00, or none */
  reference?: string;
  samples: Sample[];
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const int = (x: number) => Math.round(x).toLocaleString('en');
const med = (r: Row, f: (s: Sample) => number) => median(r.samples.map(f));

function statusSummary(r: Row): string {
  const codes: Record<string, number> = {};
  for (const s of r.samples) for (const [k, v] of Object.entries(s.statusCodes)) if (!k.startsWith('2')) codes[k] = (codes[k] ?? 0) + v;
  const errors = r.samples.reduce((a, s) => a + s.errors, 0);
  const parts = Object.entries(codes).map(([k, v]) => `${int(v)}× ${k}`);
  if (errors) parts.push(`${int(errors)} errors`);
  return parts.length ? parts.join(', ') : '0';
}

export function table(rows: Row[]): string[] {
  const out = [
    '| Row | Server | conns | req/s | vs ref | p50 ms | p99 ms | non-2xx (all reps) | server CPU | server RSS MB | autocannon CPU |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const rps = med(r, (s) => s.reqPerS);
    const ref = r.reference ? rows.find((x) => x.server === r.reference && x.connections === r.connections && x.kind === r.kind) : undefined;
    const ratio = ref ? (rps / med(ref, (s) => s.reqPerS)).toFixed(2) : '';
    const side =
      r.samples[0]?.sideReqPerS === undefined
        ? ''
        : ` (+ ${int(med(r, (s) => s.sideReqPerS ?? 0))} createTenant/s, ${int(r.samples.reduce((a, s) => a + (s.sideNon2xx ?? 0), 0))} of them non-2xx)`;
    out.push(
      `| ${r.kind} | ${r.server} | ${r.connections} | ${int(rps)}${side} | ${ratio} | ${med(r, (s) => s.p50)} | ${med(r, (s) => s.p99)} | ` +
        `${statusSummary(r)} | ${med(r, (s) => s.serverCpu).toFixed(2)} | ${int(med(r, (s) => s.serverRssMb))} | ${med(r, (s) => s.loadCpu).toFixed(2)} |`,
    );
  }
  return out;
}

/** Replaces the block between the markers `<!-- name:start -->` and `<!-- name:end -->` (appending
 *  it the first time), keeping the rest of the file. */
export function writeSection(file: string, name: string, section: string): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const text = readFileSync(file, 'utf8');
  const block = `${start}\n${section.trimEnd()}\n${end}`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  const next = i >= 0 && j > i ? text.slice(0, i) + block + text.slice(j + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}
