// SsoStore contract (src/sso/store.ts), on every engine: connections read, listed, changed and
// deleted through their own tenant only (never through another, nor one below it), and by id for
// sign-in, with their domains, testers and certificates; the unique rule sso.domain across
// every tenant (one claim of many at once wins, no partial batch); changes to one connection's
// domains, testers and certificates that never reach another's; and the one-time steps of a SAML
// sign-in under concurrency: a request answered once, its ticket taken once, an assertion used once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { SsoCertificate } from '../../../src/sso/model.js';
import type { SamlRequestRow } from '../../../src/sso/store.js';
import type { Tenant } from '../../../src/tenants/model.js';
import {
  at,
  childOf,
  type Contract,
  fulfilled,
  HOUR,
  MINUTE,
  newUser,
  oneWinsOthersDuplicate,
  openContract,
  race,
  RACERS,
  rejectsDuplicate,
  sha256,
  T0,
  trues,
  twoTenants,
} from './harness.js';
import { engines } from '../../helpers/engines.js';

const certificate = (connectionId: string, over: Partial<SsoCertificate> = {}): SsoCertificate => ({
  id: randomUUID(),
  connectionId,
  name: null,
  pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  fingerprintSha256: sha256(randomUUID()).toString('hex'),
  issuer: 'CN=IdP',
  subject: 'CN=IdP',
  notBefore: at(-HOUR),
  expiresAt: at(365 * 24 * HOUR),
  fromMetadata: false,
  createdAt: T0,
  ...over,
});

const domain = () => `d${randomUUID().slice(0, 8)}.example`;
/** pending claims of these domains, each with a digest standing for its value */
const claims = (...domains: string[]) => domains.map((d) => ({ domain: d, challengeHash: sha256(`value of ${d}`) }));

