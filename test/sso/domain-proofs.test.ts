// SSO domains proven by DNS (docs/sso.md, "Domains proven by DNS"), against a DNS responder on
// loopback (test/helpers/dns-server.ts) and a real SAML IdP, on both engines: a pending domain
// routes nobody (and /login answers for it as for any unknown domain), a TXT record with the value
// shown once proves it and /login then goes to the IdP, a wrong value or a DNS failure leaves it
// pending with the reason in words, a proven domain whose record goes away keeps routing for the
// grace period and is then lost (reported), two tenants claiming one domain (the one that proves
// wins, the other is told), and only the connection's own tenant may check or regenerate.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createService } from '../../src/compose.js';
import { createLogger } from '../../src/logger.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { RunningClock } from '../helpers/browser.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { engines } from '../helpers/engines.js';
import { issuedValue, proveByDns } from '../helpers/sso-domains.js';
import { startTestIdp, type TestIdp } from '../helpers/saml-idp.js';
import { connectIdp, PageClient, postBack, toIdp } from './saml-flow.js';

const TENANT_PATH = '/public/query';
const PROOF =
  'domainProofs { domain status txtRecordName txtRecordValue provenAt lastCheckedAt nextCheckAt problem failingSince losesRoutingAt provenElsewhere }';
const CHECK = `mutation($id: ID!, $d: String!) { checkSSODomain(connectionID: $id, domain: $d) { id domains ${PROOF} } }`;
const REGENERATE = `mutation($id: ID!, $d: String!) { regenerateSSODomainChallenge(connectionID: $id, domain: $d) { id ${PROOF} } }`;
const ONE = `query($id: ID!) { ssoConnection(connectionID: $id) { id domains ${PROOF} } }`;
const CREATE = `mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id domains ${PROOF} } }`;
const HOUR = 3_600_000;

interface Proof {
  domain: string;
  status: string;
  txtRecordName: string;
  txtRecordValue: string | null;
  problem: string | null;
  failingSince: string | null;
  losesRoutingAt: string | null;
  provenElsewhere: boolean;
  provenAt: string | null;
}

const errorCode = (res: Response) => res.body.errors?.[0]?.extensions?.code;

