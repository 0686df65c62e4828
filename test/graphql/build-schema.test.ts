// buildExecutableSchema attaches a resolver map to the schema of an SDL text. The generated types
// check the maps of the two interfaces at compile time; what a map names that the schema lacks is
// refused at run time too, when the schema is built.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { graphqlSync, GraphQLScalarType } from 'graphql';
import { buildExecutableSchema } from '../../src/graphql/build-schema.js';
import { credentialSchema } from '../../src/graphql/credential/schema.js';
import { TimeScalar } from '../../src/graphql/scalars.js';
import { tenantSchema } from '../../src/graphql/tenant/schema.js';

const SDL = 'scalar Time type Query { now: Time, greeting(name: String!): String } input In { a: Int } enum E { A }';

describe('buildExecutableSchema', () => {
  it('attaches field resolvers and scalar implementations', () => {
    const schema = buildExecutableSchema(SDL, {
      Time: TimeScalar,
      Query: { now: () => new Date('2026-01-31T12:00:00Z'), greeting: (_: unknown, args: { name: string }) => `hello ${args.name}` },
    });
    const result = graphqlSync({ schema, source: '{ now greeting(name: "you") }' });
    assert.deepEqual(JSON.parse(JSON.stringify(result)), { data: { now: '2026-01-31T12:00:00.000Z', greeting: 'hello you' } });
  });

  it('refuses a map naming a type or field the schema lacks, or a resolver of the wrong kind', () => {
    const cases: [Parameters<typeof buildExecutableSchema>[1], RegExp][] = [
      [{ Mutation: {} }, /a type the schema lacks: Mutation/],
      [{ Query: { later: () => null } }, /a field the schema lacks: Query\.later/],
      [{ Query: TimeScalar }, /Query is not a scalar/],
      [{ Time: { now: () => null } }, /Time is not an object type/],
      [{ In: { a: () => 1 } }, /In is not an object type/],
      [{ E: { A: () => 1 } }, /E is not an object type/],
      [{ Query: { now: 'soon' } }, /the resolver of Query\.now is not a function/],
      [{ Other: new GraphQLScalarType({ name: 'Other' }) }, /a type the schema lacks: Other/],
    ];
    for (const [map, error] of cases) assert.throws(() => buildExecutableSchema(SDL, map), error, JSON.stringify(Object.keys(map)));
  });

  it('builds both interfaces from their SDL files and resolver maps', () => {
    assert.ok(tenantSchema().getQueryType()?.getFields().tenants?.resolve);
    assert.ok(credentialSchema().getMutationType()?.getFields().createClient?.resolve);
  });
});
