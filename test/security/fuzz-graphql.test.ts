// Fuzzing both GraphQL interfaces: every query and mutation field of each schema, called with
// generated variables (of the declared types, but any JSON in them: wrong types, nulls, huge or
// odd strings, nested junk), and generated documents that are mostly not GraphQL at all. Whatever
// comes in: never a 5xx and never an INTERNAL error; a mutation answered with an error (its field
// null) wrote nothing (read back through the row-write counters); no secret (the caller's, or one a
// mutation returned) reaches a log line. The mutations act in a tenant of their own
// (X-Tenant-Context) so that what they do succeed in (a tenant disabled, a client deleted) leaves
// the caller able to go on. fast-check prints the seed and the path of a failing case.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  buildSchema,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';
import { ROOT_CLIENT_SECRET, startTestApp, type TestApp } from '../helpers/app.js';
import { root } from '../helpers/cli.js';
import { engines } from '../helpers/engines.js';
import { countRowWrites, rowWrites } from '../helpers/row-writes.js';
import { createTenant } from '../helpers/tenants.js';

const RUNS = 300;
const INTERFACES = [
  { name: 'tenant', path: '/public/query', schema: 'src/graphql/tenant/schema.graphql' },
  { name: 'credential', path: '/graphql', schema: 'src/graphql/credential/schema.graphql' },
];

/** ids worth trying: the fuzzing tenant's, the caller's home, none, and junk */
let ids: string[] = [];
const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z][a-z0-9 .-]{2,20}$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '%',
      '_',
      '\u0000',
      '<script>',
      "'; drop table tenants; --",
      '../../etc/passwd',
      '1e309',
      '-1',
      '9'.repeat(40),
    ),
  },
  { weight: 1, arbitrary: fc.nat({ max: 5000 }).map((n) => 'y'.repeat(n)) },
);
const junk: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('any'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie('any'), { maxKeys: 3 }),
  ),
})).any;

/** a value for an input type: mostly of the right shape (so that validation lets it through to the
 *  resolvers), sometimes anything at all */
function inputValue(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const right = rightInputValue(type, depth);
  return fc.oneof({ weight: 30, arbitrary: right }, { weight: 1, arbitrary: junk });
}

function rightInputValue(type: GraphQLInputType, depth: number): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return rightInputValue(type.ofType, depth);
  if (isListType(type)) return fc.array(inputValue(type.ofType, depth + 1), { maxLength: 4 });
  if (isEnumType(type)) return fc.constantFrom(...type.getValues().map((v) => v.name));
  if (isInputObjectType(type)) {
    if (depth > 3) return fc.constant({});
    const fields = Object.values(type.getFields());
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, inputValue(f.type, depth + 1)])), {
      requiredKeys: fields.filter((f) => isNonNullType(f.type)).map((f) => f.name),
    });
  }
  if (isScalarType(type)) {
    switch (type.name) {
      case 'ID':
        return fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ids) }, { weight: 2, arbitrary: fc.uuid() }, { weight: 1, arbitrary: text });
      case 'Int':
        return fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.integer());
      case 'Float':
        return fc.double();
      case 'Boolean':
        return fc.boolean();
      case 'Time':
        return fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          text,
        );
      default:
        return text;
    }
  }
  return junk;
}

/** `{ leaf leaf }` of the field's type, or nothing for a scalar */
function selection(field: GraphQLField<unknown, unknown>): string {
  const named = getNamedType(field.type);
  if (!isObjectType(named)) return '';
  const leaves = Object.values(named.getFields())
    .filter((f) => !isObjectType(getNamedType(f.type)) && f.args.length === 0)
    .slice(0, 4)
    .map((f) => f.name);
  return ` { __typename ${leaves.join(' ')} }`;
}

function call(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const args = field.args as readonly GraphQLArgument[];
  const declared = args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const passed = args.map((a) => `${a.name}: $${a.name}`).join(', ');
  return `${kind}${declared ? `(${declared})` : ''} { f: ${field.name}${passed ? `(${passed})` : ''}${selection(field)} }`;
}

