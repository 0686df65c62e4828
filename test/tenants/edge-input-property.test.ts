// Dates at the edges of the calendar and cursors a caller crafted: a clear BAD_USER_INPUT, never a
// 5xx, and the two engines answer alike (PGlite used to fail on years 0000 and 10000 where
// PostgreSQL coped). Fixed cases first, then properties over generated inputs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { engines } from '../helpers/engines.js';
import { createTenant, tq } from '../helpers/tenants.js';

const SEARCH = `query($q: TenantsQuery!) { tenants(tenantsQuery: $q) { count cursorPos results { id } } }`;
const UPDATE = `mutation($id: ID!, $u: TenantUpdateInput!) { updateTenant(tenantID: $id, tenantUpdate: $u) { id expires_at } }`;
const SUPPORT = `mutation($id: ID!, $until: Time) { enableTenantSupport(tenantID: $id, until: $until) { id } }`;

const cursor = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString('base64url');
const code = (res: Response): string | undefined => res.body?.errors?.[0]?.extensions?.code;

const EDGE_DATES = [
  '9999-12-31T23:00:00-14:00', // year 10000 in UTC
  '9999-12-31T23:59:59.999-00:01',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+00:01', // year 0 in UTC
  '2026-11-22T10:00:00+15:00', // no such offset
  '+010000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2026-02-29T00:00:00Z',
  '2026-11-22T24:00:00Z',
];

