// Introspection (CONTRACT.md: GATEHOUSE_GRAPHQL_INTROSPECTION, default true): authenticated
// callers can read either schema with the standard introspection query, as GraphiQL, codegen and
// gql.tada send it, and what they read is the SDL; hand-made deep introspection is still refused.
// With the setting false, introspection and "did you mean" hints are both gone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildClientSchema, buildSchema, getIntrospectionQuery, printSchema, type IntrospectionQuery } from 'graphql';
import { CREDENTIAL_SDL_URL } from '../../src/graphql/credential/schema.js';
import { loadSdl } from '../../src/graphql/build-schema.js';
import { MAX_INTROSPECTION_DEPTH } from '../../src/graphql/limits.js';
import { TENANT_SDL_URL } from '../../src/graphql/tenant/schema.js';
import { startTestApp, type Response, type TestApp } from '../helpers/app.js';
import { transportEngines } from '../helpers/engines.js';

const INTERFACES = [
  { name: 'credential', path: '/graphql', sdl: CREDENTIAL_SDL_URL, typo: '{ clinets { id } }', hint: /Did you mean "clients"\?/ },
  { name: 'tenant', path: '/public/query', sdl: TENANT_SDL_URL, typo: '{ tenant { count } }', hint: /Did you mean "tenants"\?/ },
];

const ALL_OPTIONS = {
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
  oneOf: true,
};

/** `{ __type(name: "Query") { ofType { ofType … { name } } } }` with this selection depth. */
function nestedTypeQuery(depth: number): string {
  const k = depth - 2; // __type + k x ofType + name
  return `{ __type(name: "Query") ${'{ ofType '.repeat(k)}{ name }${' }'.repeat(k)} }`;
}

/** Introspection that multiplies: every type's fields' types' fields' types' fields. */
const FIELDS_OF_FIELDS = '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }';

// an enum argument spelled wrong, in a variable: graphql-js hints at the right value while coercing
const ENUM_TYPO = {
  credential: undefined,
  tenant: {
    query: 'query($d: OrderDir) { tenants(tenantsQuery: {orderDir: $d}) { count } }',
    variables: { d: 'ascc' },
    hint: /Did you mean the enum value "asc"\?/,
  },
};

function assertRefused(res: Response, message: RegExp): void {
  assert.equal(res.body.data, undefined, res.text);
  assert.ok(res.body.errors?.length > 0, res.text);
  for (const e of res.body.errors) assert.equal(e.extensions.code, 'BAD_USER_INPUT', res.text);
  assert.ok(
    res.body.errors.some((e: { message: string }) => message.test(e.message)),
    `${message}: ${res.text}`,
  );
}

for (const engine of transportEngines()) {
  describe(`introspection on, the default (${engine})`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine });
      token = await t.rootToken();
    });
    after(() => t.close());

    for (const { name, path, sdl, typo, hint } of INTERFACES) {
      it(`${name}: answers the standard introspection query, and what it answers is the SDL`, async () => {
        for (const options of [undefined, ALL_OPTIONS]) {
          const res = await t.gql(token, getIntrospectionQuery(options), undefined, { path });
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.errors, undefined, res.text);
          const served = buildClientSchema(res.body.data as IntrospectionQuery);
          assert.equal(printSchema(served), printSchema(buildSchema(loadSdl(sdl))), `${name} ${options ? 'with every option' : ''}`);
        }
      });

      it(`${name}: refuses introspection without a token`, async () => {
        const res = await t.gql(undefined, getIntrospectionQuery(), undefined, { path });
        assert.equal(res.status, 401, res.text);
        assert.equal(res.body.data, undefined);
      });

      it(`${name}: still refuses introspection built to multiply or to nest without end`, async () => {
        assertRefused(await t.gql(token, FIELDS_OF_FIELDS, undefined, { path }), /Maximum introspection depth exceeded/);
        const at = await t.gql(token, nestedTypeQuery(MAX_INTROSPECTION_DEPTH), undefined, { path });
        assert.equal(at.body.errors, undefined, at.text);
        assertRefused(
          await t.gql(token, nestedTypeQuery(MAX_INTROSPECTION_DEPTH + 1), undefined, { path }),
          new RegExp(`introspection selection is nested deeper than ${MAX_INTROSPECTION_DEPTH} levels`),
        );
        // the same depth carried by fragments
        const k = MAX_INTROSPECTION_DEPTH - 1;
        const frags = Array.from({ length: k }, (_, i) => `fragment T${i} on __Type { ofType { ${i + 1 < k ? `...T${i + 1}` : 'name'} } }`).join(' ');
        assertRefused(await t.gql(token, `{ __type(name: "Query") { ...T0 } } ${frags}`, undefined, { path }), /nested deeper than/);
        // three full introspections at once select more fields than any document may
        const standard = getIntrospectionQuery(ALL_OPTIONS);
        const triple = `{ a: __schema { ...S } b: __schema { ...S } c: __schema { ...S } }
          fragment S on __Schema { types { ...FullType } directives { name args { ...InputValue } } }
          ${standard.slice(standard.indexOf('fragment FullType'))}`;
        assertRefused(await t.gql(token, triple, undefined, { path }), /more than 500 fields/);
      });

      it(`${name}: keeps "did you mean" hints`, async () => {
        const res = await t.gql(token, typo, undefined, { path });
        assertRefused(res, hint);
        const enumTypo = ENUM_TYPO[name as keyof typeof ENUM_TYPO];
        if (enumTypo) assertRefused(await t.gql(token, enumTypo.query, enumTypo.variables, { path }), enumTypo.hint);
      });
    }
  });

  describe(`introspection off: GATEHOUSE_GRAPHQL_INTROSPECTION=false (${engine})`, () => {
    let t: TestApp;
    let token: string;
    before(async () => {
      t = await startTestApp({ engine, env: { GATEHOUSE_GRAPHQL_INTROSPECTION: 'false' } });
      token = await t.rootToken();
    });
    after(() => t.close());

    for (const { name, path, typo } of INTERFACES) {
      it(`${name}: refuses every introspection query and keeps __typename`, async () => {
        for (const query of [
          getIntrospectionQuery(),
          getIntrospectionQuery(ALL_OPTIONS),
          '{ __schema { types { name } } }',
          '{ __type(name: "Query") { name fields { name } } }',
        ]) {
          const res = await t.gql(token, query, undefined, { path });
          assertRefused(res, /introspection/i);
          assert.doesNotMatch(res.text, /client_secret|TenantCreateInput/);
        }
        const typename = await t.gql(token, '{ __typename }', undefined, { path });
        assert.deepEqual(typename.body, { data: { __typename: 'Query' } });
      });

      it(`${name}: leaves "did you mean" hints out of every error`, async () => {
        const queries = [typo, '{ __typename naem }', 'query($n: Strin) { __typename }'];
        for (const query of queries) {
          const res = await t.gql(token, query, undefined, { path });
          assertRefused(res, /./);
          assert.doesNotMatch(res.text, /did you mean/i, query);
        }
        const enumTypo = ENUM_TYPO[name as keyof typeof ENUM_TYPO];
        if (enumTypo) {
          const res = await t.gql(token, enumTypo.query, enumTypo.variables, { path });
          assertRefused(res, /"ascc"/);
          assert.doesNotMatch(res.text, /did you mean/i);
        }
      });
    }
  });
}
