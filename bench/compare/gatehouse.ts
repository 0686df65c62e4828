// Gatehouse as the comparison runs it: the built executable (`bin/gatehouse.js serve`, what
// `npm start` runs), bootstrap client fixed through the environment, on PGlite in a fresh data
// folder or on a PostgreSQL database of its own. Plus the few GraphQL calls that prepare the
// `clients` row: 9 clients created through createClient, so that with the bootstrap client the
// query returns 10, as many as the graphql-jit reference.
import pg from 'pg';
import { BASIC, CLIENT_ID, CLIENT_SECRET, CLIENTS_QUERY, TOKEN_BODY } from './fixtures.js';
import { type Proc, spawnNode } from './proc.js';

const bin = new URL('../../bin/gatehouse.js', import.meta.url).pathname;
export const TOKEN_PATH = '/auth/api/v2/auth/token';

export function spawnGatehouse(
  port: number,
  logFile: string,
  storage: { dataDir: string } | { databaseUrl: string; dataDir: string; workers?: number },
): Proc {
  return spawnNode(
    [bin, 'serve'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEHOUSE_DATA_DIR: storage.dataDir,
      GATEHOUSE_BOOTSTRAP_CLIENT_ID: CLIENT_ID,
      GATEHOUSE_BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
      // the query path itself is measured: the cost budgets (per process) would refuse a load generator's pace
      GATEHOUSE_GRAPHQL_COST_PER_MINUTE: '0',
      GATEHOUSE_GRAPHQL_TENANT_COST_PER_MINUTE: '0',
      ...('databaseUrl' in storage ? { DATABASE_URL: storage.databaseUrl, GATEHOUSE_ENCRYPTION_KEY: '22'.repeat(32) } : {}),
      ...('workers' in storage ? { GATEHOUSE_WORKERS: String(storage.workers) } : {}),
    },
    logFile,
  );
}

/** Drops and creates `name` next to adminUrl's database; returns its URL and the server version. */
export async function freshDatabase(adminUrl: string, name: string): Promise<{ url: string; version: string }> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
    const version = (await admin.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return { url: url.toString(), version };
  } finally {
    await admin.end();
  }
}

export async function token(base: string): Promise<string> {
  const res = await fetch(base + TOKEN_PATH, {
    method: 'POST',
    headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
    body: TOKEN_BODY,
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function graphql(base: string, bearer: string, query: string): Promise<{ data: Record<string, unknown> }> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'x-tenant-context': '1', 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { data: Record<string, unknown>; errors?: unknown };
  if (res.status !== 200 || body.errors) throw new Error(`graphql: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** Creates clients until tenant 1 has 10; checks that the benchmarked query returns them. */
export async function prepareClients(base: string): Promise<void> {
  const bearer = await token(base);
  const have = ((await graphql(base, bearer, CLIENTS_QUERY)).data.clients as unknown[]).length;
  for (let i = have; i < 10; i++) await graphql(base, bearer, `mutation { createClient(name: "bench-${i}") { client { id } } }`);
  const n = ((await graphql(base, bearer, CLIENTS_QUERY)).data.clients as unknown[]).length;
  if (n !== 10) throw new Error(`clients query returned ${n} clients, expected 10`);
}
