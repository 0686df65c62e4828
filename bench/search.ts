// npm run bench:search [-- --engine postgres|pglite] [--tenants N] [--iterations K] [--reseed] [--no-write]
//
// Loads a synthetic hierarchy (1,000,000 tenants on PostgreSQL, 100,000 on PGlite by default;
// kept between runs unless --reseed) and reports p50/p99 latency of every tenants filter and both
// pagination modes as three kinds of caller see them, plus the token endpoint. Requests go
// through the whole app (app.inject: routing, auth, GraphQL, resolvers, SQL), without sockets.
// With the default size, the table replaces the engine's section of docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { cpus } from 'node:os';
import { mkdirSync, rmSync } from 'node:fs';
import pg from 'pg';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createService } from '../src/compose.js';
import { openDb, type Db } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { ROLE_IDS } from '../src/access/roles.js';
import { writeSection } from './compare/report.js';
import { seedTenants } from './seed-tenants.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string' },
    tenants: { type: 'string' },
    iterations: { type: 'string', default: '200' },
    reseed: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
});
const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const engine = (args.engine ?? 'postgres') as 'postgres' | 'pglite';
const defaultTenants = engine === 'postgres' ? 1_000_000 : 100_000;
const tenants = Number(args.tenants ?? defaultTenants);
const iterations = Number(args.iterations);
const BASE = new Date('2025-01-01T00:00:00Z');

