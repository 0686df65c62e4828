// Nested lists of the tenants query (labels, environments, services, subscriptions, child tenants
// and their labels) are loaded in batches: the number of SQL statements one request runs does not
// grow with the number of tenants in the page (no N+1).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { ROLE_IDS } from '../../src/access/roles.js';
import { type Response, startTestApp, type TestApp } from '../helpers/app.js';
import { openTestDb } from '../helpers/db.js';
import { engines } from '../helpers/engines.js';
import { clientWithRoles } from '../helpers/seed.js';
import { createTenant, tq } from '../helpers/tenants.js';

/** Counts every statement the service sends through Kysely (and remembers what kind it was). */
class StatementCounter implements KyselyPlugin {
  statements: string[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    type Table = { table?: { identifier?: { name?: string } } };
    const node = args.node as { kind: string; from?: { froms?: (Table & { node?: Table })[] } };
    const from = node.from?.froms?.[0];
    const table = (from?.table ?? from?.node?.table)?.identifier?.name;
    this.statements.push(table ? `${node.kind} ${table}` : node.kind);
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}

const NESTED = `query($q: TenantsQuery!) {
  tenants(tenantsQuery: $q) {
    count totalCount hasMore cursorPos
    results {
      id name
      labels { name value }
      environments { name enabled }
      services { id name }
      partnership { parent is_partner subscriptions { id name } child_tenants { id labels { name } } }
    }
  }
}`;

/** The most statements one nested tenants request may take, however many tenants it returns. */
const MAX_STATEMENTS = 12;

for (const engine of engines()) {
  describe(`tenants: nested lists without N+1 (${engine})`, () => {
    let t: TestApp;
    const counter = new StatementCounter();
    let small: string; // a partner whose subtree holds 5 tenants
    let big: string; // a partner whose subtree holds 30 tenants

    before(async () => {
      const db = await openTestDb(engine);
      t = await startTestApp({ engine, db: { ...db, kysely: db.kysely.withPlugin(counter) } });
      const root = await t.rootToken();
      const ok = async (query: string, variables: Record<string, unknown>) => {
        const res = await tq(t, root, query, variables);
        assert.equal(res.body.errors, undefined, res.text);
        return res.body.data;
      };
      const service = (await ok(`mutation($s: InputService!) { createService(service_input: $s) { id } }`, { s: { name: 'Platform' } })).createService
        .id;

      /** a partner, `nested` partners under it, and `children` tenants spread over them: 1 + nested + children tenants */
      const subtree = async (name: string, nested: number, children: number) => {
        const partner = await createTenant(t, '1', {
          name,
          isPartner: true,
          environments: ['echo', 'pilot'],
          labels: [{ name: 'kind', value: 'partner' }],
        });
        const sub = (
          await ok(`mutation($s: InputPartnerSubscription!) { createPartnerSubscription(subscription_input: $s) { id } }`, {
            s: { service_id: service, name: `${name} plan`, partner_tenant_id: partner },
          })
        ).createPartnerSubscription.id;
        const parents = [partner];
        for (let i = 0; i < nested; i++) {
          parents.push(await createTenant(t, partner, { name: `${name} nested ${i}`, isPartner: true, labels: [{ name: 'kind', value: 'nested' }] }));
        }
        for (let i = 0; i < children; i++) {
          const child = await createTenant(t, parents[i % parents.length]!, {
            name: `${name} child ${i}`,
            environments: ['echo', 'pilot'],
            labels: [
              { name: 'team', value: String(i) },
              { name: 'cost_center', value: String(100 + i), owner_partner_tenant_id: partner },
            ].slice(0, parents[i % parents.length] === partner ? 1 : 2),
          });
          await ok(`mutation($t: ID!, $s: ID!) { assignSubscription(tenant_id: $t, subscription_id: $s) { id } }`, { t: child, s: sub });
        }
        return partner;
      };
      small = await subtree('Small', 1, 3);
      big = await subtree('Big', 4, 25);
    });
    after(() => t?.close());

    /** The statements one request runs (after a warm-up of the same request). */
    const measure = async (token: string, q: Record<string, unknown>) => {
      let res: Awaited<ReturnType<typeof tq>>;
      let statements: string[];
      for (let attempt = 1; ; attempt++) {
        await tq(t, token, NESTED, { q }); // warm-up: caches of keys, principals, parsed documents
        const heard = t.db.changes?.generation;
        counter.statements = [];
        res = await tq(t, token, NESTED, { q });
        statements = counter.statements;
        counter.statements = [];
        // a change heard meanwhile voids the authentication caches (on PostgreSQL, an earlier
        // test's write comes back as a NOTIFY whenever the listening connection hears it), and
        // while changes may go unheard (the listening connection not yet, or no longer, up) the
        // key ring and the revoked tokens are read again every half second: a request that read
        // them is measured again (what this file counts is the nested lists' statements)
        const reloaded = statements.some((s) => / (signing_keys|revoked_tokens)$/.test(s));
        if ((t.db.changes?.generation === heard && !reloaded) || attempt === 3) break;
      }
      assert.equal(res.body.errors, undefined, res.text);
      return { page: res.body.data.tenants, statements };
    };

    const assertLoaded = (page: any, tenants: number) => {
      assert.equal(page.count, tenants);
      assert.equal(page.results.length, tenants);
      for (const r of page.results) {
        assert.ok(r.labels.length >= 1, `labels of ${r.id}`);
        assert.ok(r.environments.length >= 1, `environments of ${r.id}`);
        if (r.partnership.is_partner) {
          assert.ok(r.partnership.child_tenants.length >= 1, `children of ${r.id}`);
          for (const c of r.partnership.child_tenants) assert.ok(c.labels.length >= 1, `labels of child ${c.id}`);
        } else {
          assert.deepEqual(r.environments.map((e: { name: string }) => e.name).sort(), ['echo', 'pilot']);
          assert.equal(r.services.length, 1, `services of ${r.id}`);
          assert.equal(r.partnership.subscriptions.length, 1, `subscriptions of ${r.id}`);
        }
      }
    };

    it('one request over 5 tenants and over 30 tenants runs the same, small number of statements', async () => {
      const root = await t.rootToken();
      const five = await measure(root, { maxResults: 50, pageNum: 1, forHierarchies: [small] });
      const thirty = await measure(root, { maxResults: 50, pageNum: 1, forHierarchies: [big] });
      assertLoaded(five.page, 5);
      assertLoaded(thirty.page, 30);
      assert.equal(thirty.page.totalCount, 30);
      assert.equal(
        thirty.statements.length,
        five.statements.length,
        `5 tenants: ${five.statements.join(', ')}\n30 tenants: ${thirty.statements.join(', ')}`,
      );
      assert.ok(thirty.statements.length <= MAX_STATEMENTS, `${thirty.statements.length} statements: ${thirty.statements.join(', ')}`);
    });

    it('the nested data is the data created: labels, subscriptions and visible children', async () => {
      const root = await t.rootToken();
      const { page } = await measure(root, { maxResults: 50, forHierarchies: [small], orderBy: 'Name' });
      const byName = new Map(page.results.map((r: any) => [r.name, r]));
      const partner = byName.get('Small') as any;
      assert.deepEqual(partner.labels, [{ name: 'kind', value: 'partner' }]);
      assert.deepEqual(
        partner.partnership.child_tenants.map((c: any) => c.id).sort(),
        page.results
          .filter((r: any) => r.partnership.parent === small)
          .map((r: any) => r.id)
          .sort(),
      );
      const child = byName.get('Small child 1') as any; // under the nested partner: two labels
      assert.deepEqual(child.labels.map((l: any) => l.name).sort(), ['cost_center', 'team']);
      assert.deepEqual(
        child.partnership.subscriptions.map((s: any) => s.name),
        ['Small plan'],
      );
      assert.deepEqual(
        child.services.map((s: any) => s.name),
        ['Platform'],
      );
    });

    it('the same holds for a partner Administrator (visibility applied to every nested list)', async () => {
      const smallAdmin = await clientWithRoles(t, small, [ROLE_IDS.Administrator]);
      const bigAdmin = await clientWithRoles(t, big, [ROLE_IDS.Administrator]);
      const five = await measure(smallAdmin.token, { maxResults: 50 });
      const thirty = await measure(bigAdmin.token, { maxResults: 50 });
      assertLoaded(five.page, 5);
      assertLoaded(thirty.page, 30);
      assert.equal(
        thirty.statements.length,
        five.statements.length,
        `5 tenants: ${five.statements.join(', ')}\n30 tenants: ${thirty.statements.join(', ')}`,
      );
      assert.ok(thirty.statements.length <= MAX_STATEMENTS, `${thirty.statements.length} statements: ${thirty.statements.join(', ')}`);
    });

    it('callers who see one tenant differently, asking the same at once many times, each get what they get alone (no loader or cache shared)', async () => {
      // Support staff see `small` and one of its children (support on there), not the others;
      // small's Administrator sees all of its subtree; big's Administrator none of it
      const supportChild = (
        await sql<{ id: string }>`select id::text as id from tenants where parent_id = ${small} and not is_partner order by id limit 1`.execute(
          t.db.kysely,
        )
      ).rows[0]!.id;
      await sql`update tenants set support_enabled = true where id in (${small}, ${supportChild})`.execute(t.db.kysely);
      try {
        const staff = await clientWithRoles(t, '1', [ROLE_IDS.Support]);
        const smallAdmin = await clientWithRoles(t, small, [ROLE_IDS.Administrator]);
        const bigAdmin = await clientWithRoles(t, big, [ROLE_IDS.Administrator]);
        // the same documents for everyone, naming both partners
        const tenants = (token: string) => tq(t, token, NESTED, { q: { maxResults: 50, forHierarchies: [small, big] } });
        const clients = (token: string) =>
          t.gql(token, 'query($ids: [ID]) { clients(tenantIDs: $ids) { id client_id tenant_id roles } }', { ids: [small, big] });
        const answer = async (res: Promise<Response>) => {
          const r = await res;
          assert.equal(r.body.errors, undefined, r.text);
          return r.body.data;
        };
        const callers = [staff.token, smallAdmin.token, bigAdmin.token];
        const alone = [];
        for (const token of callers) alone.push({ tenants: await answer(tenants(token)), clients: await answer(clients(token)) });
        assert.deepEqual(
          alone.map((a) => a.tenants.tenants.count),
          [2, 5, 30],
        );
        const childrenOfSmall = alone.map((a) =>
          a.tenants.tenants.results.find((r: { id: string }) => r.id === small)?.partnership.child_tenants.map((c: { id: string }) => c.id),
        );
        assert.deepEqual(childrenOfSmall[0], [supportChild], 'Support staff see only the child whose support is on');
        assert.ok(childrenOfSmall[1]!.length > 1, "small's Administrator sees all its children");
        assert.deepEqual(
          alone.map((a) => [...new Set(a.clients.clients.map((c: { tenant_id: string }) => c.tenant_id))]),
          [[small], [small], [big]],
        );
        // (on PostgreSQL the requests run side by side; on PGlite one connection mostly takes them in turn)
        for (let round = 0; round < 6; round++) {
          // every caller's two queries twice, interleaved, in an order that changes each round
          const order = [0, 1, 2].map((i) => (i + round) % 3);
          const asked = [...order, ...[...order].reverse()].flatMap((i) => [
            { i, what: 'tenants' as const, res: answer(tenants(callers[i]!)) },
            { i, what: 'clients' as const, res: answer(clients(callers[i]!)) },
          ]);
          const answers = await Promise.all(asked.map((a) => a.res));
          for (const [k, a] of asked.entries()) assert.deepEqual(answers[k], alone[a.i]![a.what], `round ${round}: caller ${a.i}'s ${a.what}`);
        }
      } finally {
        await sql`update tenants set support_enabled = false where id in (${small}, ${supportChild})`.execute(t.db.kysely);
      }
    });

    it('when the children are not in the page, their labels still come in one statement', async () => {
      const root = await t.rootToken();
      // only the partners: their children (3 and 25) are loaded through child_tenants alone
      const fewChildren = await measure(root, { maxResults: 50, forHierarchies: [small], isPartner: true });
      const manyChildren = await measure(root, { maxResults: 50, forHierarchies: [big], isPartner: true });
      assert.equal(fewChildren.page.count, 2);
      assert.equal(manyChildren.page.count, 5);
      const children = manyChildren.page.results.flatMap((r: any) => r.partnership.child_tenants);
      assert.equal(children.filter((c: any) => c.labels.length > 0).length, 29, 'every child tenant of the partners, with its labels');
      assert.equal(
        manyChildren.statements.length,
        fewChildren.statements.length,
        `few: ${fewChildren.statements.join(', ')}\nmany: ${manyChildren.statements.join(', ')}`,
      );
      assert.ok(manyChildren.statements.length <= MAX_STATEMENTS, manyChildren.statements.join(', '));
    });

    it('every page of a cursor walk stays within the bound', async () => {
      const root = await t.rootToken();
      let cursor: string | undefined;
      let seen = 0;
      for (let i = 0; i < 10; i++) {
        const { page, statements } = await measure(root, { maxResults: 7, forHierarchies: [big], ...(cursor ? { cursorPos: cursor } : {}) });
        assert.ok(statements.length <= MAX_STATEMENTS, `page ${i + 1}: ${statements.join(', ')}`);
        if (cursor) assert.equal(page.totalCount, null);
        seen += page.count;
        cursor = page.cursorPos;
        if (!page.hasMore) break;
      }
      assert.equal(seen, 30);
    });
  });
}