for (const engine of engines()) {
  describe(`dates and cursors at the edges (${engine})`, () => {
    let t: TestApp;
    let root: string;
    let tenant: string;
    before(async () => {
      t = await startTestApp({ engine });
      root = await t.rootToken();
      tenant = await createTenant(t, '1');
    });
    after(() => t.close());

    it('time filters outside years 1-9999 (UTC) are BAD_USER_INPUT on every input that takes a time', async () => {
      for (const value of EDGE_DATES) {
        for (const q of [{ createdTimeFilter: { startTime: value } }, { modifiedTimeFilter: { endTime: value } }]) {
          const res = await tq(t, root, SEARCH, { q });
          assert.equal(code(res), 'BAD_USER_INPUT', `${value}: ${res.text}`);
          assert.ok(res.status < 500);
        }
        const update = await tq(t, root, UPDATE, { id: tenant, u: { expiresAt: value } });
        assert.equal(code(update), 'BAD_USER_INPUT', value);
        assert.match(update.body.errors[0].message, /from year 1 to 9999/, 'the message says which times are accepted');
        assert.equal(code(await tq(t, root, SUPPORT, { id: tenant, until: value })), 'BAD_USER_INPUT', value);
      }
    });

    it('a long non-time is echoed shortened in the message', async () => {
      const res = await tq(t, root, SEARCH, { q: { createdTimeFilter: { startTime: 'x'.repeat(10_000) } } });
      assert.equal(code(res), 'BAD_USER_INPUT');
      assert.ok(res.body.errors[0].message.length < 300, res.body.errors[0].message.slice(0, 120));
    });

    it('the ends of the range are served alike by both engines', async () => {
      for (const [startTime, endTime] of [
        ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z'],
        ['0001-01-01', '9999-12-31T09:59:59.999-14:00'],
      ]) {
        const res = await tq(t, root, SEARCH, { q: { createdTimeFilter: { startTime, endTime }, ids: [tenant] } });
        assert.equal(res.body.errors, undefined, res.text);
        assert.equal(res.body.data.tenants.count, 1);
      }
      const far = await tq(t, root, UPDATE, { id: tenant, u: { expiresAt: '9999-12-31T23:59:59.999Z' } });
      assert.equal(far.body.data.updateTenant.expires_at, '9999-12-31T23:59:59.999Z');
    });

    it('a cursor carrying an out-of-range time, or text the database cannot hold, is BAD_USER_INPUT', async () => {
      const cases: [unknown, string, string][] = [
        [['c1', 'CreatedAt', 'asc', '9999-12-31T23:00:00-14:00', '5'], 'CreatedAt', 'asc'],
        [['c1', 'UpdatedAt', 'desc', '0000-01-01T00:00:00.000Z', '5'], 'UpdatedAt', 'desc'],
        [['c1', 'CreatedAt', 'asc', '+275760-09-13T00:00:00.000Z', '5'], 'CreatedAt', 'asc'],
        [['c1', 'Name', 'asc', 'nul\u0000name', '5'], 'Name', 'asc'],
        [['c1', 'Name', 'asc', 'lone\ud800', '5'], 'Name', 'asc'],
        [['c1', 'Id', 'asc', '99999999999999999999', '5'], 'Id', 'asc'],
        [['c1', 'Name', 'asc', 'x', '99999999999999999999'], 'Name', 'asc'],
      ];
      for (const [parts, orderBy, orderDir] of cases) {
        const res = await tq(t, root, SEARCH, { q: { cursorPos: cursor(parts), orderBy, orderDir } });
        assert.equal(code(res), 'BAD_USER_INPUT', `${JSON.stringify(parts)}: ${res.text}`);
      }
    });

    it('property: no generated date string makes a time filter answer 5xx; every refusal is BAD_USER_INPUT', async () => {
      // the calendar's edges come up often: years 0, 1, 9999, 10000, offsets up to ±16 hours
      const part = (min: number, max: number, width: number, edges: number[]) =>
        fc.oneof(fc.constantFrom(...edges), fc.integer({ min, max })).map((n) => String(n).padStart(width, '0'));
      const dateString = fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .tuple(
              part(0, 10000, 4, [0, 1, 9999, 10000]),
              part(0, 13, 2, [1, 12]),
              part(0, 32, 2, [1, 31]),
              part(0, 25, 2, [0, 23]),
              part(0, 61, 2, [59]),
              part(0, 61, 2, [59]),
              fc.constantFrom('Z', '', '+', '-'),
              part(0, 16, 2, [14]),
              part(0, 60, 2, [0]),
            )
            .map(([y, mo, d, h, mi, s, z, oh, om]) => `${y}-${mo}-${d}T${h}:${mi}:${s}${z === '+' || z === '-' ? `${z}${oh}:${om}` : z}`),
        },
        { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
      );
      await fc.assert(
        fc.asyncProperty(dateString, fc.boolean(), async (value, start) => {
          const res = await tq(t, root, SEARCH, { q: { createdTimeFilter: start ? { startTime: value } : { endTime: value } } });
          assert.ok(res.status < 500, `${value}: ${res.status} ${res.text}`);
          if (res.body.errors) assert.equal(code(res), 'BAD_USER_INPUT', `${value}: ${res.text}`);
        }),
        { numRuns: 200 },
      );
    });

    it('property: no crafted cursor answers 5xx; every refusal is BAD_USER_INPUT', async () => {
      const order = fc.constantFrom('Id', 'CreatedAt', 'UpdatedAt', 'Name');
      const dir = fc.constantFrom('asc', 'desc');
      const value = fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary' }),
        fc.integer(),
        fc.constant(null),
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
      );
      // mostly cursors for the order the query asks (so the value reaches the database), some not
      const query = fc.tuple(order, dir).chain(([orderBy, orderDir]) =>
        fc.record({
          orderBy: fc.constant(orderBy),
          orderDir: fc.constant(orderDir),
          parts: fc.oneof(
            { weight: 4, arbitrary: fc.tuple(fc.constant('c1'), fc.constant(orderBy), fc.constant(orderDir), value, value) },
            { weight: 1, arbitrary: fc.tuple(fc.constant('c1'), order, dir, value, value) },
            { weight: 1, arbitrary: fc.jsonValue() },
          ),
        }),
      );
      await fc.assert(
        fc.asyncProperty(query, async ({ orderBy, orderDir, parts }) => {
          const res = await tq(t, root, SEARCH, { q: { cursorPos: cursor(parts), orderBy, orderDir } });
          assert.ok(res.status < 500, `${JSON.stringify(parts)}: ${res.status} ${res.text}`);
          if (res.body.errors) assert.equal(code(res), 'BAD_USER_INPUT', `${JSON.stringify(parts)}: ${res.text}`);
        }),
        { numRuns: 200 },
      );
    });
  });
}
