// The audit trail people read (docs/operations.md "Audit trail"), on both engines: a mutation's
// event carries the actor's tenant, the outcome, the request id and the address; a refused client
// credential is an event of the client's tenant; auditEvents lists a tenant's events and its
// subtree's to its Administrators (and partners above), filtered and paged by cursor, and never
// another tenant's; no event holds a secret.
import { generateSecret } from '../../src/credentials/secret.js';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ROLE_IDS } from '../../src/access/roles.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles, createClient } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

const EVENTS = `query($f: AuditEventFilter, $after: ID, $first: Int) {
  auditEvents(filter: $f, after: $after, first: $first) {
    events { id occurredAt tenantID actorKind actorID actorTenantID action outcome targetKind targetID details requestID address }
    cursor hasMore
  }
}`;

interface Event {
  id: string;
  tenantID: string;
  actorKind: string;
  actorID: string;
  actorTenantID: string | null;
  action: string;
  outcome: string;
  targetKind: string;
  targetID: string;
  details: string;
  requestID: string | null;
  address: string | null;
}

for (const engine of engines()) {
  describe(`audit trail (${engine})`, () => {
    let t: TestApp;
    let partner: string;
    let child: string;
    let other: string;
    let partnerAdmin: Awaited<ReturnType<typeof clientWithRoles>>;
    let childAdmin: Awaited<ReturnType<typeof clientWithRoles>>;
    let otherAdmin: Awaited<ReturnType<typeof clientWithRoles>>;
    before(async () => {
      t = await startTestApp({ engine });
      partner = await createTenant(t, '1', { isPartner: true });
      child = await createTenant(t, partner);
      other = await createTenant(t, '1');
      partnerAdmin = await clientWithRoles(t, partner, [ROLE_IDS.Administrator]);
      childAdmin = await clientWithRoles(t, child, [ROLE_IDS.Administrator]);
      otherAdmin = await clientWithRoles(t, other, [ROLE_IDS.Administrator]);
    });
    after(() => t.close());

    const events = async (token: string, vars: Record<string, unknown> = {}, tenant?: string) => {
      const res = await tq(t, token, EVENTS, vars, tenant);
      assert.equal(res.status, 200, res.text);
      return res;
    };
    const list = async (token: string, vars: Record<string, unknown> = {}, tenant?: string): Promise<Event[]> => {
      const res = await events(token, vars, tenant);
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.auditEvents.events;
    };

    it("a mutation's event names the actor, its tenant, the outcome, the request id and the address", async () => {
      t.clock.advance(1000);
      const made = await createClient(t, childAdmin.token, 'audited-one', { tenant: child });
      const found = (await list(childAdmin.token, { f: { action: 'client.created' } })).filter((e) => e.targetID === made.id);
      assert.equal(found.length, 1);
      const e = found[0]!;
      assert.equal(e.tenantID, child);
      assert.equal(e.actorKind, 'client');
      assert.equal(e.actorID, childAdmin.id);
      assert.equal(e.actorTenantID, child);
      assert.equal(e.outcome, 'success');
      assert.ok(e.requestID && e.requestID.length > 0, 'a request id');
      assert.ok(e.address && e.address.length > 0, 'an address');
      assert.ok(!e.details.includes(made.secret), 'the secret is not in the event');
    });

    it("a refused client credential is a failure event in the client's tenant, without the secret tried", async () => {
      const victim = await createClient(t, childAdmin.token, 'guessed', { tenant: child });
      // a secret of the right form that is not this client's: someone holds an old or wrong one
      const wrong = generateSecret();
      const res = await t.tokenResponse(victim.clientId, wrong);
      assert.equal(res.status, 401, res.text);
      await t.service.services.credentials.settled();
      const failures = await list(childAdmin.token, { f: { outcome: 'failure', action: 'client.credentials_refused' } });
      const mine = failures.filter((e) => e.targetID === victim.id);
      assert.equal(mine.length, 1);
      assert.equal(mine[0]!.tenantID, child);
      assert.ok(mine[0]!.address, 'the address the guess came from');
      // whoever sent it did not authenticate: not the client
      assert.equal(mine[0]!.actorKind, 'anonymous');
      assert.notEqual(mine[0]!.actorID, victim.id);
      // nowhere in the table: neither the wrong secret nor the right one
      const all = JSON.stringify(await t.db.kysely.selectFrom('audit_events').selectAll().execute());
      for (const secret of [wrong, victim.secret, childAdmin.secret, partnerAdmin.secret])
        assert.ok(!all.includes(secret), 'a secret is in audit_events');
      // a client_id that names no client writes nothing, nor does a mangled secret (a guesser's
      // noise: its checksum fails)
      const before = (await t.db.kysely.selectFrom('audit_events').select('id').execute()).length;
      assert.equal((await t.tokenResponse('no-such-client-0000', wrong)).status, 401);
      assert.equal((await t.tokenResponse(victim.clientId, `${victim.secret.slice(0, -4)}XXXX`)).status, 401);
      await t.service.services.credentials.settled();
      assert.equal((await t.db.kysely.selectFrom('audit_events').select('id').execute()).length, before);
    });

    it("a partner's Administrator sees its subtree's events; a child's only its own; no tenant another's", async () => {
      await createClient(t, otherAdmin.token, 'elsewhere', { tenant: other });
      const partnerSees = await list(partnerAdmin.token, { first: 500 });
      assert.ok(
        partnerSees.some((e) => e.tenantID === child),
        "the partner sees its child's events",
      );
      assert.ok(partnerSees.every((e) => e.tenantID === partner || e.tenantID === child));
      const childSees = await list(childAdmin.token, { first: 500 });
      assert.ok(childSees.length > 0);
      assert.ok(
        childSees.every((e) => e.tenantID === child),
        'a child sees nothing of its partner',
      );
      const otherSees = await list(otherAdmin.token, { first: 500 });
      assert.ok(otherSees.length > 0);
      assert.ok(otherSees.every((e) => e.tenantID === other));
      // asking for another tenant by filter gives nothing; acting in it is refused
      assert.deepEqual(await list(otherAdmin.token, { f: { tenantID: child } }), []);
      const refused = await tq(t, otherAdmin.token, EVENTS, {}, child);
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.errors[0].extensions.code, 'FORBIDDEN');
      // the partner narrows to its child
      const narrowed = await list(partnerAdmin.token, { f: { tenantID: child }, first: 500 });
      assert.ok(narrowed.length > 0 && narrowed.every((e) => e.tenantID === child));
    });

    it('needs Administrator: an Auditor or Analyst of the tenant is FORBIDDEN', async () => {
      for (const role of [ROLE_IDS.Auditor, ROLE_IDS.Analyst]) {
        const c = await clientWithRoles(t, child, [role]);
        const res = await events(c.token);
        assert.equal(res.body.errors?.[0]?.extensions?.code, 'FORBIDDEN', res.text);
        assert.match(res.body.errors[0].message, /read the audit trail/);
      }
    });

    it("a mutation refused for the caller's roles is a refused event the tenant's Administrator reads; a refused read is not", async () => {
      const auditor = await clientWithRoles(t, child, [ROLE_IDS.Auditor]);
      const refused = await t.gql(auditor.token, 'mutation { createClient(name: "not allowed") { client { id } } }');
      assert.equal(refused.body.errors?.[0]?.extensions?.code, 'FORBIDDEN', refused.text);
      const mine = (await list(childAdmin.token, { f: { action: 'authorization.refused', actor: auditor.id } })).filter(
        (e) => e.targetID === 'createClient',
      );
      assert.equal(mine.length, 1);
      const e = mine[0]!;
      assert.equal(e.tenantID, child);
      assert.equal(e.actorKind, 'client');
      assert.equal(e.actorTenantID, child);
      assert.equal(e.outcome, 'refused');
      assert.equal(e.targetKind, 'operation');
      assert.ok(e.requestID && e.address, 'the request id and the address');
      assert.deepEqual(JSON.parse(e.details), { via: 'credential-graphql', operations: ['createClient'], reason: refused.body.errors[0].message });
      // a read the role does not allow writes nothing
      const read = await events(auditor.token);
      assert.equal(read.body.errors?.[0]?.extensions?.code, 'FORBIDDEN');
      assert.deepEqual(
        (await list(childAdmin.token, { f: { action: 'authorization.refused', actor: auditor.id } })).map((x) => x.targetID),
        ['createClient'],
      );
      // the auditor was one more client of the child's this hour: the hour passes, so that the
      // tests after this one have the child's allowance of new clients
      t.clock.advance(3_600_000);
    });

    it('pages newest first by cursor, without losing or repeating an event, and filters by time and actor', async () => {
      const from = new Date(t.clock.now().getTime() + 1);
      for (let i = 0; i < 5; i++) {
        t.clock.advance(1000);
        await createClient(t, childAdmin.token, `paged-${i}`, { tenant: child });
      }
      const f = { from: from.toISOString(), action: 'client.created', actor: childAdmin.id };
      const seen: Event[] = [];
      let after: string | null = null;
      for (let page = 0; page < 10; page++) {
        const res = await events(childAdmin.token, { f, first: 2, ...(after ? { after } : {}) });
        const p = res.body.data.auditEvents;
        seen.push(...p.events);
        after = p.cursor;
        if (!p.hasMore) break;
      }
      assert.deepEqual(
        seen.map((e) => JSON.parse(e.details).name),
        ['paged-4', 'paged-3', 'paged-2', 'paged-1', 'paged-0'],
      );
      assert.equal(new Set(seen.map((e) => e.id)).size, 5);
      // the time range: only the last two seconds
      const recent = await list(childAdmin.token, { f: { ...f, from: new Date(t.clock.now().getTime() - 1000).toISOString() } });
      assert.equal(recent.length, 2);
      // another actor: none of these
      assert.deepEqual(await list(childAdmin.token, { f: { ...f, actor: partnerAdmin.id } }), []);
    });

    it('refuses a bad filter, page size or cursor with words that name it', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ f: { outcome: 'maybe' } }, /filter\.outcome must be one of success, failure, refused/],
        [{ f: { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' } }, /filter\.from is after filter\.to/],
        [{ first: 0 }, /first must be from 1 to 500/],
        [{ after: 'nonsense' }, /after is not a cursor of this list/],
        [{ f: { tenantID: 'abc' } }, /filter\.tenantID must be a tenant id/],
      ];
      for (const [vars, message] of cases) {
        const res = await events(childAdmin.token, vars);
        assert.equal(res.body.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', res.text);
        assert.match(res.body.errors[0].message, message);
      }
    });
  });
}