async function open(): Promise<Db> {
  if (engine === 'pglite') {
    const dir = `.cache/bench-pglite-${tenants}`;
    if (args.reseed) rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return openDb({ engine: 'pglite', dataDir: dir });
  }
  const name = `gatehouse_bench_${tenants}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  if (args.reseed) await admin.query(`drop database if exists ${name}`);
  const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
  if (exists.rowCount === 0) await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  return openDb({ engine: 'postgres', url: url.toString(), poolSize: 10 });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const db = await open();
await migrateToLatest(db.kysely);
const config = loadConfig({
  GATEHOUSE_BASE_URL: 'http://bench.test',
  GATEHOUSE_BOOTSTRAP_CLIENT_ID: 'bench-admin',
  GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: 'gatehouse_bench_secret_0123456789abcdefghijklmnop',
  GATEHOUSE_ENCRYPTION_KEY: '11'.repeat(32),
  GATEHOUSE_DATA_DIR: '.cache/bench-keys',
  GATEHOUSE_CLIENT_CREATE_LIMIT: '1000',
  // the query path itself is measured: the cost budgets (per process) would refuse a load generator's pace
  GATEHOUSE_GRAPHQL_COST_PER_MINUTE: '0',
  GATEHOUSE_GRAPHQL_TENANT_COST_PER_MINUTE: '0',
  LOG_LEVEL: 'silent',
});
const service = await createService({ config, db, logger: createLogger('silent'), migrate: false, expiryIntervalMs: null, purgeIntervalMs: null });
const count = Number((await sql<{ n: string }>`select count(*)::text as n from tenants`.execute(db.kysely)).rows[0]!.n);
let shape = { partners: Math.max(2, Math.floor(tenants / 1000)), firstChild: 0, last: tenants + 1 };
let seededS: number | null = null;
if (count < tenants) {
  const started = Date.now();
  process.stderr.write(`seeding ${tenants} tenants on ${engine}…\n`);
  // one transaction: an interrupted load leaves nothing behind
  shape = await db.kysely.transaction().execute((trx) => seedTenants(trx, { tenants, perPartner: 1000 }, BASE));
  // as autovacuum would in time: index-only scans need the visibility map
  await sql`vacuum analyze`.execute(db.kysely);
  // and the load's dirty pages written now, not by the checkpointer in the middle of the measurement
  await sql`checkpoint`.execute(db.kysely);
  seededS = (Date.now() - started) / 1000;
  process.stderr.write(`seeded in ${seededS.toFixed(1)} s\n`);
}

const app = service.app;
async function post(url: string, headers: Record<string, string>, payload: unknown) {
  const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: payload as object });
  if (res.statusCode !== 200) throw new Error(`${url} ${res.statusCode} ${res.body.slice(0, 300)}`);
  const body = JSON.parse(res.body);
  if (body.errors) throw new Error(JSON.stringify(body.errors).slice(0, 300));
  return body;
}
async function token(id: string, secret: string) {
  return (
    await post(
      '/auth/api/v2/auth/token',
      { authorization: 'Basic ' + Buffer.from(`${id}:${secret}`).toString('base64') },
      { grant_type: 'client_credentials' },
    )
  ).access_token as string;
}
const vendor = await token('bench-admin', 'gatehouse_bench_secret_0123456789abcdefghijklmnop');
async function clientIn(tenant: string, role: string, name: string) {
  const existing = await post(
    '/graphql',
    { authorization: `Bearer ${vendor}`, 'x-tenant-context': tenant },
    { query: `{ clients(name: "${name}") { id } }` },
  );
  for (const c of existing.data.clients) {
    await post(
      '/graphql',
      { authorization: `Bearer ${vendor}`, 'x-tenant-context': tenant },
      { query: `mutation { deleteClient(id: "${c.id}") { id } }` },
    );
  }
  const r = await post(
    '/graphql',
    { authorization: `Bearer ${vendor}`, 'x-tenant-context': tenant },
    {
      query: `mutation($n: String!, $r: [ID!]) { createClient(name: $n, roles: $r) { client { client_id } client_secret } }`,
      variables: { n: name, r: [role] },
    },
  );
  const c = r.data.createClient;
  return { token: await token(c.client.client_id, c.client_secret), clientId: c.client.client_id as string, secret: c.client_secret as string };
}
const partnerId = '3'; // a top-level partner: ~1,000 children and ~9 nested partners with theirs
const partner = await clientIn(partnerId, ROLE_IDS.Administrator, 'bench-partner-admin');
const support = await clientIn('1', ROLE_IDS.Support, 'bench-support');

const SELECTION = `count hasMore totalCount cursorPos results { id name enabled labels { name value } environments { name enabled } partnership { parent is_partner } }`;
const tenantsQuery = (q: Record<string, unknown>) => ({
  query: `query($q: TenantsQuery!) { tenants(tenantsQuery: $q) { ${SELECTION} } }`,
  variables: { q },
});

// a cursor deep in the result: walk to it once, then time the page after it
async function deepCursor(tok: string, q: Record<string, unknown>, pages: number): Promise<string> {
  let cursor: string | undefined;
  let n = 0;
  const pageSize = 500;
  while (n < pages) {
    const r = await post(
      '/public/query',
      { authorization: `Bearer ${tok}` },
      {
        query: `query($q: TenantsQuery!) { tenants(tenantsQuery: $q) { cursorPos } }`,
        variables: { q: { ...q, maxResults: pageSize, ...(cursor ? { cursorPos: cursor } : {}) } },
      },
    );
    cursor = r.data.tenants.cursorPos;
    n += pageSize / 10;
  }
  return cursor!;
}

const mid = new Date(BASE.getTime() + (tenants / 2) * 1000).toISOString();
const midEnd = new Date(BASE.getTime() + (tenants / 2 + 86400) * 1000).toISOString();
// search texts taken from real rows: an exact name, and a fragment spanning two words
const sample = async (id: number) =>
  (await sql<{ n: string }>`select name_normalized as n from tenants where id = ${String(id)}`.execute(db.kysely)).rows[0]!.n;
const vendorName = await sample(shape.last - 1234);
const partnerName = await sample(shape.last - 10000); // a child of partner 3 (id % partners == 1)
const fragment = (name: string) => `%${name.split(' ').slice(0, 2).join(' ').slice(2, -1)}%`;
interface Scenario {
  name: string;
  run: () => Promise<unknown>;
}
const scenarios: Scenario[] = [];
const add = (name: string, tok: string, q: Record<string, unknown>) =>
  scenarios.push({ name, run: () => post('/public/query', { authorization: `Bearer ${tok}` }, tenantsQuery(q)) });

for (const [who, tok, name] of [
  ['vendor', vendor, vendorName],
  ['partner', partner.token, partnerName],
] as const) {
  add(`${who}: first page (no pageNum: start of a cursor walk)`, tok, {});
  add(`${who}: page mode, pageNum 1 (with totalCount)`, tok, { pageNum: 1 });
  add(`${who}: page mode, pageNum 50 (with totalCount)`, tok, { pageNum: 50 });
  add(`${who}: name exact`, tok, { name });
  add(`${who}: name %wildcard% (${fragment(name)})`, tok, { name: fragment(name) });
  add(`${who}: name is an id`, tok, { name: String(shape.last - 5) });
  add(`${who}: ids (5)`, tok, { ids: ['2', '3', String(shape.last), String(shape.last - 1), String(shape.last - 2)] });
  add(`${who}: environmentFilter delta enabled`, tok, { environmentFilter: { name: 'delta', enabled: true } });
  add(`${who}: environmentFilter pilot disabled`, tok, { environmentFilter: { name: 'pilot', enabled: false } });
  add(`${who}: labelFilter region-emea`, tok, { labelFilter: { label_name: 'region-emea' } });
  add(`${who}: withPartnerSubscription mdr%`, tok, { withPartnerSubscription: 'mdr%' });
  add(`${who}: partnership parent`, tok, { partnership: { parent: partnerId } });
  add(`${who}: createdTimeFilter (1 day), CreatedAt order`, tok, { createdTimeFilter: { startTime: mid, endTime: midEnd }, orderBy: 'CreatedAt' });
  add(`${who}: modifiedTimeFilter (1 day, no Z), UpdatedAt order`, tok, {
    modifiedTimeFilter: { startTime: mid.replace('Z', ''), endTime: midEnd },
    orderBy: 'UpdatedAt',
  });
  add(`${who}: isPartner`, tok, { isPartner: true });
  add(`${who}: withSupport`, tok, { withSupport: true });
  add(`${who}: forHierarchies`, tok, { forHierarchies: [partnerId] });
  add(`${who}: orderBy Name desc`, tok, { orderBy: 'Name', orderDir: 'desc' });
  add(`${who}: orderBy CreatedAt desc`, tok, { orderBy: 'CreatedAt', orderDir: 'desc' });
  add(`${who}: combined (env + label + withSupport false)`, tok, {
    environmentFilter: { name: 'echo', enabled: true },
    labelFilter: { label_name: 'tier' },
    withSupport: false,
  });
}
add('support: withSupport (consented tenants)', support.token, {});

const deepVendor = await deepCursor(vendor, { orderBy: 'UpdatedAt' }, 5000);
add('vendor: cursor mode, page 5,000 (UpdatedAt)', vendor, { orderBy: 'UpdatedAt', cursorPos: deepVendor });
const deepPartner = await deepCursor(partner.token, { orderBy: 'Name' }, 90);
add('partner: cursor mode, page 90 (Name)', partner.token, { orderBy: 'Name', cursorPos: deepPartner });
scenarios.push({ name: 'token endpoint: client_credentials', run: () => token(partner.clientId, partner.secret) });
scenarios.push({
  name: 'credential interface: clients',
  run: () => post('/graphql', { authorization: `Bearer ${vendor}` }, { query: '{ clients { id name client_id roles } }' }),
});

const rows: string[] = [];
for (const s of scenarios) {
  for (let i = 0; i < 5; i++) await s.run();
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await s.run();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const row = `| ${s.name} | ${percentile(times, 50).toFixed(2)} | ${percentile(times, 99).toFixed(2)} |`;
  rows.push(row);
  process.stderr.write(row + '\n');
}

const header = [
  `Engine: ${engine}, ${tenants.toLocaleString('en')} tenants, ${iterations} sequential requests per row, ` +
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}` +
    (seededS === null ? ' (tenants loaded by an earlier run).' : `; the tenants were loaded in ${seededS.toFixed(0)} s.`),
  '',
  '| Request | p50 ms | p99 ms |',
  '|---|---|---|',
];
const section = [...header, ...rows].join('\n');
process.stdout.write(section + '\n');
if (!args['no-write'] && tenants === defaultTenants)
  writeSection(new URL('../docs/benchmarks.md', import.meta.url).pathname, `search-${engine}`, section);
await service.close();
