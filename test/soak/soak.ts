// `npm run test:soak [-- --seconds N]`: mixed load on one service for N seconds (default 60), on
// PGlite and, when TEST_DATABASE_URL is set, on PostgreSQL: client-credentials tokens, GraphQL
// reads (tenants, clients) and writes (tenants created), people signing in (password and TOTP),
// console pages, and device logins approved in the browser and redeemed by the CLI's poll. It
// holds the service to three things, and exits 1 if one fails:
//   - no answer is a 5xx, and every step answers as it should (a token, a page, a redirect);
//   - the process's resident memory stays under RSS_BOUND_MB (the service and its load together);
//   - every write the service acknowledged is in the database afterwards, whole.
// CI runs a 15-second version on both engines (.ci/run). The service runs in this process and is
// driven through Fastify's inject (the whole request path but the socket). Its clock follows the
// wall clock, but a sign-in moves it on by a TOTP step first: a code works once per step.
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { ManualClock } from '../../src/clock.js';
import { totpCodeAt } from '../../src/users/totp.js';
import { ROOT_CLIENT_ID, ROOT_CLIENT_SECRET, type Response, startTestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { PageClient, PASSWORD, signedInUser } from '../helpers/pages.js';
import { createTenant, tq } from '../helpers/tenants.js';

/** the bound on the process's resident memory (docs/benchmarks.md, "Soak") */
const RSS_BOUND_MB = 768;
const USAGE = `Usage: npm run test:soak [-- --seconds N]

Sends N seconds (default 60) of mixed load to the service on PGlite, and on PostgreSQL too when
TEST_DATABASE_URL is set (SOAK_ENGINE=pglite or postgres: that engine alone): tokens, GraphQL reads
and writes, sign-ins, console pages, device logins. Fails (exit 1) on any 5xx or wrong answer, on
resident memory above ${RSS_BOUND_MB} MB, or on an acknowledged write missing afterwards.
`;
const WORKERS = 6;
/** one person per worker: a person signs in again only after a TOTP step */
const PEOPLE = WORKERS;

const { values } = parseArgs({ options: { seconds: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const seconds = Number(values.seconds ?? 60);
if (!Number.isFinite(seconds) || seconds <= 0) {
  process.stderr.write(`test:soak: --seconds must be a positive number, got ${values.seconds}\n`);
  process.exit(2);
}

interface Tally {
  requests: number;
  byKind: Record<string, number>;
  errors: string[];
  maxRssMb: number;
}

async function soak(engine: 'pglite' | 'postgres'): Promise<Tally> {
  const clock = new ManualClock(new Date());
  const t = await startTestApp({ engine, clock });
  const tally: Tally = { requests: 0, byKind: {}, errors: [], maxRssMb: 0 };
  const sampler = setInterval(() => {
    tally.maxRssMb = Math.max(tally.maxRssMb, process.memoryUsage().rss / 2 ** 20);
    // the clock follows the wall clock, never going back (sign-ins move it on)
    if (Date.now() > clock.now().getTime()) clock.set(new Date());
  }, 200);
  try {
    const root = await t.rootToken();
    const partner = await createTenant(t, '1', { isPartner: true });
    const people: { email: string; key: string }[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      const email = `soak-${i}@example.com`;
      const { key } = await signedInUser(t, email, { tenant: partner, roles: [ROLE_IDS.Administrator] });
      people.push({ email, key });
    }
    const acknowledged = new Map<string, string>();
    const check = (kind: string, res: Response, ok: (res: Response) => boolean) => {
      tally.requests++;
      tally.byKind[kind] = (tally.byKind[kind] ?? 0) + 1;
      if (res.status >= 500 || !ok(res)) tally.errors.push(`${kind}: ${res.status} ${res.text.slice(0, 200)}`);
    };

    let n = 0;
    let codeSteps: Promise<void> = Promise.resolve();
    let cliAddresses = 1;
    const steps: Record<string, (worker: number) => Promise<void>> = {
      token: async () => check('token', await t.tokenResponse(ROOT_CLIENT_ID, ROOT_CLIENT_SECRET), (r) => r.status === 200 && !!r.body?.access_token),
      read: async () => {
        check('tenants', await tq(t, root, '{ tenants(tenantsQuery: {maxResults: 20}) { count results { id name } } }'), (r) => !r.body?.errors);
        check('clients', await t.gql(root, '{ clients { client_id name } }'), (r) => !r.body?.errors);
      },
      write: async (worker) => {
        const name = `soak ${worker} ${n++}`;
        const res = await tq(t, root, 'mutation($n: String!, $p: ID!) { createTenant(newTenant: {name: $n, partnerTenantID: $p}) { id name } }', {
          n: name,
          p: partner,
        });
        check('write', res, (r) => !r.body?.errors && r.body?.data?.createTenant?.name === name);
        if (res.body?.data?.createTenant) acknowledged.set(res.body.data.createTenant.id, name);
      },
      person: async (worker) => {
        const who = people[worker % PEOPLE]!;
        const browser = new PageClient(t, undefined, `198.51.100.${worker + 1}`);
        let page = await browser.get('/login');
        check('sign-in', await browser.post('/login', { _csrf: browser.csrf(page), email: who.email }), (r) => r.status === 303);
        page = await browser.get('/login');
        check('sign-in', await browser.post('/login', { _csrf: browser.csrf(page), password: PASSWORD }), (r) => r.status === 303);
        page = await browser.get('/login');
        // a code works once per step: the clock moves on a step first, and nothing else moves it
        // until the code has been checked (one sign-in's code at a time)
        const csrf = browser.csrf(page);
        const codeStep = codeSteps.then(async () => {
          clock.advance(30_000);
          check('sign-in', await browser.post('/login', { _csrf: csrf, code: totpCodeAt(who.key, clock.now()) }), (r) => r.status === 303);
        });
        codeSteps = codeStep.catch(() => {});
        await codeStep;
        for (const path of [`/console/tenant?tenant=${partner}`, `/console/tenants?tenant=${partner}`, `/console/users?tenant=${partner}`]) {
          check('console', await browser.get(path), (r) => r.status === 200);
        }
        // a device login: the CLI starts it, this person approves it, the CLI's poll gets a token;
        // each from an address of its own (device logins are limited per address)
        const k = cliAddresses++;
        const cli = `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
        const started = await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/device/code',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ client_id: 'gatehouse-cli', login_hint: who.email }).toString(),
          remoteAddress: cli,
        });
        check('device', started, (r) => r.status === 200);
        const { user_code, device_code } = started.body as { user_code: string; device_code: string };
        page = await browser.get(`/device/approve?user_code=${user_code}`);
        check('device', page, (r) => r.status === 200);
        check('device', await browser.post('/device/approve', { _csrf: browser.csrf(page), user_code, decision: 'approve' }), (r) => r.status < 400);
        const polled = await t.request({
          method: 'POST',
          url: '/auth/api/v2/auth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
            device_code,
            client_id: 'gatehouse-cli',
          }).toString(),
          remoteAddress: cli,
        });
        check('device', polled, (r) => r.status === 200 && !!r.body?.access_token);
      },
    };
    const mix = ['token', 'token', 'read', 'read', 'write', 'write', 'person'];
    const end = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, worker) => {
        for (let i = worker; Date.now() < end; i++) {
          const kind = mix[i % mix.length]!;
          // a step that cannot go on (a page without the form it needs) is a failure, and the next goes on
          await steps[kind]!(worker).catch((err: Error) => tally.errors.push(`${kind}: ${err.message.split('\n')[0]}`));
        }
      }),
    );

    // every acknowledged write is there, whole
    const ids = [...acknowledged.keys()];
    const { rows } = await sql<{ id: string; name: string }>`select id::text as id, name from tenants where id::text = any(${ids})`.execute(
      t.db.kysely,
    );
    const stored = new Map(rows.map((r) => [r.id, r.name]));
    const lost = ids.filter((id) => stored.get(id) !== acknowledged.get(id));
    if (lost.length > 0) tally.errors.push(`${lost.length} of ${ids.length} acknowledged tenants missing or changed: ${lost.slice(0, 5).join(', ')}`);
    tally.byKind.acknowledged = ids.length;
  } finally {
    clearInterval(sampler);
    await t.close();
  }
  return tally;
}

let failed = false;
for (const engine of engines().filter((e) => !process.env.SOAK_ENGINE || e === process.env.SOAK_ENGINE)) {
  const started = Date.now();
  const tally = await soak(engine);
  const rate = Math.round(tally.requests / ((Date.now() - started) / 1000));
  process.stdout.write(
    `soak ${engine}: ${seconds} s, ${tally.requests} requests (about ${rate}/s with the set-up), ${JSON.stringify(tally.byKind)}, ` +
      `resident memory at most ${Math.round(tally.maxRssMb)} MB (bound ${RSS_BOUND_MB} MB), ${tally.errors.length} failures\n`,
  );
  for (const e of tally.errors.slice(0, 20)) process.stdout.write(`  ${e}\n`);
  if (tally.errors.length > 0 || tally.maxRssMb > RSS_BOUND_MB) failed = true;
}
process.exit(failed ? 1 : 0);
