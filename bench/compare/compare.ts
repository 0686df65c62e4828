// npm run bench:compare [-- --duration S] [--reps N] [--connections 32,100] [--no-write]
//
// Issue 12, part 1: Gatehouse measured side by side with peers, from outside, on loopback.
// Each server is a process of its own, started once and kept running for the whole run; the
// load (autocannon) runs in yet another process, one load at a time, and the repetitions are
// interleaved (every case once, then every case again), so that drift of the machine spreads
// over all servers instead of falling on one. Writes the section between the compare markers of
// docs/benchmarks.md and prints it. PostgreSQL at BENCH_DATABASE_URL, else TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/postgres; the database gatehouse_cmp is recreated.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildRunnables } from './build.js';
import { BASIC, CLIENTS_QUERY, TOKEN_BODY } from './fixtures.js';
import { freshDatabase, prepareClients, spawnGatehouse, TOKEN_PATH, token } from './gatehouse.js';
import type { LoadResult, LoadSpec } from './load.js';
import { cpuMs, freePort, type Proc, rssMb, spawnNode, stop, waitReady } from './proc.js';
import { median, type Row, type Sample, table, writeSection } from './report.js';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    reps: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32,100' },
    'no-write': { type: 'boolean', default: false },
  },
});
const durationS = Number(args.duration);
const reps = Number(args.reps);
const connectionLevels = args.connections.split(',').map(Number);
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
// the reference servers and the load generator, compiled to JavaScript (see build.ts)
const here = buildRunnables();
const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-compare-'));
// also on a signal (proc.ts exits then, after killing every child, and 'exit' runs this)
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const log = (s: string) => process.stderr.write(`${s}\n`);

interface Server {
  name: string;
  proc: Proc;
  base: string;
  idleRssMb: number;
}
const servers: Server[] = [];

/** Starts a reference server (a file in servers/) and waits for its readiness URL. */
async function startReference(name: string, file: string, readyPath: string): Promise<Server> {
  const port = await freePort();
  const proc = spawnNode([join(here, 'servers', file.replace(/\.ts$/, '.js'))], { PORT: String(port) }, join(tmp, `${file}.log`));
  await waitReady(proc, `http://127.0.0.1:${port}${readyPath}`, performance.now());
  return { name, proc, base: `http://127.0.0.1:${port}`, idleRssMb: 0 };
}

/** A cluster answers /healthz once its first worker listens; the comparison waits for all of them. */
async function waitWorkers(server: Server, n: number): Promise<void> {
  const t0 = performance.now();
  while (server.proc.stdout().split('"msg":"gatehouse serving"').length - 1 < n + 1) {
    if (performance.now() - t0 > 60_000) throw new Error(`${server.name}: ${n} workers did not start within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startGatehouse(name: string, storage: Parameters<typeof spawnGatehouse>[2]): Promise<Server & { startMs: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawnGatehouse(port, join(tmp, `${name}.log`), storage);
  const startMs = await waitReady(proc, `http://127.0.0.1:${port}/healthz`, t0);
  return { name, proc, base: `http://127.0.0.1:${port}`, idleRssMb: 0, startMs };
}

/** One autocannon run in a child process, with the server's CPU and peak RSS read meanwhile. */
async function load(spec: LoadSpec): Promise<LoadResult> {
  const p = spawnNode([join(here, 'load.js'), JSON.stringify(spec)], {}, join(tmp, 'load.log'));
  await p.exited;
  const line = p.stdout().trim().split('\n').pop() ?? '';
  if (!line.startsWith('{'))
    throw new Error(`load generator failed (see ${join(tmp, 'load.log')}): ${readFileSync(join(tmp, 'load.log'), 'utf8').slice(-500)}`);
  return JSON.parse(line) as LoadResult;
}

async function measure(server: Server, spec: LoadSpec, side?: LoadSpec): Promise<Sample> {
  const c0 = cpuMs(server.proc.pid);
  const t0 = performance.now();
  let peak = rssMb(server.proc.pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(server.proc.pid));
  }, 200);
  try {
    const [main, extra] = await Promise.all([load(spec), side ? load(side) : undefined]);
    const wall = performance.now() - t0;
    return {
      ...main,
      serverCpu: (cpuMs(server.proc.pid) - c0) / wall,
      serverRssMb: peak,
      ...(extra ? { sideReqPerS: extra.reqPerS, sideNon2xx: extra.non2xx, loadCpu: main.loadCpu + extra.loadCpu } : {}),
    };
  } finally {
    clearInterval(sampler);
  }
}