/** a generated call of one field of the schema: its document and its variables */
function calls(
  schema: GraphQLSchema,
): fc.Arbitrary<{ kind: 'query' | 'mutation'; field: string; document: string; variables: Record<string, unknown> }> {
  const pick = (kind: 'query' | 'mutation') => {
    const type = kind === 'query' ? schema.getQueryType() : schema.getMutationType();
    return Object.values(type?.getFields() ?? {}).map((field) =>
      fc
        .record(Object.fromEntries(field.args.map((a) => [a.name, inputValue(a.type)])), {
          requiredKeys: field.args.filter((a) => isNonNullType(a.type)).map((a) => a.name),
        })
        .map((variables) => ({ kind, field: field.name, document: call(kind, field), variables })),
    );
  };
  return fc.oneof(...pick('query'), ...pick('mutation'));
}

/** documents that are mostly not GraphQL: tokens of the language in any order, and junk */
const documents = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc
    .array(
      fc.constantFrom(
        '{',
        '}',
        '(',
        ')',
        'query',
        'mutation',
        'f',
        ':',
        '$x',
        '...',
        'on',
        '@skip',
        '"',
        '#',
        '[',
        ']',
        '!',
        '=',
        'fragment',
        'tenants',
        'clients',
      ),
      {
        maxLength: 60,
      },
    )
    .map((tokens) => tokens.join(' ')),
);

for (const engine of engines()) {
  describe(`fuzzing the GraphQL interfaces (${engine})`, () => {
    let t: TestApp;
    let token: string;
    let tenant: string;
    before(async () => {
      t = await startTestApp({ engine });
      await countRowWrites(t.db.kysely);
      token = await t.rootToken();
      tenant = await createTenant(t, '1', { isPartner: true });
      ids = [tenant, await createTenant(t, tenant), '1', '0', '-1', '99999999'];
    });
    after(() => t.close());

    for (const face of INTERFACES) {
      const schema = buildSchema(readFileSync(join(root, face.schema), 'utf8'));
      it(`${face.name} interface: ${RUNS} generated calls of its fields, then junk documents: never a 5xx or INTERNAL, a refused mutation writes nothing, no secret logged`, async () => {
        const returnedSecrets: string[] = [];
        await fc.assert(
          fc.asyncProperty(calls(schema), async (c) => {
            const before = c.kind === 'mutation' ? await rowWrites(t.db.kysely) : undefined;
            const res = await t.gql(token, c.document, c.variables, { path: face.path, tenant });
            assert.ok(res.status < 500, `${c.field}: ${res.status} ${res.text.slice(0, 300)}`);
            const codes = (res.body?.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code);
            assert.ok(!codes.includes('INTERNAL'), `${c.field}: an internal error: ${res.text.slice(0, 500)}`);
            for (const m of res.text.matchAll(/"client_secret":"([^"]+)"/g)) returnedSecrets.push(m[1]!);
            if (before && res.body?.errors?.length && res.body?.data?.f == null) {
              const after = await rowWrites(t.db.kysely);
              for (const [table, n] of Object.entries(after)) {
                if (table !== 'refused') assert.equal(n, before[table], `${c.field} answered ${codes.join(',')} but wrote to ${table}`);
              }
            }
          }),
          { numRuns: RUNS },
        );
        await fc.assert(
          fc.asyncProperty(documents, junk, async (document, variables) => {
            const res = await t.gql(token, document, variables as Record<string, unknown>, { path: face.path });
            assert.ok(res.status < 500, `${res.status} ${res.text.slice(0, 300)}`);
          }),
          { numRuns: RUNS / 3 },
        );
        const logged = t.logs.join('\n');
        for (const secret of [ROOT_CLIENT_SECRET, token, ...returnedSecrets]) assert.ok(!logged.includes(secret), 'a secret reached the log');
      });
    }
  });
}