for (const engine of engines()) {
  describe(`SSO domains proven by DNS (${engine})`, () => {
    let t: TestApp;
    let idp: TestIdp;
    let dns: TestDnsServer;
    let n = 0;
    const fresh = () => `proof${++n}.test`;

    before(async () => {
      [dns, idp] = await Promise.all([startDnsServer(), startTestIdp()]);
      t = await startTestApp({
        engine,
        clock: new RunningClock(),
        env: { GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: 'true', GATEHOUSE_DNS_SERVERS: dns.address, GATEHOUSE_SSO_DOMAIN_GRACE_HOURS: '72' },
      });
    });
    after(async () => {
      await Promise.all([t.close(), idp.close(), dns.close()]);
    });

    // a fresh token each time: a test moves the clock on by days
    const gql = async (query: string, variables: Record<string, unknown>, tenant: string) =>
      t.gql(await t.rootToken(), query, variables, { path: TENANT_PATH, tenant });
    /** Whether /login, given the address, goes on to an IdP by itself (its meta refresh). */
    const routesToIdp = async (email: string) => {
      const client = PageClient.atOwnAddress(t);
      const page = await client.get('/login');
      await client.post('/login', { _csrf: client.csrf(page), email });
      return /<meta http-equiv="refresh" content="0;url=\/sso\/saml\//.test((await client.get('/login')).text);
    };
    const proofOf = async (tenant: string, id: string, domain: string): Promise<Proof> => {
      const res = await gql(ONE, { id }, tenant);
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.ssoConnection.domainProofs.find((d: Proof) => d.domain === domain);
    };
    const check = async (tenant: string, id: string, domain: string): Promise<Proof> => {
      const res = await gql(CHECK, { id, d: domain }, tenant);
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.checkSSODomain.domainProofs.find((d: Proof) => d.domain === domain);
    };
    /** A new connection (Enabled, at the test IdP) whose domain is pending, and the value issued for it. */
    const pendingConnection = async (domain: string) => {
      const c = await connectIdp(t, idp, domain, 'Enabled', [], { proven: false });
      const res = await gql(REGENERATE, { id: c.id, d: domain }, c.tenant);
      assert.equal(res.body.errors, undefined, res.text);
      return { ...c, value: issuedValue(res.body.data.regenerateSSODomainChallenge, domain) };
    };
    /** What /login shows after an address is typed: the next step's page, the address blanked out. */
    const loginAnswer = async (email: string) => {
      const client = PageClient.atOwnAddress(t);
      const page = await client.get('/login');
      const typed = await client.post('/login', { _csrf: client.csrf(page), email });
      const next = await client.get('/login');
      // what differs between any two answers (the CSRF token; a passkey prompt's challenge, where
      // the page offers one) is blanked out
      const shown = next.text
        .replaceAll(email, 'EMAIL')
        .replace(/name="_csrf" value="[^"]+"/g, '')
        .replace(/&quot;challenge&quot;:&quot;[A-Za-z0-9_-]+&quot;/g, 'CHALLENGE');
      return `${typed.status} ${typed.headers.location} ${next.status} ${shown}`;
    };

    it('a new domain is pending, its value shown once; a pending domain routes nobody: /login answers for it as for an unknown domain', async () => {
      const domain = fresh();
      const c = await connectIdp(t, idp, 'unused-' + domain, 'Enabled', [], { proven: false });
      const created = await gql(CREATE, { c: { name: 'Second', type: 'saml', domains: [domain] } }, c.tenant);
      assert.equal(created.body.errors, undefined, created.text);
      const [proof] = created.body.data.createSSOConnection.domainProofs as Proof[];
      assert.equal(proof!.status, 'pending');
      assert.equal(proof!.txtRecordName, `_gatehouse-challenge.${domain}`);
      assert.match(proof!.txtRecordValue ?? '', /^[A-Za-z0-9_-]{43}$/);
      // shown once: read again, the value is gone (the database holds its digest only)
      const id = created.body.data.createSSOConnection.id;
      assert.equal((await proofOf(c.tenant, id, domain)).txtRecordValue, null);
      const stored = await t.db.kysely.selectFrom('sso_connection_domains').selectAll().where('domain', '=', domain).executeTakeFirstOrThrow();
      assert.ok(!Buffer.from(stored.challenge_hash!).toString('latin1').includes(proof!.txtRecordValue!), 'no value in clear');
      // a domain added later gets its value in that update's answer, once
      const added = fresh();
      const updated = await gql(
        `mutation($u: UpdateSSOConnectionInput!) { updateSSOConnection(updatedConnection: $u) { ${PROOF} } }`,
        { u: { id, addDomains: [added] } },
        c.tenant,
      );
      assert.equal(updated.body.errors, undefined, updated.text);
      const proofs = updated.body.data.updateSSOConnection.domainProofs as Proof[];
      assert.deepEqual(
        proofs.map((d) => [d.domain, d.status, d.txtRecordValue === null]),
        [
          [domain, 'pending', true],
          [added, 'pending', false],
        ].sort(),
      );

      // an Enabled connection at a working IdP, its domain pending: the password step, as for anyone
      const pendingDomain = fresh();
      await pendingConnection(pendingDomain);
      assert.equal(await loginAnswer(`anna@${pendingDomain}`), await loginAnswer('anna@nobody-claims.test'));
    });

    it('the TXT record with the value proves the domain, and /login then goes to the IdP; a record split in chunks counts', async () => {
      const domain = fresh();
      const c = await pendingConnection(domain);
      const proof = await proveByDns(t, dns, await t.rootToken(), c.tenant, c.id, domain, c.value);
      assert.equal(proof.status, 'proven', JSON.stringify(proof));
      assert.equal(proof.problem, null);
      const url = await toIdp(t, PageClient.atOwnAddress(t), `anna@${domain}`);
      assert.ok(url.startsWith(idp.ssoUrl), url);
      const events = await t.db.kysely.selectFrom('audit_events').select(['action', 'details']).where('target_id', '=', c.id).execute();
      assert.ok(
        events.some((e) => e.action === 'sso.domain_proven'),
        JSON.stringify(events),
      );

      // a value published in two strings of one record (as long values are by some DNS hosts)
      const other = fresh();
      const d = await pendingConnection(other);
      dns.setTxt(`_gatehouse-challenge.${other}`, ['unrelated', [d.value.slice(0, 20), d.value.slice(20)]]);
      assert.equal((await check(d.tenant, d.id, other)).status, 'proven');
    });

    it('a wrong value, a missing record, SERVFAIL and no answer leave the domain pending, each with a reason in words', async () => {
      const domain = fresh();
      const c = await pendingConnection(domain);
      const name = `_gatehouse-challenge.${domain}`;
      dns.setTxt(name, ['v=spf1 -all', 'not-the-value']);
      let proof = await check(c.tenant, c.id, domain);
      assert.equal(proof.status, 'pending');
      assert.match(proof.problem!, /has 2 TXT values, none of which is the value issued for this connection/);
      assert.ok(!proof.problem!.includes('not-the-value'), 'what was found is not repeated');
      dns.remove(name);
      proof = await check(c.tenant, c.id, domain);
      assert.match(proof.problem!, /does not exist in DNS \(NXDOMAIN\)/);
      dns.fail(name, 'SERVFAIL');
      proof = await check(c.tenant, c.id, domain);
      assert.match(proof.problem!, /SERVFAIL/);
      dns.fail(name, 'silent');
      proof = await check(c.tenant, c.id, domain);
      assert.match(proof.problem!, /no DNS answer for .* within 6 s/);
      assert.equal(proof.status, 'pending');
      // only the challenge label of the claimed domain was ever asked
      assert.ok(
        dns.asked.every((q) => q.startsWith('_gatehouse-challenge.')),
        dns.asked.join(', '),
      );
      // a domain the connection does not claim is not looked up
      const before = dns.asked.length;
      const res = await gql(CHECK, { id: c.id, d: 'internal.corp.example' }, c.tenant);
      assert.equal(errorCode(res), 'BAD_USER_INPUT');
      assert.match(res.body.errors[0].message, /does not claim internal\.corp\.example/);
      assert.equal(dns.asked.length, before);
      dns.remove(name);
    });

    it('the ACS links and creates nobody in a domain the connection has not proven, even through its own sign-in URL', async () => {
      const domain = fresh();
      const c = await pendingConnection(domain);
      const client = PageClient.atOwnAddress(t);
      const page = await client.get(`/sso/saml/${c.id}/login`);
      assert.equal(page.status, 200);
      await client.post(`/sso/saml/${c.id}/login`, { _csrf: client.csrf(page) });
      const next = /<meta http-equiv="refresh" content="0;url=([^"]+)">/.exec((await client.get('/login')).text)?.[1];
      const location = String((await client.get(next!.replaceAll('&amp;', '&'))).headers.location);
      assert.ok(location.startsWith(idp.ssoUrl), location);
      idp.setUser(`eve@${domain}`);
      const { acs, signedIn } = await postBack(t, client, c, await idp.respond(location));
      assert.notEqual(acs.status, 303, acs.text);
      assert.match(acs.text, /whose domain this connection has not proven yet/);
      assert.equal(signedIn, undefined);
      const made = await t.db.kysely.selectFrom('users').select('id').where('email', '=', `eve@${domain}`).execute();
      assert.deepEqual(made, [], 'nobody created');
    });

    it('two tenants claim one domain: neither blocks the other, the one that proves wins, the other is told', async () => {
      const domain = fresh();
      const squatter = await pendingConnection(domain);
      const owner = await pendingConnection(domain);
      // the squatter cannot prove without the owner's DNS; the owner proves
      dns.setTxt(`_gatehouse-challenge.${domain}`, [owner.value]);
      assert.equal((await check(squatter.tenant, squatter.id, domain)).status, 'pending');
      assert.equal((await check(owner.tenant, owner.id, domain)).status, 'proven');
      const told = await proofOf(squatter.tenant, squatter.id, domain);
      assert.equal(told.status, 'pending');
      assert.equal(told.provenElsewhere, true);
      // even with its own value published too, the second proves nothing while the first holds it
      dns.setTxt(`_gatehouse-challenge.${domain}`, [owner.value, squatter.value]);
      const second = await check(squatter.tenant, squatter.id, domain);
      assert.equal(second.status, 'pending');
      assert.match(second.problem!, /another connection has proven this domain/);
      assert.equal((await t.service.store.sso.connectionForDomain(domain))?.id, owner.id);
      const url = await toIdp(t, PageClient.atOwnAddress(t), `dee@${domain}`);
      assert.ok(url.startsWith(idp.ssoUrl));
    });

    it('two connections proving one domain at the same instant: exactly one wins', async () => {
      const domain = fresh();
      const a = await pendingConnection(domain);
      const b = await pendingConnection(domain);
      dns.setTxt(`_gatehouse-challenge.${domain}`, [a.value, b.value]);
      const [pa, pb] = await Promise.all([check(a.tenant, a.id, domain), check(b.tenant, b.id, domain)]);
      assert.deepEqual([pa.status, pb.status].sort(), ['pending', 'proven']);
      const rows = await t.db.kysely.selectFrom('sso_connection_domains').select('status').where('domain', '=', domain).execute();
      assert.equal(rows.filter((r) => r.status === 'proven').length, 1);
    });

    it('regenerate: a new value shown once; the old one no longer proves', async () => {
      const domain = fresh();
      const c = await pendingConnection(domain);
      const res = await gql(REGENERATE, { id: c.id, d: domain }, c.tenant);
      const renewed = issuedValue(res.body.data.regenerateSSODomainChallenge, domain);
      assert.notEqual(renewed, c.value);
      dns.setTxt(`_gatehouse-challenge.${domain}`, [c.value]);
      assert.equal((await check(c.tenant, c.id, domain)).status, 'pending');
      dns.setTxt(`_gatehouse-challenge.${domain}`, [renewed]);
      assert.equal((await check(c.tenant, c.id, domain)).status, 'proven');
      const events = await t.db.kysely.selectFrom('audit_events').select('action').where('target_id', '=', c.id).execute();
      assert.ok(events.some((e) => e.action === 'sso.domain_challenge_regenerated'));
    });

    it('checks by hand are counted per tenant: twenty an hour, then RATE_LIMITED with the wait, and nothing is looked up', async () => {
      const domain = fresh();
      const c = await pendingConnection(domain);
      for (let i = 0; i < 20; i++) assert.equal((await check(c.tenant, c.id, domain)).status, 'pending', `check ${i + 1}`);
      const before = dns.asked.length;
      const res = await gql(CHECK, { id: c.id, d: domain }, c.tenant);
      assert.equal(errorCode(res), 'RATE_LIMITED', res.text);
      assert.match(res.body.errors[0].message, /Too many domain checks for this tenant: the periodic check goes on meanwhile/);
      assert.ok(res.body.errors[0].extensions.retryAfter > 0);
      assert.equal(dns.asked.length, before, 'the refused check asked no DNS server');
    });

    it("another tenant can neither check nor regenerate a connection's domain (NOT_FOUND), and nothing is looked up", async () => {
      const domain = fresh();
      const c = await pendingConnection(domain);
      const stranger = (await connectIdp(t, idp, fresh(), 'Enabled', [], { proven: false })).tenant;
      dns.setTxt(`_gatehouse-challenge.${domain}`, [c.value]);
      const before = dns.asked.length;
      for (const q of [CHECK, REGENERATE]) {
        const res = await gql(q, { id: c.id, d: domain }, stranger);
        assert.equal(errorCode(res), 'NOT_FOUND', res.text);
      }
      assert.equal(dns.asked.length, before);
      assert.equal((await proofOf(c.tenant, c.id, domain)).status, 'pending');
    });

    it('a proven domain whose record goes away keeps routing for the grace period, then is lost, reported, and routes nobody', async () => {
      const domain = fresh();
      const c = await pendingConnection(domain);
      assert.equal((await proveByDns(t, dns, await t.rootToken(), c.tenant, c.id, domain, c.value)).status, 'proven');
      dns.remove(`_gatehouse-challenge.${domain}`);
      const sso = t.service.services.sso;
      // not due yet: nothing is checked before the recheck period
      t.clock.advance(HOUR);
      assert.equal(
        (await sso.checkDomainsDue(500)).failing.some((f) => f.domain === domain),
        false,
      );
      t.clock.advance(24 * HOUR);
      const done = await sso.checkDomainsDue(500);
      assert.deepEqual(
        done.failing.filter((f) => f.domain === domain),
        [{ tenantId: c.tenant, connectionId: c.id, domain }],
      );
      let proof = await proofOf(c.tenant, c.id, domain);
      assert.equal(proof.status, 'proven', 'still routing during the grace period');
      assert.ok(proof.failingSince && proof.losesRoutingAt);
      assert.equal(new Date(proof.losesRoutingAt!).getTime() - new Date(proof.failingSince!).getTime(), 72 * HOUR);
      assert.match(proof.problem!, /NXDOMAIN.*keeps routing until/);
      assert.equal(await routesToIdp(`bo@${domain}`), true);

      t.clock.advance(73 * HOUR);
      // this time the job itself, as `gatehouse serve` schedules it (compose.ts), in a second
      // process's service on the same database: it runs at start, warns in the log and counts
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk, _enc, next) {
          lines.push(...String(chunk).split('\n').filter(Boolean));
          next();
        },
      });
      const second = await createService({
        config: t.config,
        db: { ...t.db, close: async () => {} },
        logger: createLogger('info', sink),
        clock: t.clock,
        migrate: false,
        flushIntervalMs: null,
        expiryIntervalMs: null,
        purgeIntervalMs: 24 * HOUR,
      });
      try {
        const deadline = Date.now() + 20_000;
        while (!lines.some((l) => l.includes('SSO domains lost')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        const warning = lines.map((l) => JSON.parse(l)).find((l) => String(l.msg).startsWith('SSO domains lost'));
        assert.ok(warning, lines.join('\n'));
        assert.equal(warning.level, 40, 'a warning');
        assert.deepEqual(
          warning.lost.filter((f: { domain: string }) => f.domain === domain),
          [{ tenantId: c.tenant, connectionId: c.id, domain }],
        );
        assert.match(await second.metrics.registry.getSingleMetricAsString('gatehouse_sso_domain_checks_total'), /outcome="lost"\} [1-9]/);
      } finally {
        await second.close();
      }
      proof = await proofOf(c.tenant, c.id, domain);
      assert.equal(proof.status, 'lost');
      assert.match(proof.problem!, /failing since/);
      const events = await t.db.kysely.selectFrom('audit_events').select(['action', 'actor_kind']).where('target_id', '=', c.id).execute();
      assert.ok(
        events.some((e) => e.action === 'sso.domain_failing'),
        JSON.stringify(events),
      );
      assert.ok(
        events.some((e) => e.action === 'sso.domain_lost' && e.actor_kind === 'system'),
        JSON.stringify(events),
      );
      assert.equal(await routesToIdp(`cy@${domain}`), false);
      assert.equal(await loginAnswer(`cy@${domain}`), await loginAnswer('cy@nobody-claims.test'));

      // the record published again: proven again, routing again
      dns.setTxt(`_gatehouse-challenge.${domain}`, [c.value]);
      assert.equal((await check(c.tenant, c.id, domain)).status, 'proven');
      assert.equal(await routesToIdp(`cy@${domain}`), true);
      t.clock.set(new Date());
    });
  });
}