const tokenSpec = (s: Server, path: string, connections: number): LoadSpec => ({
  url: s.base + path,
  method: 'POST',
  headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
  body: TOKEN_BODY,
  connections,
  durationS,
});
const graphqlSpec = (s: Server, bearer: string | undefined, connections: number, query: string, path = '/graphql'): LoadSpec => ({
  url: s.base + path,
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}`, 'x-tenant-context': '1' } : {}) },
  body: JSON.stringify({ query }),
  connections,
  durationS,
});

try {
  const started = Date.now();
  const db = await freshDatabase(adminUrl, 'gatehouse_cmp');

  // Cold start: the first start fills an empty PGlite folder (migrations, bootstrap); the
  // following ones open the existing folder, which is what a restart costs.
  const pgliteDir = join(tmp, 'pglite');
  mkdirSync(pgliteDir);
  let first = await startGatehouse('Gatehouse PGlite', { dataDir: pgliteDir });
  log(`Gatehouse PGlite first start (empty folder): ${Math.round(first.startMs)} ms`);
  await stop(first.proc);
  const coldStarts: number[] = [];
  for (let i = 0; i < 3; i++) {
    first = await startGatehouse('Gatehouse PGlite', { dataDir: pgliteDir });
    coldStarts.push(first.startMs);
    if (i < 2) await stop(first.proc);
  }
  log(`Gatehouse PGlite start on the existing folder: ${coldStarts.map(Math.round).join(', ')} ms`);
  const ghLite = first;
  const ghPg = await startGatehouse('Gatehouse PostgreSQL', { databaseUrl: db.url, dataDir: join(tmp, 'pg-data') });
  // the same database, served by a cluster of two workers (GATEHOUSE_WORKERS=2)
  const ghPg2 = await startGatehouse('Gatehouse PostgreSQL, 2 workers', { databaseUrl: db.url, dataDir: join(tmp, 'pg2-data'), workers: 2 });
  await waitWorkers(ghPg2, 2);
  const bare = await startReference('bare Fastify (HTTP ceiling)', 'fastify-bare.ts', '/healthz');
  const minimal = await startReference('minimal reference', 'minimal-issuer.ts', '/healthz');
  const oidc = await startReference('oidc-provider 8.8.1', 'oidc-provider.ts', '/.well-known/openid-configuration');
  const jit = await startReference('Fastify + graphql-jit', 'graphql-jit.ts', '/healthz');
  servers.push(bare, minimal, oidc, ghLite, ghPg, ghPg2, jit);

  // idle RSS: after start and a moment to settle, before any load (and before the clients setup)
  await new Promise((r) => setTimeout(r, 2000));
  for (const s of servers) s.idleRssMb = rssMb(s.proc.pid);
  for (const g of [ghLite, ghPg]) await prepareClients(g.base);

  // the cases, in the order of one repetition
  interface Case {
    row: Row;
    server: Server;
    spec: () => Promise<LoadSpec>;
    side?: () => Promise<LoadSpec>;
  }
  const cases: Case[] = [];
  const add = (kind: string, server: Server, connections: number, reference: string | undefined, spec: Case['spec'], side?: Case['side']) =>
    cases.push({
      row: { kind, server: server.name, connections, samples: [], ...(reference ? { reference } : {}) },
      server,
      spec,
      ...(side ? { side } : {}),
    });
  for (const c of connectionLevels) {
    add('HTTP ceiling: POST, constant JSON', bare, c, undefined, async () => tokenSpec(bare, '/token', c));
    for (const [s, path] of [
      [minimal, '/token'],
      [oidc, '/token'],
      [ghLite, TOKEN_PATH],
      [ghPg, TOKEN_PATH],
      [ghPg2, TOKEN_PATH],
    ] as const) {
      add('token (client_credentials)', s, c, minimal.name, async () => tokenSpec(s, path, c));
    }
    add('clients query (10 × 8 fields)', jit, c, jit.name, async () => graphqlSpec(jit, undefined, c, CLIENTS_QUERY));
    for (const g of [ghLite, ghPg])
      add('clients query (10 × 8 fields)', g, c, jit.name, async () => graphqlSpec(g, await token(g.base), c, CLIENTS_QUERY));
  }
  // token issuance while another autocannon creates tenants (4 connections, a fresh name each)
  const mutation = 'mutation { createTenant(newTenant: {name: "bench [<id>]", partnerTenantID: "1"}) { id } }';
  for (const g of [ghLite, ghPg]) {
    add(
      'token while createTenant runs',
      g,
      32,
      undefined,
      async () => tokenSpec(g, TOKEN_PATH, 32),
      async () => ({
        ...graphqlSpec(g, await token(g.base), 4, mutation, '/public/query'),
        uniqueBody: true,
      }),
    );
  }

  log(`${cases.length} cases × ${reps} repetitions × ${durationS} s`);
  for (let rep = 1; rep <= reps; rep++) {
    for (const c of cases) {
      const sample = await measure(c.server, await c.spec(), c.side ? await c.side() : undefined);
      c.row.samples.push(sample);
      log(
        `rep ${rep} | ${c.row.kind} | ${c.server.name} | ${c.row.connections} conns | ${Math.round(sample.reqPerS)} req/s | p99 ${sample.p99} ms | non-2xx ${sample.non2xx}`,
      );
    }
  }

  const cpu = cpus();
  const section = [
    '## Side by side with peers (`npm run bench:compare`)',
    '',
    `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${cpu.length} × ${cpu[0]?.model.trim()}, ` +
      `${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}, PostgreSQL ${db.version} (same host, default settings), ` +
      `PGlite ${JSON.parse(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8')).version}; ` +
      `autocannon, ${durationS} s per run, medians of ${reps} interleaved repetitions (every case once, then again), ` +
      `in ${Math.round((Date.now() - started) / 1000)} s in all.`,
    '',
    'Every server is a separate process on loopback, started once and kept running through all repetitions; the load',
    'generator is another process. **On this 2-core machine autocannon competes with the server for CPU** (its own',
    'share is the last column), so every server is held below what it would do alone; only the ratios of one run compare.',
    'Server CPU is CPU time / wall time from `/proc/<pid>/stat` (1.00 = one core); RSS is the peak VmRSS during the run.',
    'Tokens: ES256 JWTs everywhere, HTTP Basic (client_secret_basic), form body. "vs ref" is req/s against the minimal',
    'reference (tokens) or the graphql-jit reference (clients query). The clients query on Gatehouse carries a Bearer',
    'token and `X-Tenant-Context: 1` and returns 10 clients; the reference has no authentication and no database.',
    'Reference servers and the load generator run as JavaScript compiled before the run (no tsx loader); Gatehouse runs',
    'its built executable (`bin/gatehouse.js serve`, as `npm start`) at its default log level.',
    '',
    ...table(cases.map((c) => c.row)),
    '',
    '| Server | idle RSS MB (after start, before load) |',
    '|---|---|',
    ...servers.map((s) => `| ${s.name} | ${Math.round(s.idleRssMb)} |`),
    '',
    `Gatehouse cold start on an existing PGlite folder (spawn to \`/healthz\` 200): median ${Math.round(median(coldStarts))} ms ` +
      `(runs: ${coldStarts.map((x) => Math.round(x)).join(', ')}).`,
    '',
    '"2 workers" is `gatehouse serve --workers 2` on the same database: its CPU and RSS are the primary\'s and both',
    "workers' together. On 2 cores the load generator takes a share of the CPU the workers would use.",
    '',
    'Not measured here: the tenants search rows under load (they are above, sequential, through `app.inject`).',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  if (!args['no-write']) writeSection(new URL('../../docs/benchmarks.md', import.meta.url).pathname, 'compare', section);
} finally {
  await Promise.all(servers.map((s) => stop(s.proc)));
  rmSync(tmp, { recursive: true, force: true });
}