for (const engine of engines()) {
  describe(`SsoStore contract (${engine})`, () => {
    let c: Contract;
    let a: Tenant;
    let b: Tenant;
    before(async () => {
      c = await openContract(engine);
      ({ a, b } = await twoTenants(c.store));
    });
    after(() => c.db.close());

    /** the tenant of each connection made here, as its management names it to the store */
    const owners = new Map<string, string>();
    const tid = (connectionId: string) => owners.get(connectionId)!;

    async function connection(tenant: Tenant, over: { name?: string; createdAt?: Date } = {}) {
      const id = randomUUID();
      owners.set(id, tenant.id);
      await c.store.sso.insertConnection({
        id,
        tenantId: tenant.id,
        name: over.name ?? `idp ${id.slice(0, 6)}`,
        type: 'saml',
        status: 'Created',
        createdBy: 'admin',
        createdAt: over.createdAt ?? T0,
      });
      return id;
    }

    const request = (connectionId: string, over: Partial<SamlRequestRow> = {}): SamlRequestRow => ({
      id: `_${randomUUID()}`,
      connectionId,
      sessionIdHash: sha256(randomUUID()),
      email: 'person@example.com',
      createdAt: T0,
      expiresAt: at(10 * MINUTE),
      ...over,
    });

    it('findConnection reads a connection with its domains and testers (sorted) and certificates (newest first)', async () => {
      const id = await connection(a, { name: 'Okta' });
      await c.store.sso.addDomains(tid(id), id, claims('zeta.example', 'alpha.example'), T0);
      await c.store.sso.addTesters(tid(id), id, ['z@alpha.example', 'a@alpha.example'], T0);
      const older = certificate(id, { createdAt: T0, name: 'old' });
      const newer = certificate(id, { createdAt: at(1), name: 'new' });
      await c.store.sso.insertCertificates(a.id, [older, newer]);
      assert.deepEqual(await c.store.sso.findConnection(tid(id), id), {
        id,
        tenantId: a.id,
        name: 'Okta',
        type: 'saml',
        status: 'Created',
        idpEntityId: null,
        signInEndpoint: null,
        metadataUrl: null,
        metadataRefreshedAt: null,
        metadataRefreshError: null,
        createdBy: 'admin',
        createdAt: T0,
        updatedAt: T0,
        domains: ['alpha.example', 'zeta.example'],
        domainProofs: ['alpha.example', 'zeta.example'].map((d) => ({
          domain: d,
          status: 'pending',
          createdAt: T0,
          provenAt: null,
          checkedAt: null,
          checkError: null,
          failingSince: null,
          nextCheckAt: at(HOUR),
          provenElsewhere: false,
        })),
        testers: ['a@alpha.example', 'z@alpha.example'],
        certificates: [newer, older],
      });
      assert.equal((await c.store.transaction((tx) => tx.sso.findConnection(tid(id), id, true)))?.id, id);
      assert.equal(await c.store.sso.findConnection(a.id, randomUUID()), undefined);
    });

    it('one tenant’s connection is not read, changed or deleted through another tenant (nor one below it)', async () => {
      const mine = await connection(a, { name: 'Mine' });
      const d = domain();
      await c.store.sso.addDomains(a.id, mine, claims(d), T0);
      await c.store.sso.addTesters(a.id, mine, [`t@${d}`], T0);
      const cert = certificate(mine);
      await c.store.sso.insertCertificates(a.id, [cert]);
      const before = await c.store.sso.findConnection(a.id, mine);
      assert.equal(before?.id, mine);
      const below = await childOf(c.store, a);
      for (const other of [b, below]) {
        assert.equal(await c.store.sso.findConnection(other.id, mine), undefined, 'not read');
        assert.equal(await c.store.transaction((tx) => tx.sso.findConnection(other.id, mine, true)), undefined, 'not read for update');
        assert.ok(!(await c.store.sso.listConnections(other.id)).some((x) => x.id === mine), 'not listed');
        const fresh = domain();
        await c.store.sso.updateConnection(other.id, mine, {
          name: 'Taken over',
          status: 'Enabled',
          metadataUrl: 'https://evil.example',
          updatedAt: at(HOUR),
        });
        await c.store.sso.addDomains(other.id, mine, claims(fresh), at(HOUR));
        await c.store.sso.removeDomains(other.id, mine, [d]);
        await c.store.sso.addTesters(other.id, mine, [`x@${d}`], at(HOUR));
        await c.store.sso.removeTesters(other.id, mine, [`t@${d}`]);
        await c.store.sso.insertCertificates(other.id, [certificate(mine)]);
        await c.store.sso.deleteCertificates(other.id, mine, [cert.id]);
        await c.store.sso.deleteConnection(other.id, mine);
        assert.deepEqual(await c.store.sso.findConnection(a.id, mine), before, 'nothing changed, nothing deleted');
        assert.equal(await c.store.sso.connectionForDomain(fresh), undefined, 'no domain claimed for it');
      }
      // a batch of certificates for several connections: only those of the tenant's go in
      const theirs = await connection(b);
      const ok = certificate(mine);
      await c.store.sso.insertCertificates(a.id, [ok, certificate(theirs)]);
      assert.deepEqual((await c.store.sso.findConnection(a.id, mine))?.certificates.map((x) => x.id).sort(), [cert.id, ok.id].sort());
      assert.deepEqual((await c.store.sso.findConnection(b.id, theirs))?.certificates, []);
    });

    it('findConnectionForSignIn reads a connection of any tenant by its id (the URL of a sign-in names no tenant)', async () => {
      const mine = await connection(a);
      const theirs = await connection(b);
      assert.deepEqual(await c.store.sso.findConnectionForSignIn(mine), await c.store.sso.findConnection(a.id, mine));
      assert.deepEqual(await c.store.sso.findConnectionForSignIn(theirs), await c.store.sso.findConnection(b.id, theirs));
      assert.equal(await c.store.sso.findConnectionForSignIn(randomUUID()), undefined);
    });

    it('listConnections lists one tenant’s connections, oldest first, never another’s', async () => {
      const t = await childOf(c.store, a);
      const second = await connection(t, { createdAt: at(2) });
      const first = await connection(t, { createdAt: at(1) });
      const theirs = await connection(b, { createdAt: at(1) });
      await c.store.sso.addDomains(tid(theirs), theirs, claims(domain()), T0);
      assert.deepEqual(
        (await c.store.sso.listConnections(t.id)).map((x) => x.id),
        [first, second],
      );
      assert.ok(!(await c.store.sso.listConnections(a.id)).some((x) => x.id === theirs));
      assert.deepEqual(await c.store.sso.listConnections('987654321'), []);
    });

    it('updateConnection changes the fields of the patch of that connection only', async () => {
      const id = await connection(a);
      const other = await connection(a);
      const before = await c.store.sso.findConnection(tid(id), id);
      const untouched = await c.store.sso.findConnection(tid(other), other);
      await c.store.sso.updateConnection(tid(id), id, {
        status: 'Testing',
        idpEntityId: 'https://idp.example/entity',
        signInEndpoint: 'https://idp.example/sso',
        metadataUrl: 'https://idp.example/metadata',
        metadataRefreshedAt: at(5),
        metadataRefreshError: 'timed out',
        updatedAt: at(10),
      });
      const after = await c.store.sso.findConnection(tid(id), id);
      assert.deepEqual(after, {
        ...before,
        status: 'Testing',
        idpEntityId: 'https://idp.example/entity',
        signInEndpoint: 'https://idp.example/sso',
        metadataUrl: 'https://idp.example/metadata',
        metadataRefreshedAt: at(5),
        metadataRefreshError: 'timed out',
        updatedAt: at(10),
      });
      await c.store.sso.updateConnection(tid(id), id, { name: 'Renamed', metadataRefreshError: null, updatedAt: at(11) });
      assert.deepEqual(await c.store.sso.findConnection(tid(id), id), { ...after, name: 'Renamed', metadataRefreshError: null, updatedAt: at(11) });
      assert.deepEqual(await c.store.sso.findConnection(tid(other), other), untouched);
    });

    /** a claim proven, as a check that found its record leaves it */
    const prove = (connectionId: string, d: string, when = T0) =>
      c.store.sso.updateDomainClaim(tid(connectionId), connectionId, d, { status: 'proven', provenAt: when, checkedAt: when, checkError: null });

    it('sso.domainProven: several connections claim a domain (pending); one holds it proven, and only a proven domain routes', async () => {
      const mine = await connection(a);
      const theirs = await connection(b);
      const [d1, d2, d3] = [domain(), domain(), domain()];
      await c.store.sso.addDomains(tid(mine), mine, claims(d1), T0);
      await c.store.sso.addDomains(tid(theirs), theirs, claims(d2, d1), T0);
      assert.deepEqual((await c.store.sso.findConnection(tid(theirs), theirs))?.domains, [d1, d2].sort(), 'a pending claim blocks nobody');
      assert.equal(await c.store.sso.connectionForDomain(d1), undefined, 'pending: routes nobody');
      await prove(mine, d1);
      assert.equal((await c.store.sso.connectionForDomain(d1))?.id, mine);
      await rejectsDuplicate(prove(theirs, d1), 'sso.domainProven');
      assert.deepEqual(
        (await c.store.sso.findConnection(tid(theirs), theirs))?.domainProofs.map((p) => [p.domain, p.status, p.provenElsewhere]),
        [
          [d1, 'pending', true],
          [d2, 'pending', false],
        ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      );
      assert.equal((await c.store.sso.findDomainClaim(tid(theirs), theirs, d1))?.provenElsewhere, true);
      assert.equal(await c.store.sso.findDomainClaim(tid(mine), theirs, d1), undefined, 'not through another tenant');
      assert.deepEqual(
        (await c.store.sso.domainOwners([d1, d2, d3])).map((o) => [o.domain, o.connectionId, o.status]).sort(),
        [
          [d1, mine, 'proven'],
          [d1, theirs, 'pending'],
          [d2, theirs, 'pending'],
        ].sort(),
      );
      assert.deepEqual(await c.store.sso.domainOwners([]), []);
      // one connection cannot remove or change another's claim
      await c.store.sso.removeDomains(tid(theirs), theirs, [d1]);
      await c.store.sso.updateDomainClaim(tid(theirs), mine, d1, { status: 'lost' });
      assert.equal((await c.store.sso.connectionForDomain(d1))?.id, mine);
      // lost: the domain routes nobody, and another may prove it
      await c.store.sso.updateDomainClaim(tid(mine), mine, d1, { status: 'lost' });
      assert.equal(await c.store.sso.connectionForDomain(d1), undefined);
      await c.store.sso.addDomains(tid(theirs), theirs, claims(d1), T0);
      await prove(theirs, d1);
      assert.equal((await c.store.sso.connectionForDomain(d1))?.id, theirs);
    });

    it('domainClaimsDue: claims of every tenant whose next check has come, soonest first', async () => {
      const mine = await connection(a);
      const theirs = await connection(b);
      const [d1, d2] = [domain(), domain()];
      await c.store.sso.addDomains(tid(mine), mine, claims(d1), T0);
      await c.store.sso.addDomains(tid(theirs), theirs, claims(d2), T0);
      await c.store.sso.updateDomainClaim(tid(theirs), theirs, d2, { nextCheckAt: at(30 * MINUTE) });
      const due = (await c.store.sso.domainClaimsDue(at(HOUR), 1000)).filter((x) => x.domain === d1 || x.domain === d2);
      assert.deepEqual(due, [
        { tenantId: b.id, connectionId: theirs, domain: d2 },
        { tenantId: a.id, connectionId: mine, domain: d1 },
      ]);
      assert.ok(!(await c.store.sso.domainClaimsDue(at(HOUR - 1), 1000)).some((x) => x.domain === d1), 'not before its time');
      const claim = await c.store.sso.findDomainClaim(tid(mine), mine, d1);
      assert.deepEqual(claim?.challengeHash && Buffer.from(claim.challengeHash), sha256(`value of ${d1}`));
    });

    it('of one domain proven by many connections at once, one wins', async () => {
      const contenders = await Promise.all(Array.from({ length: RACERS }, (_, i) => connection(i % 2 ? a : b)));
      const d = domain();
      for (const id of contenders) await c.store.sso.addDomains(tid(id), id, claims(d), T0);
      const winner = oneWinsOthersDuplicate(await race(RACERS, (i) => prove(contenders[i]!, d)), 'sso.domainProven');
      assert.equal((await c.store.sso.connectionForDomain(d))?.id, contenders[winner]);
    });

    it('testers and certificates: added to one connection, removed from that connection only', async () => {
      const mine = await connection(a);
      const theirs = await connection(b);
      await c.store.sso.addTesters(tid(mine), mine, ['t1@x.example', 't2@x.example'], T0);
      await c.store.sso.addTesters(tid(mine), mine, ['t1@x.example'], at(1));
      await c.store.sso.addTesters(tid(theirs), theirs, ['t1@x.example'], T0);
      await c.store.sso.addTesters(tid(mine), mine, [], T0);
      await c.store.sso.removeTesters(tid(theirs), theirs, ['t2@x.example']);
      assert.deepEqual(
        (await c.store.sso.findConnection(tid(mine), mine))?.testers,
        ['t1@x.example', 't2@x.example'],
        'adding one again is no change',
      );
      await c.store.sso.removeTesters(tid(mine), mine, ['t1@x.example']);
      await c.store.sso.removeTesters(tid(mine), mine, []);
      assert.deepEqual((await c.store.sso.findConnection(tid(mine), mine))?.testers, ['t2@x.example']);
      assert.deepEqual((await c.store.sso.findConnection(tid(theirs), theirs))?.testers, ['t1@x.example']);

      const cert = certificate(mine);
      const theirCert = certificate(theirs);
      await c.store.sso.insertCertificates(a.id, [cert]);
      await c.store.sso.insertCertificates(b.id, [theirCert]);
      await c.store.sso.insertCertificates(a.id, []);
      await c.store.sso.deleteCertificates(tid(mine), mine, [theirCert.id]);
      assert.deepEqual((await c.store.sso.findConnection(tid(theirs), theirs))?.certificates, [theirCert], 'not through another connection');
      await c.store.sso.deleteCertificates(tid(mine), mine, [cert.id]);
      await c.store.sso.deleteCertificates(tid(mine), mine, []);
      assert.deepEqual((await c.store.sso.findConnection(tid(mine), mine))?.certificates, []);
    });

    it('connectionsToRefresh: those configured by URL, not disabled, not refreshed since the cut, least recent first', async () => {
      const ids = await Promise.all(Array.from({ length: 5 }, () => connection(a)));
      const [never, old, recent, disabled, byHand] = ids as [string, string, string, string, string];
      const url = 'https://idp.example/metadata';
      await c.store.sso.updateConnection(tid(never), never, { metadataUrl: url, status: 'Testing', updatedAt: T0 });
      await c.store.sso.updateConnection(tid(old), old, { metadataUrl: url, status: 'Enabled', metadataRefreshedAt: at(-2 * HOUR), updatedAt: T0 });
      await c.store.sso.updateConnection(tid(recent), recent, { metadataUrl: url, status: 'Enabled', metadataRefreshedAt: T0, updatedAt: T0 });
      await c.store.sso.updateConnection(tid(disabled), disabled, {
        metadataUrl: url,
        status: 'Disabled',
        metadataRefreshedAt: at(-2 * HOUR),
        updatedAt: T0,
      });
      await c.store.sso.updateConnection(tid(byHand), byHand, { status: 'Testing', signInEndpoint: 'https://idp.example/sso', updatedAt: T0 });
      const due = (await c.store.sso.connectionsToRefresh(at(-HOUR), 10)).map((x) => x.id);
      assert.deepEqual(due, [old, never]);
      assert.deepEqual(
        (await c.store.sso.connectionsToRefresh(at(-HOUR), 1)).map((x) => x.id),
        [old],
      );
    });

    it('SAML requests: open to their own connection until answered or expired; answered once, taken once', async () => {
      const mine = await connection(a);
      const theirs = await connection(b);
      const users = [await newUser(c.store, a.id), await newUser(c.store, b.id)];
      const r = request(mine);
      await c.store.sso.insertSamlRequest(r);
      const open = await c.store.sso.findOpenSamlRequest(mine, r.id, T0);
      assert.deepEqual(open && { ...open, sessionIdHash: Buffer.from(open.sessionIdHash) }, r);
      assert.equal(await c.store.sso.findOpenSamlRequest(theirs, r.id, T0), undefined, 'not through another connection');
      assert.equal(await c.store.sso.findOpenSamlRequest(mine, r.id, r.expiresAt), undefined, 'expired');
      const ticket = (i: number) => sha256(`${r.id} ticket ${i}`);
      const answered = fulfilled(await race(RACERS, (i) => c.store.sso.completeSamlRequest(r.id, users[i % 2]!.id, ticket(i), at(2 * MINUTE))));
      assert.equal(trues(answered), 1);
      const w = answered.indexOf(true);
      assert.equal(await c.store.sso.findOpenSamlRequest(mine, r.id, T0), undefined, 'answered');
      assert.equal(await c.store.sso.takeCompletedSamlRequest(ticket((w + 1) % RACERS), T0), undefined, 'a loser’s ticket');
      const taken = fulfilled(await race(RACERS, () => c.store.sso.takeCompletedSamlRequest(ticket(w), at(MINUTE))));
      const got = taken.filter((x) => x !== undefined);
      assert.equal(got.length, 1, 'one browser finishes');
      assert.deepEqual(
        { ...got[0], sessionIdHash: Buffer.from(got[0]!.sessionIdHash) },
        {
          connectionId: mine,
          sessionIdHash: Buffer.from(r.sessionIdHash),
          userId: users[w % 2]!.id,
        },
      );

      // a test sign-in's request is closed unanswered, once, and only through its own connection
      const tested = request(mine);
      await c.store.sso.insertSamlRequest(tested);
      assert.equal(await c.store.sso.closeSamlRequest(theirs, tested.id), false, 'not through another connection');
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.sso.closeSamlRequest(mine, tested.id)))), 1, 'closed once');
      assert.equal(await c.store.sso.findOpenSamlRequest(mine, tested.id, T0), undefined, 'no longer open');
      assert.equal(await c.store.sso.closeSamlRequest(mine, r.id), false, 'an answered request is not closed');

      const late = request(mine);
      await c.store.sso.insertSamlRequest(late);
      assert.equal(await c.store.sso.completeSamlRequest(late.id, users[0]!.id, sha256(`${late.id} t`), at(2 * MINUTE)), true);
      assert.equal(await c.store.sso.takeCompletedSamlRequest(sha256(`${late.id} t`), at(2 * MINUTE)), undefined, 'an expired ticket');
      assert.equal(await c.store.sso.takeCompletedSamlRequest(sha256(`${late.id} t`), T0), undefined, 'and it is gone');
    });

    it('useAssertion: an assertion id is used once per connection, even replayed many times at once', async () => {
      const mine = await connection(a);
      const theirs = await connection(b);
      assert.equal(trues(fulfilled(await race(RACERS, () => c.store.sso.useAssertion(mine, '_assertion-1', at(HOUR))))), 1);
      assert.equal(await c.store.sso.useAssertion(mine, '_assertion-1', at(HOUR)), false, 'a replay');
      assert.equal(await c.store.sso.useAssertion(theirs, '_assertion-1', at(HOUR)), true, 'another IdP’s id space');
    });

    it('identities: a NameID is known per connection; touching one stamps that one only', async () => {
      const mine = await connection(a);
      const theirs = await connection(b);
      const u = await newUser(c.store, a.id);
      const v = await newUser(c.store, b.id);
      await c.store.sso.insertIdentity(mine, 'person@idp', u.id, T0);
      await c.store.sso.insertIdentity(theirs, 'person@idp', v.id, T0);
      assert.deepEqual(await c.store.sso.findIdentity(mine, 'person@idp'), { userId: u.id });
      assert.deepEqual(await c.store.sso.findIdentity(theirs, 'person@idp'), { userId: v.id });
      assert.equal(await c.store.sso.findIdentity(mine, 'Person@idp'), undefined, 'the NameID whole, as sent');
      assert.equal((await c.store.users.findUser(u.id))?.ssoSignIn, true);
      await c.store.sso.touchIdentity(mine, 'person@idp', at(HOUR));
      const stamps = await sql<{ connection_id: string; last_sign_in_at: Date }>`
        select connection_id, last_sign_in_at from sso_identities where name_id = 'person@idp' and connection_id in (${mine}, ${theirs})`.execute(
        c.db.kysely,
      );
      assert.deepEqual(Object.fromEntries(stamps.rows.map((r) => [r.connection_id, new Date(r.last_sign_in_at).toISOString()])), {
        [mine]: at(HOUR).toISOString(),
        [theirs]: T0.toISOString(),
      });
    });

    it('deleteConnection deletes the connection with everything of it, and nothing of another', async () => {
      const gone = await connection(a);
      const kept = await connection(a);
      const u = await newUser(c.store, a.id);
      const d = domain();
      await c.store.sso.addDomains(tid(gone), gone, claims(d), T0);
      await c.store.sso.addDomains(tid(kept), kept, claims(domain()), T0);
      for (const id of [gone, kept]) {
        await c.store.sso.addTesters(tid(id), id, ['t@x.example'], T0);
        await c.store.sso.insertCertificates(a.id, [certificate(id)]);
        await c.store.sso.insertIdentity(id, 'n@idp', u.id, T0);
        await c.store.sso.useAssertion(id, '_a', at(HOUR));
      }
      const r = request(gone);
      await c.store.sso.insertSamlRequest(r);
      const before = await c.store.sso.findConnection(tid(kept), kept);
      await c.store.sso.deleteConnection(tid(gone), gone);
      assert.equal(await c.store.sso.findConnection(tid(gone), gone), undefined);
      assert.equal(await c.store.sso.connectionForDomain(d), undefined);
      assert.equal(await c.store.sso.findIdentity(gone, 'n@idp'), undefined);
      assert.equal(await c.store.sso.findOpenSamlRequest(gone, r.id, T0), undefined);
      assert.deepEqual(await c.store.sso.findConnection(tid(kept), kept), before);
      assert.deepEqual(await c.store.sso.findIdentity(kept, 'n@idp'), { userId: u.id });
      assert.equal(await c.store.sso.useAssertion(kept, '_a', at(HOUR)), false, 'the other’s used assertions stay');
      // its domain may be claimed again
      await c.store.sso.addDomains(tid(kept), kept, claims(d), T0);
    });

    it('purgeExpired forgets expired requests and used assertions, and counts them', async () => {
      const id = await connection(a);
      const day = 24 * HOUR;
      await c.store.sso.purgeExpired(at(day));
      await c.store.sso.insertSamlRequest(request(id, { expiresAt: at(day + MINUTE) }));
      const open = request(id, { expiresAt: at(day + 2 * MINUTE) });
      await c.store.sso.insertSamlRequest(open);
      await c.store.sso.useAssertion(id, '_expired', at(day + MINUTE));
      await c.store.sso.useAssertion(id, '_kept', at(day + 2 * MINUTE));
      assert.equal(await c.store.sso.purgeExpired(at(day + MINUTE - 1)), 0);
      assert.equal(await c.store.sso.purgeExpired(at(day + MINUTE)), 2, 'those expiring at the cut, too');
      assert.ok(await c.store.sso.findOpenSamlRequest(id, open.id, at(day + MINUTE)));
      assert.equal(await c.store.sso.useAssertion(id, '_kept', at(day + 2 * MINUTE)), false, 'still remembered');
      assert.equal(await c.store.sso.useAssertion(id, '_expired', at(day + 2 * MINUTE)), true, 'forgotten');
    });
  });
}
