// `gatehouse sso disable | release-domain` (src/cli/commands/sso.ts), on both engines: through the
// SSO service's operator use cases, each change an audit event of the connection's tenant by the
// operator; the command line's refusals say what to write instead.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runSsoCommand, ssoCommandLine } from '../../src/cli/commands/sso.js';
import { UsageError } from '../../src/cli/usage-error.js';
import { AppError } from '../../src/errors.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { markDomainProven } from '../helpers/sso-domains.js';
import { createTenant, tq } from '../helpers/tenants.js';

describe('gatehouse sso: the command line', () => {
  it('reads disable --connection and release-domain DOMAIN; refuses the rest naming what to write', () => {
    assert.deepEqual(ssoCommandLine(['disable', '--connection', 'abc']), { action: 'disable', connection: 'abc' });
    assert.deepEqual(ssoCommandLine(['release-domain', 'example.com']), { action: 'release-domain', domain: 'example.com' });
    const cases: [string[], RegExp][] = [
      [['disable'], /--connection is required/],
      [['release-domain'], /takes one domain/],
      [['release-domain', 'a.com', '--connection', 'x'], /takes a domain, not --connection/],
      [['enable'], /unknown action "enable": use disable or release-domain/],
      [[], /no action given/],
    ];
    for (const [args, message] of cases)
      assert.throws(
        () => ssoCommandLine(args),
        (e: Error) => e instanceof UsageError && message.test(e.message),
        args.join(' '),
      );
  });
});

for (const engine of engines()) {
  describe(`gatehouse sso (${engine})`, () => {
    let t: TestApp;
    let tenant: string;
    before(async () => {
      t = await startTestApp({ engine });
      tenant = await createTenant(t, '1');
    });
    after(() => t.close());

    const connection = async (domains: string[]) => {
      const res = await tq(
        t,
        await t.rootToken(),
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
        { c: { name: `sso-${randomUUID().slice(0, 8)}`, type: 'saml', domains } },
        tenant,
      );
      assert.equal(res.body.errors, undefined, res.text);
      return res.body.data.createSSOConnection.id as string;
    };
    const operatorEvents = (id: string) =>
      t.db.kysely.selectFrom('audit_events').selectAll().where('target_id', '=', id).where('actor_kind', '=', 'operator').execute();
    const sso = () => t.service.services.sso;

    it('disable: the connection is Disabled, with an event by the operator in its tenant; again: nothing changes', async () => {
      const id = await connection([`${randomUUID().slice(0, 8)}.test`]);
      assert.match(
        await runSsoCommand(sso(), { action: 'disable', connection: id }, { kind: 'operator', id: 'alice' }),
        /^disabled SSO connection .* of tenant \d+/,
      );
      const row = await t.db.kysely.selectFrom('sso_connections').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'Disabled');
      assert.match(
        await runSsoCommand(sso(), { action: 'disable', connection: id }, { kind: 'operator', id: 'alice' }),
        /was disabled already: nothing changed/,
      );
      const events = await operatorEvents(id);
      assert.equal(events.length, 1);
      assert.deepEqual([events[0]!.actor_id, String(events[0]!.tenant_id), events[0]!.action], ['alice', tenant, 'sso.updated']);
      await assert.rejects(
        runSsoCommand(sso(), { action: 'disable', connection: randomUUID() }, { kind: 'operator', id: 'alice' }),
        (e: Error) => e instanceof AppError && e.code === 'NOT_FOUND' && /no SSO connection/.test(e.message),
      );
    });

    it("release-domain: the domain leaves its connection (another tenant may claim it), a connection's only domain stays", async () => {
      const a = `${randomUUID().slice(0, 8)}.test`;
      const b = `${randomUUID().slice(0, 8)}.test`;
      const id = await connection([a, b]);
      assert.match(
        await runSsoCommand(sso(), { action: 'release-domain', domain: a.toUpperCase() }, { kind: 'operator', id: 'bob' }),
        new RegExp(`released ${a} .* it serves ${b}`),
      );
      const domains = await t.db.kysely.selectFrom('sso_connection_domains').select('domain').where('connection_id', '=', id).execute();
      assert.deepEqual(
        domains.map((d) => d.domain),
        [b],
      );
      await assert.rejects(
        runSsoCommand(sso(), { action: 'release-domain', domain: b }, { kind: 'operator', id: 'bob' }),
        (e: Error) => e instanceof AppError && e.code === 'BAD_USER_INPUT' && /only domain of connection/.test(e.message),
      );
      await assert.rejects(
        runSsoCommand(sso(), { action: 'release-domain', domain: a }, { kind: 'operator', id: 'bob' }),
        (e: Error) => e instanceof AppError && e.code === 'NOT_FOUND',
      );
      const events = await operatorEvents(id);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.actor_id, 'bob');
      // another tenant claims the released domain
      const other = await createTenant(t, '1');
      const res = await tq(
        t,
        await t.rootToken(),
        'mutation($c: NewSSOConnectionInput!) { createSSOConnection(newConnection: $c) { id } }',
        { c: { name: 'claims-it', type: 'saml', domains: [a] } },
        other,
      );
      assert.equal(res.body.errors, undefined, res.text);
    });

    it('release-domain with several claims: the proven one is released; a domain only claimed, pending, by several is not', async () => {
      const d = `${randomUUID().slice(0, 8)}.test`;
      const keep = `${randomUUID().slice(0, 8)}.test`;
      const squatter = await connection([d, keep]);
      const owner = await connection([d, `${randomUUID().slice(0, 8)}.test`]);
      await assert.rejects(
        runSsoCommand(sso(), { action: 'release-domain', domain: d }, { kind: 'operator', id: 'bob' }),
        (e: Error) => e instanceof AppError && e.code === 'BAD_USER_INPUT' && /claimed, not proven, by 2 connections/.test(e.message),
      );
      await markDomainProven(t, owner, d);
      assert.match(await runSsoCommand(sso(), { action: 'release-domain', domain: d }, { kind: 'operator', id: 'bob' }), new RegExp(`released ${d}`));
      const claims = await t.db.kysely.selectFrom('sso_connection_domains').select('connection_id').where('domain', '=', d).execute();
      assert.deepEqual(
        claims.map((c) => c.connection_id),
        [squatter],
        'the pending claim stays',
      );
    });
  });
}
